"""Auto-commit of one agent turn in a bound project (ARCHITECTURE §4).

The user's repository is shared with the user, so writes are narrow: a commit is built from
objects (HEAD's tree plus the agent's paths), HEAD's branch moves only if it still points where
we read it, and the index is updated for exactly those paths. Nothing else is staged, no hooks
run, and nothing outside `.git/` objects/refs/index and `.opmem/` is written.

A path is committed only when it was clean at turn start and its content now is what the
agent's own writes produce (write_replay.py). Every object a commit names is checked to exist
with the right type before it is written (what libgit2's strict object creation checks), so the
user's repository gets those checks whatever the process-wide pygit2 setting is.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import pygit2
from filelock import FileLock, Timeout
from pygit2.enums import FileMode, FileStatus, ObjectType, RepositoryState

from ..model import Node, Turn
from ..privacy import redact_text
from .commit_marker import clear_interrupted_write, marked_write
from .records import AgentCommitResult, AgentTurnWatch
from .repository import OPMEM_DIR, ProjectGit, ProjectGitError, ensure_excluded
from .tool_paths import tool_written_paths
from .write_replay import Diverged, Expected, Outcome, Unknown, decode, replay_writes

AGENT_EMAIL = "agent@opmem.invalid"

Entry = tuple[pygit2.Oid, int]  # a tree entry: object id and file mode


def agent_signature(model: str) -> pygit2.Signature:
    model = re.sub(r"[<>\n\r]", "", model or "unknown model").strip() or "unknown model"
    return pygit2.Signature(f"agent ({model} via opmem)", AGENT_EMAIL)


def agent_message(session_id: str, turn: int, user_message: str) -> str:
    # the user's own repository, maybe pushed: the prompt's secrets masked before it is cut
    first = " ".join(redact_text(user_message or "").split())[:60]
    return f"[agent {session_id}] turn {turn}: {first}\n\nOpmem-Session: {session_id}\nOpmem-Turn: {turn}\n"


def _turn_facts(turn: Turn | Sequence[Node]) -> tuple[tuple[Node, ...], int | None, str, str]:
    """Nodes, turn number, user text and model of a Turn or a plain list of nodes."""
    if isinstance(turn, Turn):
        nodes, number = turn.nodes, turn.number
    else:
        nodes, number = tuple(turn), None
    user = next((n.content for n in nodes if n.role == "user"), "")
    model = ""
    for node in nodes:
        if node.role == "assistant":
            value = node.metadata.get("model") if node.metadata else None
            model = value if isinstance(value, str) and value else (node.name or model)
            if model:
                break
    return nodes, number, user, model


@dataclass(frozen=True, slots=True)
class _TurnFacts:
    session_id: str
    number: int
    user_text: str
    model: str


def _shown(paths: Sequence[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _refused_warning(facts: _TurnFacts, refused: Mapping[str, Outcome], committed: bool) -> str:
    """Why some written files were left out of the agent's commit."""
    if not refused:
        return ""
    outside = [p for p, v in refused.items() if isinstance(v, Diverged)]
    unknown = [(p, v.reason) for p, v in refused.items() if isinstance(v, Unknown)]
    parts = []
    if outside:
        parts.append(
            f"{_shown(outside)} changed outside the agent during the turn (the content is not what "
            "the agent's own writes produce)"
        )
    if unknown:
        parts.append(f"what the agent wrote to {_shown([p for p, _ in unknown])} cannot be told ({unknown[0][1]})")
    rest = "the rest of the turn was committed" if committed else "nothing was committed"
    return (
        f"turn {facts.number} of session {facts.session_id}: {'; '.join(parts)}, so "
        f"{'it was' if len(refused) == 1 else 'they were'} left uncommitted; {rest}"
    )


