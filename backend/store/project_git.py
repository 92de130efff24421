"""One bound project's own git repository: read its log and diffs, commit agent-owned changes.

The user's repository is shared with the user, so writes are narrow: a commit is built from
objects (HEAD's tree plus the agent's paths), HEAD's branch moves only if it still points where
we read it, and the index is updated for exactly those paths. Nothing else is staged, no hooks
run, and nothing outside `.git/` objects/refs/index and `.opmem/` is written.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pygit2
from filelock import FileLock, Timeout
from pygit2.enums import DeltaStatus, DiffFind, FileMode, FileStatus, RepositoryState, SortMode

from ..model import Node, OpmemError, Turn
from .tool_paths import tool_written_paths
from .write_replay import Diverged, Expected, Outcome, Unknown, decode, replay_writes

OPMEM_DIR = ".opmem"
EXCLUDE_LINE = "/.opmem/"
AGENT_EMAIL = "agent@opmem.invalid"
_AGENT_NAME = re.compile(r"^agent \((?P<model>.*) via opmem\)$")
_AGENT_SUMMARY = re.compile(r"^\[agent (?P<session>[^\]\s]+)\] turn (?P<turn>\d+):")
_IGNORED_STATUS = FileStatus.IGNORED


class ProjectGitError(OpmemError):
    """A git problem in a bound project; the text names the repository."""


# --------------------------------------------------------------------------------------------
# Records handed to the UI and the memory tools


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """One line of the project log. `paths` is filled only where asked for (linking)."""

    oid: str
    summary: str
    message: str
    author_name: str
    author_email: str
    time: float  # author time, unix seconds
    offset: int  # author UTC offset in minutes
    parents: tuple[str, ...] = ()
    is_agent: bool = False
    model: str = ""  # from `agent (<model> via opmem)`
    session_id: str = ""  # from `[agent <session_id>] turn N:`
    turn: int | None = None
    paths: tuple[str, ...] | None = None

    @property
    def short(self) -> str:
        return self.oid[:7]


@dataclass(frozen=True, slots=True)
class DiffLine:
    origin: str  # "+", "-", " " (context), or "\\" style markers from libgit2 (">", "<", "=")
    content: str
    old_lineno: int
    new_lineno: int


@dataclass(frozen=True, slots=True)
class Hunk:
    header: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[DiffLine, ...]


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str  # the new path (the old one for a deletion)
    old_path: str
    status: str  # A added, M modified, D deleted, R renamed, C copied, T type change
    additions: int
    deletions: int
    binary: bool
    hunks: tuple[Hunk, ...]
    truncated: bool = False  # hunks cut at max_lines_per_file


@dataclass(frozen=True, slots=True)
class CommitDetail:
    commit: CommitInfo
    files: tuple[FileDiff, ...]


@dataclass(frozen=True, slots=True)
class AgentTurnWatch:
    """What the project looked like when a turn started."""

    workdir: str
    head: str | None  # HEAD commit at turn start (None: unborn)
    dirty: frozenset[str]  # repo-relative paths not clean at turn start
    dirty_dirs: tuple[str, ...]  # untracked folders ("dir/"): every path under them is dirty
    started_at: float
    project_id: str = ""

    def was_dirty(self, rel: str) -> bool:
        return rel in self.dirty or any(rel.startswith(d) for d in self.dirty_dirs)


@dataclass(frozen=True, slots=True)
class AgentCommitResult:
    commit: str | None  # the new commit, or None when nothing was committed
    paths: tuple[str, ...] = ()  # repo-relative paths committed (or that would have been)
    skipped: str = ""  # why no commit was made, when there was something to commit
    warning: str = ""  # text for the UI; set when the user must look (dirty paths, index)
    dirty_paths: tuple[str, ...] = ()  # agent paths the user had dirty at turn start
    outside: tuple[str, ...] = ()  # written paths outside this repository (ignored)
    ignored: tuple[str, ...] = ()  # written paths git ignores (never committed)
    turn: int = 0  # the turn number the commit message used
    early_paths: tuple[str, ...] = ()  # dirty only because the agent wrote them before the turn was seen
    changed_outside: tuple[str, ...] = ()  # not what the agent's writes produce: left uncommitted
    unverified: tuple[str, ...] = ()  # what the agent wrote cannot be told: left uncommitted


# --------------------------------------------------------------------------------------------
# Helpers


def _decode(raw: bytes | None) -> str:
    return raw.decode("utf-8", errors="replace") if raw else ""


def _is_agent_name(raw: bytes) -> bool:
    """Cheap test on the raw author name, for filtering long walks."""
    return raw.startswith(b"agent (") and raw.endswith(b" via opmem)")


def _common_dir(repo: pygit2.Repository) -> Path:
    """The shared .git folder (a linked worktree keeps info/exclude in the main one)."""
    gitdir = Path(repo.path)
    marker = gitdir / "commondir"
    if marker.is_file():
        target = marker.read_text(encoding="utf-8").strip()
        return (gitdir / target).resolve() if not os.path.isabs(target) else Path(target)
    return gitdir


def ensure_excluded(repo: pygit2.Repository) -> bool:
    """Add `/.opmem/` to .git/info/exclude once, so `git status` never lists opmem's folder."""
    exclude = _common_dir(repo) / "info" / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        text = ""
    lines = {line.strip() for line in text.splitlines()}
    if EXCLUDE_LINE in lines or ".opmem/" in lines or ".opmem" in lines:
        return False
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = "" if not text or text.endswith("\n") else "\n"
    with open(exclude, "a", encoding="utf-8") as fh:
        fh.write(f"{prefix}# opmem keeps in-project session repos here\n{EXCLUDE_LINE}\n")
    return True


def commit_info(commit: pygit2.Commit, paths: tuple[str, ...] | None = None) -> CommitInfo:
    author = commit.author
    name = _decode(author.raw_name)
    message = _decode(commit.raw_message)
    summary = message.split("\n", 1)[0].strip()
    agent = _AGENT_NAME.match(name)
    tagged = _AGENT_SUMMARY.match(summary) if agent else None
    return CommitInfo(
        oid=str(commit.id),
        summary=summary,
        message=message,
        author_name=name,
        author_email=_decode(author.raw_email),
        time=float(author.time),
        offset=author.offset,
        parents=tuple(str(p) for p in commit.parent_ids),
        is_agent=agent is not None,
        model=agent.group("model") if agent else "",
        session_id=tagged.group("session") if tagged else "",
        turn=int(tagged.group("turn")) if tagged else None,
        paths=paths,
    )


def agent_signature(model: str) -> pygit2.Signature:
    model = re.sub(r"[<>\n\r]", "", model or "unknown model").strip() or "unknown model"
    return pygit2.Signature(f"agent ({model} via opmem)", AGENT_EMAIL)


def agent_message(session_id: str, turn: int, user_message: str) -> str:
    first = " ".join((user_message or "").split())[:60]
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


# --------------------------------------------------------------------------------------------