class AgentCommitter:
    """Commits agent turns in one project repository (a ProjectGit)."""

    def __init__(self, git: ProjectGit) -> None:
        self.git = git

    def _lock(self) -> FileLock:
        folder = self.git.root / OPMEM_DIR
        folder.mkdir(exist_ok=True)
        ensure_excluded(self.git.repo)
        return FileLock(str(folder / "commit.lock"))

    def recover(self, lock_timeout: float = 10.0) -> list[str]:
        """Remove the git locks an agent commit killed midway left in the repository; the paths removed."""
        try:
            with self._lock().acquire(timeout=lock_timeout):
                return self.recover_locked()
        except Timeout:
            return []  # a live opmem writer holds it: nothing of ours is stale

    def recover_locked(self) -> list[str]:
        return clear_interrupted_write(self.git.repo, self.git.root / OPMEM_DIR)

    def begin_turn(self) -> AgentTurnWatch:
        """Record which paths are dirty now; a turn may only commit paths that were clean."""
        repo = self.git.repo
        head = self.git.head_oid()
        dirty: set[str] = set()
        dirs: list[str] = []
        for path, flags in repo.status(untracked_files="normal").items():
            if flags & FileStatus.IGNORED or flags == FileStatus.CURRENT:
                continue
            if path.endswith("/"):
                dirs.append(path)
            else:
                dirty.add(path)
        return AgentTurnWatch(
            workdir=str(self.git.root),
            head=str(head) if head is not None else None,
            dirty=frozenset(dirty),
            dirty_dirs=tuple(dirs),
            started_at=time.time(),
            project_id=self.git.project_id,
        )

    def commit_turn(
        self,
        watch: AgentTurnWatch,
        turn: Turn | Sequence[Node],
        *,
        session_id: str,
        turn_number: int | None = None,
        user_message: str | None = None,
        model: str | None = None,
        early: Collection[str] = (),
        lock_timeout: float = 60.0,
    ) -> AgentCommitResult:
        """Commit the paths this turn's tools wrote, if all were clean at turn start, each one only
        when its content is what the agent's own writes produce.

        early: repo-relative paths the agent wrote before `watch` was taken (a fast agent), so
        they were dirty at turn start because of the agent, not the user.
        """
        nodes, found_number, user_text, found_model = _turn_facts(turn)
        number = turn_number if turn_number is not None else (found_number or 0)
        facts = _TurnFacts(
            session_id, number, user_message if user_message is not None else user_text, model or found_model
        )
        result = self._commit_agent_turn(watch, nodes, facts, frozenset(early), lock_timeout)
        return replace(result, turn=number)

    def _commit_agent_turn(
        self,
        watch: AgentTurnWatch,
        nodes: Sequence[Node],
        facts: _TurnFacts,
        early: frozenset[str],
        lock_timeout: float,
    ) -> AgentCommitResult:
        rels: dict[str, None] = {}
        outside: list[str] = []
        for raw in tool_written_paths(nodes):
            rel = self.git.relative(raw)
            if rel is None:
                outside.append(raw)
            else:
                rels.setdefault(rel, None)
        if not rels:
            return AgentCommitResult(None, outside=tuple(outside))
        repo = self.git.repo
        ignored = tuple(p for p in rels if self._ignored(p))
        paths = tuple(p for p in rels if p not in ignored)
        if not paths:
            return AgentCommitResult(None, outside=tuple(outside), ignored=ignored)
        dirty = tuple(p for p in paths if watch.was_dirty(p))
        if dirty:
            return self._dirty_result(facts, paths, dirty, early, tuple(outside), ignored)
        if repo.state() != RepositoryState.NONE:
            warning = (
                f"{self.git.root} is in the middle of a merge/rebase/cherry-pick; turn {facts.number} of "
                f"session {facts.session_id} was not committed"
            )
            return AgentCommitResult(None, paths, "repository busy", warning, (), tuple(outside), ignored)
        expected = replay_writes(nodes, relative=self.git.relative, base=self._reader(watch.head))
        try:
            with self._lock().acquire(timeout=lock_timeout):
                self.recover_locked()
                return self._commit_locked(paths, expected, facts, tuple(outside), ignored)
        except Timeout:
            warning = f"{self.git.root}: another session held the commit lock for {lock_timeout:.0f}s"
            return AgentCommitResult(None, paths, "lock timeout", warning, (), tuple(outside), ignored)

    def _dirty_result(
        self,
        facts: _TurnFacts,
        paths: tuple[str, ...],
        dirty: tuple[str, ...],
        early: frozenset[str],
        outside: tuple[str, ...],
        ignored: tuple[str, ...],
    ) -> AgentCommitResult:
        """No commit: some paths were not clean at turn start; say whose changes they held."""
        agents = tuple(p for p in dirty if p in early)
        users = tuple(p for p in dirty if p not in early)
        parts = []
        if users:
            parts.append(f"changed files that had your uncommitted changes at turn start ({_shown(users)})")
        if agents:
            parts.append(
                f"wrote {_shown(agents)} before opmem saw the turn's prompt, so what "
                f"{'it' if len(agents) == 1 else 'they'} held at turn start is unknown"
            )
        warning = (
            f"turn {facts.number} of session {facts.session_id} {'; it also '.join(parts)}; "
            f"nothing was committed in {self.git.root}"
        )
        skipped = "dirty at turn start" if users else "written before the turn was seen"
        return AgentCommitResult(None, paths, skipped, warning, dirty, outside, ignored, early_paths=agents)

    def _ignored(self, rel: str) -> bool:
        """Ignored and untracked: build output and the like, never committed for the agent."""
        try:
            if not self.git.repo.path_is_ignored(rel):
                return False
            index = self.git.repo.index
            index.read(False)
            return rel not in index
        except pygit2.GitError:
            return False

    def _reader(self, head: str | None) -> Callable[[str], bytes | None]:
        """A path's content in commit `head` (the turn-start content of a clean path)."""
        try:
            tree = self.git.repo[head].peel(pygit2.Commit).tree if head is not None else None
        except (KeyError, ValueError, pygit2.GitError):
            tree = None  # then only whole-file writes can be told apart from other changes

        def read(rel: str) -> bytes | None:
            if tree is None:
                return None
            try:
                obj = tree[rel]
            except KeyError:
                return None
            return obj.data if isinstance(obj, pygit2.Blob) else None

        return read

    def _agent_made(self, rel: str, entry: Entry | None, outcome: Outcome | None) -> Outcome:
        """Expected when the file's content (the blob about to be committed) is what the agent's
        writes produce; otherwise why not."""
        if outcome is None:
            return Unknown("no write of it was found")
        if not isinstance(outcome, Expected):
            return outcome
        if entry is None:
            if outcome.text is None:
                return outcome
            return Diverged("the agent wrote it, but it is gone")
        if entry[1] == FileMode.LINK:
            return Unknown("it is a symbolic link; the agent's writes go to its target")
        if outcome.text is None:
            return Diverged("the agent removed it, but it is there")
        if pygit2.hash(outcome.text.encode("utf-8")) == entry[0]:
            return outcome  # the very bytes (the common case: no read-back)
        try:
            text = decode(self.git.repo[entry[0]].data)
        except UnicodeDecodeError:
            return Diverged("it is not the text the agent wrote")
        return outcome if text == outcome.text else Diverged("its content is not what the agent's writes produce")

    def _commit_locked(
        self,
        paths: tuple[str, ...],
        expected: Mapping[str, Outcome],
        facts: _TurnFacts,
        outside: tuple[str, ...],
        ignored: tuple[str, ...],
    ) -> AgentCommitResult:
        repo = self.git.repo
        head = self.git.head_oid()  # re-read: another session may have committed meanwhile
        base_tree = repo[head].peel(pygit2.Commit).tree if head is not None else None
        changes: dict[str, Entry | None] = {}
        refused: dict[str, Outcome] = {}
        for rel in paths:
            entry = self._worktree_entry(rel)
            current = _tree_entry(base_tree, rel)
            if entry == current:
                continue
            verdict = self._agent_made(rel, entry, expected.get(rel))
            if isinstance(verdict, Expected):
                changes[rel] = entry
            else:
                refused[rel] = verdict
        changed_outside = tuple(p for p, v in refused.items() if isinstance(v, Diverged))
        unverified = tuple(p for p, v in refused.items() if isinstance(v, Unknown))
        warning = _refused_warning(facts, refused, bool(changes))
        if not changes:
            return AgentCommitResult(
                None,
                paths,
                "changed outside the agent" if refused else "",
                warning,
                (),
                outside,
                ignored,
                changed_outside=changed_outside,
                unverified=unverified,
            )
        try:
            tree = edit_tree(repo, base_tree, changes)
        except ProjectGitError as exc:
            warning = f"could not commit turn {facts.number} of session {facts.session_id} ({exc})"
            return AgentCommitResult(None, tuple(changes), "commit failed", warning, (), outside, ignored)
        author = agent_signature(facts.model)
        try:
            committer = repo.default_signature
        except (KeyError, pygit2.GitError):
            committer = author
        message = agent_message(facts.session_id, facts.number, facts.user_text)
        parents = [head] if head is not None else []
        with marked_write(repo, self.git.root / OPMEM_DIR):
            try:
                oid = repo.create_commit("HEAD", author, committer, message, tree, parents)
            except pygit2.GitError as exc:
                warning = f"{self.git.root}: could not commit turn {facts.number} of session {facts.session_id} ({exc})"
                return AgentCommitResult(None, tuple(changes), "commit failed", warning, (), outside, ignored)
            index_warning = self._update_index(changes)
        return AgentCommitResult(
            str(oid),
            tuple(changes),
            "",
            "\n".join(w for w in (warning, index_warning) if w),
            (),
            outside,
            ignored,
            changed_outside=changed_outside,
            unverified=unverified,
        )

    def _worktree_entry(self, rel: str) -> Entry | None:
        full = self.git.root / rel
        try:
            st = full.lstat()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        if stat_mod.S_ISLNK(st.st_mode):
            return self.git.repo.create_blob(os.fsencode(os.readlink(full))), int(FileMode.LINK)
        if not stat_mod.S_ISREG(st.st_mode):
            return None  # a folder or a device: nothing a tool path should commit
        oid = self.git.repo.create_blob_fromworkdir(rel)  # applies .gitattributes filters, like git add
        mode = FileMode.BLOB_EXECUTABLE if st.st_mode & 0o111 else FileMode.BLOB
        return oid, int(mode)

    def _update_index(self, changes: dict[str, Entry | None]) -> str:
        """Make the index agree with the new commit for exactly these paths."""
        try:
            index = self.git.repo.index
            index.read(True)
            for rel, entry in changes.items():
                if entry is None:
                    if rel in index:
                        index.remove(rel)
                    continue
                try:
                    index.add(rel)  # stats the file, so `git status` needs no rehash
                except (pygit2.GitError, OSError):
                    index.add(pygit2.IndexEntry(rel, entry[0], entry[1]))
                    continue
                if index[rel].id != entry[0] or index[rel].mode != entry[1]:
                    # changed again since we read it: the index keeps what was committed
                    index.add(pygit2.IndexEntry(rel, entry[0], entry[1]))
            index.write()
        except (pygit2.GitError, OSError) as exc:
            return (
                f"{self.git.root}: the agent's commit was made but the index could not be updated ({exc}); "
                f"`git reset -- <path>` on {', '.join(changes)} clears the difference"
            )
        return ""