class ProjectGit:
    """Read and write one project repository. Cheap to build; the Repository is opened lazily."""

    def __init__(self, workdir: str | os.PathLike[str], *, project_id: str = "") -> None:
        self.workdir = Path(workdir)
        self.project_id = project_id
        self._repo: pygit2.Repository | None = None
        # Continuations of recent log walks: (cursor oid, agent_only) -> the walker past it.
        self._walks: OrderedDict[tuple[str, bool], pygit2.Walker] = OrderedDict()

    # -- opening ------------------------------------------------------------------------------

    @property
    def repo(self) -> pygit2.Repository:
        if self._repo is None:
            try:
                repo = pygit2.Repository(str(self.workdir))
            except (pygit2.GitError, KeyError) as exc:
                raise ProjectGitError(f"{self.workdir}: not a git repository ({exc})") from None
            if repo.is_bare or not repo.workdir:
                raise ProjectGitError(f"{self.workdir}: a bare repository has no files to bind")
            self._repo = repo
        return self._repo

    @property
    def root(self) -> Path:
        return Path(self.repo.workdir)

    def _head_oid(self) -> pygit2.Oid | None:
        repo = self.repo
        if repo.head_is_unborn:
            return None
        try:
            return repo.head.target
        except pygit2.GitError:
            return None

    def _lock(self) -> FileLock:
        folder = self.root / OPMEM_DIR
        folder.mkdir(exist_ok=True)
        ensure_excluded(self.repo)
        return FileLock(str(folder / "commit.lock"))

    # -- reading ------------------------------------------------------------------------------

    def log(
        self,
        limit: int = 100,
        agent_only: bool = False,
        *,
        after: str | None = None,
        since: float | None = None,
    ) -> list[CommitInfo]:
        """Newest first from HEAD, `limit` commits. Page on with `after=<last oid of a page>`.

        git's default order (by commit date, no topo sort) and no diffs, so the first page of a
        huge history costs only the commits shown. Agent commits are told by their author name.
        """
        if limit <= 0:
            return []
        head = self._head_oid()
        if head is None:
            return []
        walker = None
        if after:
            walker = self._walks.pop((after, agent_only), None)
            if walker is None:
                walker = self._walker(head)
                for commit in walker:  # a cold cursor: skip to it
                    if str(commit.id) == after:
                        break
                else:
                    return []
        else:
            walker = self._walker(head)
        out: list[CommitInfo] = []
        for commit in walker:
            if since is not None and commit.commit_time < since:
                break
            if agent_only and not _is_agent_name(commit.author.raw_name):
                continue
            out.append(commit_info(commit))
            if len(out) >= limit:
                self._walks[(out[-1].oid, agent_only)] = walker
                while len(self._walks) > 8:
                    self._walks.popitem(last=False)
                break
        return out

    def _walker(self, head: pygit2.Oid) -> pygit2.Walker:
        # SortMode.NONE is git's own default order (newest first by commit date, parents queued
        # by date) and streams; TIME uses an unstable heap that misorders commits with equal
        # timestamps (scripted or rebased history), and TOPOLOGICAL reads the whole history first.
        return self.repo.walk(head, SortMode.NONE)

    def resolve(self, rev: str) -> pygit2.Commit:
        try:
            obj = self.repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise ProjectGitError(f"{self.workdir}: no commit {rev!r} ({exc})") from None
        return commit

    def show(self, rev: str, *, context_lines: int = 3, max_lines_per_file: int = 2000) -> CommitDetail:
        """A commit and its changes against its first parent, file by file with hunks."""
        commit = self.resolve(rev)
        repo = self.repo
        if commit.parents:
            diff = repo.diff(commit.parents[0].tree, commit.tree, context_lines=context_lines)
        else:
            diff = commit.tree.diff_to_tree(context_lines=context_lines, swap=True)
        diff.find_similar(DiffFind.FIND_RENAMES)
        files = [self._file_diff(patch, max_lines_per_file) for patch in diff]
        paths = tuple(f.path for f in files)
        return CommitDetail(commit=commit_info(commit, paths), files=tuple(files))

    @staticmethod
    def _file_diff(patch: pygit2.Patch, max_lines: int) -> FileDiff:
        delta = patch.delta
        status = delta.status_char()
        old_path = delta.old_file.path
        new_path = delta.new_file.path
        path = old_path if delta.status == DeltaStatus.DELETED else new_path
        _, additions, deletions = patch.line_stats
        hunks: list[Hunk] = []
        budget = max_lines
        truncated = False
        binary = bool(delta.is_binary)
        if not binary:
            for hunk in patch.hunks:
                if budget <= 0:
                    truncated = True
                    break
                lines = []
                for line in hunk.lines:
                    if budget <= 0:
                        truncated = True
                        break
                    lines.append(DiffLine(line.origin, _decode(line.raw_content), line.old_lineno, line.new_lineno))
                    budget -= 1
                hunks.append(
                    Hunk(
                        header=hunk.header.rstrip("\n"),
                        old_start=hunk.old_start,
                        old_lines=hunk.old_lines,
                        new_start=hunk.new_start,
                        new_lines=hunk.new_lines,
                        lines=tuple(lines),
                    )
                )
        return FileDiff(path, old_path, status, additions, deletions, binary, tuple(hunks), truncated)

    def changed_paths(self, commit: pygit2.Commit) -> tuple[str, ...]:
        """Paths a commit changed against its first parent (no patches are generated)."""
        if commit.parents:
            diff = self.repo.diff(commit.parents[0].tree, commit.tree)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        out: dict[str, None] = {}
        for delta in diff.deltas:
            out.setdefault(delta.new_file.path or delta.old_file.path, None)
            if delta.old_file.path:
                out.setdefault(delta.old_file.path, None)
        return tuple(out)

    def commits_between(self, since: float, until: float, *, slack: float = 3600.0) -> list[CommitInfo]:
        """Commits on any branch with author time in [since, until], with their changed paths."""
        repo = self.repo
        tips = set()
        head = self._head_oid()
        if head is not None:
            tips.add(head)
        for name in repo.listall_references():
            if not name.startswith("refs/heads/"):
                continue
            try:
                tips.add(repo.lookup_reference(name).peel(pygit2.Commit).id)
            except (KeyError, pygit2.GitError, ValueError):
                continue
        if not tips:
            return []
        walker = None
        for tip in tips:
            if walker is None:
                walker = repo.walk(tip, SortMode.NONE)
            else:
                walker.push(tip)
        out = []
        for commit in walker:
            when = commit.author.time
            if commit.commit_time < since - slack:
                break
            if since <= when <= until:
                out.append(commit_info(commit, self.changed_paths(commit)))
        return out

    # -- mapping tool paths into the repository -----------------------------------------------

    def relative(self, path: str) -> str | None:
        """A tool's path as a repo-relative posix path, or None when it lies outside the repo."""
        root = self.root
        roots = dict.fromkeys((os.path.normpath(str(root)), os.path.realpath(str(root))))
        full = path if os.path.isabs(path) else os.path.join(str(root), path)
        # the path as written first: a symlink inside the repo is committed as the link itself
        for candidate in dict.fromkeys((os.path.normpath(full), os.path.realpath(full))):
            for base in roots:
                try:
                    rel = Path(candidate).relative_to(base)
                except ValueError:
                    continue
                text = rel.as_posix()
                if text in ("", ".") or text.split("/", 1)[0] in (".git", OPMEM_DIR):
                    return None
                return text
        return None

    # -- auto-commit --------------------------------------------------------------------------

    def begin_turn(self) -> AgentTurnWatch:
        """Record which paths are dirty now; a turn may only commit paths that were clean."""
        repo = self.repo
        head = self._head_oid()
        dirty: set[str] = set()
        dirs: list[str] = []
        for path, flags in repo.status(untracked_files="normal").items():
            if flags & _IGNORED_STATUS or flags == FileStatus.CURRENT:
                continue
            if path.endswith("/"):
                dirs.append(path)
            else:
                dirty.add(path)
        return AgentTurnWatch(
            workdir=str(self.root),
            head=str(head) if head is not None else None,
            dirty=frozenset(dirty),
            dirty_dirs=tuple(dirs),
            started_at=time.time(),
            project_id=self.project_id,
        )

    def commit_agent_turn(
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
            rel = self.relative(raw)
            if rel is None:
                outside.append(raw)
            else:
                rels.setdefault(rel, None)
        if not rels:
            return AgentCommitResult(None, outside=tuple(outside))
        repo = self.repo
        ignored = tuple(p for p in rels if self._ignored(p))
        paths = tuple(p for p in rels if p not in ignored)
        if not paths:
            return AgentCommitResult(None, outside=tuple(outside), ignored=ignored)
        dirty = tuple(p for p in paths if watch.was_dirty(p))
        if dirty:
            return self._dirty_result(facts, paths, dirty, early, tuple(outside), ignored)
        if repo.state() != RepositoryState.NONE:
            warning = (
                f"{self.root} is in the middle of a merge/rebase/cherry-pick; turn {facts.number} of "
                f"session {facts.session_id} was not committed"
            )
            return AgentCommitResult(None, paths, "repository busy", warning, (), tuple(outside), ignored)
        expected = replay_writes(nodes, relative=self.relative, base=self._reader(watch.head))
        try:
            with self._lock().acquire(timeout=lock_timeout):
                return self._commit_locked(paths, expected, facts, tuple(outside), ignored)
        except Timeout:
            warning = f"{self.root}: another session held the commit lock for {lock_timeout:.0f}s"
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
            f"nothing was committed in {self.root}"
        )
        skipped = "dirty at turn start" if users else "written before the turn was seen"
        return AgentCommitResult(None, paths, skipped, warning, dirty, outside, ignored, early_paths=agents)

    def _ignored(self, rel: str) -> bool:
        """Ignored and untracked: build output and the like, never committed for the agent."""
        try:
            if not self.repo.path_is_ignored(rel):
                return False
            index = self.repo.index
            index.read(False)
            return rel not in index
        except pygit2.GitError:
            return False

    def _reader(self, head: str | None) -> Callable[[str], bytes | None]:
        """A path's content in commit `head` (the turn-start content of a clean path)."""
        try:
            tree = self.repo[head].peel(pygit2.Commit).tree if head is not None else None
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

    def _agent_made(self, rel: str, entry: tuple[pygit2.Oid, int] | None, outcome: Outcome | None) -> Outcome:
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
        try:
            text = decode(self.repo[entry[0]].data)
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
        repo = self.repo
        head = self._head_oid()  # re-read: another session may have committed meanwhile
        base_tree = repo[head].peel(pygit2.Commit).tree if head is not None else None
        changes: dict[str, tuple[pygit2.Oid, int] | None] = {}
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
        tree = _write_tree(repo, base_tree, changes)
        author = agent_signature(facts.model)
        try:
            committer = repo.default_signature
        except (KeyError, pygit2.GitError):
            committer = author
        message = agent_message(facts.session_id, facts.number, facts.user_text)
        parents = [head] if head is not None else []
        try:
            oid = repo.create_commit("HEAD", author, committer, message, tree, parents)
        except pygit2.GitError as exc:
            warning = f"{self.root}: could not commit turn {facts.number} of session {facts.session_id} ({exc})"
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

    def _worktree_entry(self, rel: str) -> tuple[pygit2.Oid, int] | None:
        full = self.root / rel
        try:
            st = full.lstat()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        if stat_mod.S_ISLNK(st.st_mode):
            return self.repo.create_blob(os.fsencode(os.readlink(full))), int(FileMode.LINK)
        if not stat_mod.S_ISREG(st.st_mode):
            return None  # a folder or a device: nothing a tool path should commit
        oid = self.repo.create_blob_fromworkdir(rel)  # applies .gitattributes filters, like git add
        mode = FileMode.BLOB_EXECUTABLE if st.st_mode & 0o111 else FileMode.BLOB
        return oid, int(mode)

    def _update_index(self, changes: dict[str, tuple[pygit2.Oid, int] | None]) -> str:
        """Make the index agree with the new commit for exactly these paths."""
        try:
            index = self.repo.index
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
                f"{self.root}: the agent's commit was made but the index could not be updated ({exc}); "
                f"`git reset -- <path>` on {', '.join(changes)} clears the difference"
            )
        return ""