def _tree_entry(tree: pygit2.Tree | None, rel: str) -> Entry | None:
    if tree is None:
        return None
    try:
        obj = tree[rel]
    except KeyError:
        return None
    if obj.filemode == FileMode.TREE:
        return None
    return obj.id, int(obj.filemode)


def _check_object(repo: pygit2.Repository, oid: pygit2.Oid, mode: int) -> None:
    """What strict object creation checks: the object exists, with the type its mode says."""
    if mode == FileMode.COMMIT:
        return  # a submodule's commit lives in another repository
    want = ObjectType.TREE if mode == FileMode.TREE else ObjectType.BLOB
    try:
        kind, _size = repo.odb.read_header(oid)
    except (KeyError, pygit2.GitError):
        raise ProjectGitError(f"{repo.workdir}: refusing a tree entry for missing object {oid}") from None
    if kind != want:
        raise ProjectGitError(
            f"{repo.workdir}: refusing a tree entry: {oid} is a {kind.name.lower()}, not a {want.name.lower()}"
        )


def edit_tree(repo: pygit2.Repository, tree: pygit2.Tree | None, changes: Mapping[str, Entry | None]) -> pygit2.Oid:
    """`tree` with `changes` applied (None deletes), rebuilding only the folders on those paths.

    Every entry written is checked (_check_object); ProjectGitError names a bad one.
    """
    oid = _edit_subtree(repo, tree, changes)
    return oid if oid is not None else repo.TreeBuilder().write()


def _insert(repo: pygit2.Repository, builder: pygit2.TreeBuilder, name: str, oid: pygit2.Oid, mode: int) -> None:
    _check_object(repo, oid, mode)
    try:
        builder.insert(name, oid, mode)
    except (pygit2.GitError, ValueError) as exc:
        raise ProjectGitError(f"{repo.workdir}: refusing tree entry {name!r} ({exc})") from None


def _edit_subtree(
    repo: pygit2.Repository, tree: pygit2.Tree | None, changes: Mapping[str, Entry | None]
) -> pygit2.Oid | None:
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, Entry | None]] = {}
    for path, entry in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = entry
        elif entry is None:
            if builder.get(head) is not None:
                builder.remove(head)
        else:
            _insert(repo, builder, head, entry[0], entry[1])
    for name, sub in nested.items():
        existing = builder.get(name)
        subtree = repo[existing.id] if existing is not None and existing.filemode == FileMode.TREE else None
        oid = _edit_subtree(repo, subtree, sub)
        if oid is None:
            if existing is not None and subtree is not None:
                builder.remove(name)
        else:
            _insert(repo, builder, name, oid, FileMode.TREE)
    if len(builder) == 0:
        return None
    return builder.write()