def _tree_entry(tree: pygit2.Tree | None, rel: str) -> tuple[pygit2.Oid, int] | None:
    if tree is None:
        return None
    try:
        obj = tree[rel]
    except KeyError:
        return None
    if obj.filemode == FileMode.TREE:
        return None
    return obj.id, int(obj.filemode)


def _write_tree(
    repo: pygit2.Repository,
    tree: pygit2.Tree | None,
    changes: dict[str, tuple[pygit2.Oid, int] | None],
) -> pygit2.Oid:
    """`tree` with `changes` applied (None deletes), rebuilding only the folders on those paths."""
    oid = _write_subtree(repo, tree, changes)
    return oid if oid is not None else repo.TreeBuilder().write()


def _write_subtree(repo, tree, changes) -> pygit2.Oid | None:
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, tuple[pygit2.Oid, int] | None]] = {}
    for path, entry in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = entry
        elif entry is None:
            if builder.get(head) is not None:
                builder.remove(head)
        else:
            builder.insert(head, entry[0], entry[1])
    for name, sub in nested.items():
        existing = builder.get(name)
        subtree = repo[existing.id] if existing is not None and existing.filemode == FileMode.TREE else None
        oid = _write_subtree(repo, subtree, sub)
        if oid is None:
            if existing is not None and subtree is not None:
                builder.remove(name)
        else:
            builder.insert(name, oid, FileMode.TREE)
    if len(builder) == 0:
        return None
    return builder.write()


def iter_commits(repo_git: ProjectGit, page: int = 300) -> Iterator[CommitInfo]:
    """Every commit from HEAD, a page at a time (for exports and tests)."""
    after = None
    while True:
        batch = repo_git.log(page, after=after)
        yield from batch
        if len(batch) < page:
            return
        after = batch[-1].oid
