"""The git mirror of a session: one commit per turn, a branch per line of retries, HEAD, the index.

The node files are the truth and git is the mirror (ARCHITECTURE §3): a git failure never loses
or blocks a node. Commits are built from raw objects (packwriter), written as one small pack per
flush, and refs are moved after their objects. A mirror found unreadable (missing objects, a ref
to nothing) is marked broken: its operations return empty results, `problems` says so, and
`rebuild()` makes a new one from the node files.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
import weakref
import zlib
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import pygit2

from ..model import Node, OpmemError
from .commit_text import commit_message, trailers
from .conversation import Conversation
from .git_index import index_bytes, write_index
from .git_init import init_session_git, open_session_git
from .node_log import NodeLog, node_id_from_file_name
from .packs import Packs
from .packwriter import (
    BLOB,
    COMMIT,
    MODE_BLOB,
    MODE_TREE,
    TREE,
    MergeRefused,
    last_entry_name,
    object_id,
    parse_tree,
    tree_entry,
    write_known_pack,
)

GIT_NAME = "opmem"
GIT_EMAIL = "opmem@localhost"

# What pygit2 raises when the mirror's objects or refs are missing or unreadable.
GIT_ERRORS = (KeyError, ValueError, pygit2.GitError, zlib.error)
_T = TypeVar("_T")
MetaForCommit = Callable[[str, int], bytes]  # (turn end, turn number) -> meta.json as committed


def mirror_op(default: Callable[[], Any]) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """A mirror operation: on a broken mirror (or when it breaks now) it returns `default()`."""

    def wrap(fn: Callable[..., _T]) -> Callable[..., _T]:
        @wraps(fn)
        def run(self: GitMirror, *args: Any, **kwargs: Any) -> _T:
            if self.broken:
                return default()
            try:
                return fn(self, *args, **kwargs)
            except GIT_ERRORS as exc:
                self.failed(exc)
                return default()

        return run

    return wrap


def branch_name(text: str) -> str:
    """A git-legal ref name from a node id (ids may hold ':' or '..', which git refuses)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    name = re.sub(r"\.{2,}", ".", name).strip(".-")
    while name.endswith(".lock"):
        name = name[: -len(".lock")]
    return name[:100] or "retry"


class GitMirror:
    """`.git` of one session folder, kept in step with its conversation."""

    def __init__(
        self, path: Path, graph: Conversation, log: NodeLog, meta_for_commit: MetaForCommit, *, pack_threshold: int
    ) -> None:
        self.path = path
        self.git_dir = path / ".git"
        self.graph = graph
        self.log = log
        self._meta_for_commit = weakref.WeakMethod(meta_for_commit)  # the repo owns this mirror
        self.packs = Packs(self.git_dir, pack_threshold)
        self.mutations = 0  # pack merges and rebuilds: the store publishes a change
        self.grouping = False  # inside a batch: commits wait for flush_pending
        # When a dict: each node a commit covers first -> (turn number, commit), as written
        # (the mirror backlog hands it to the search index, which then reads nothing).
        self.written_turns: dict[str, tuple[int, str]] | None = None
        self.reset()

    def reset(self) -> None:
        self._git: pygit2.Repository | None = None
        self._disk_tips: dict[str, str] | None = None  # branch -> tip as on disk, while this use lasts
        self._commits: dict[str, str] | None = None  # turn-end node id -> newest commit
        self._turn_no: dict[str, int] = {}  # commit oid -> turn number
        self._commit_history: dict[str, str] = {}  # commit oid -> its history tree oid
        self._tree_cache: dict[str, bytes] = {}
        self._pending: list[tuple[int, bytes, bytes]] = []  # objects (type, raw, id) of commits not yet written
        self._pending_trees: dict[str, bytes] = {}
        self._pending_refs: dict[str, str] = {}
        self._pending_head: str | None = None
        self.skip_from: int | None = None  # during backfill: nodes from this seq on belong to a live writer
        self.index_dirty = False
        self.broken: str | None = None
        self.problems: list[str] = []

    def forget_reads(self) -> None:
        """Another process may have committed or packed: read refs and objects afresh."""
        self._commits = None
        self._git = None
        self._disk_tips = None

    def failed(self, exc: BaseException) -> None:
        """Stop using a mirror that cannot be read: drop what waits to be written, say so once."""
        if self.broken:
            return
        self.broken = f"{self.git_dir}: the git mirror cannot be read ({type(exc).__name__}: {exc})"
        self.problems.append(f"{self.broken}; `opmem verify` rebuilds it from the node files")
        self._pending, self._pending_trees, self._pending_refs, self._pending_head = [], {}, {}, None
        self.forget_reads()

    # ------------------------------------------------------------------ the repository

    def exists(self) -> bool:
        return self.git_dir.is_dir()

    def init(self) -> None:
        if self.git_dir.exists():
            return
        self._git = init_session_git(self.path)

    def repo(self) -> pygit2.Repository:
        if self._git is None:
            if not self.exists():
                self.init()
            if self._git is None:
                self._git = open_session_git(self.path)
        return self._git

    def tips(self) -> dict[str, str]:
        if self._disk_tips is None:  # read once a use (a backfill asked per commit); our ref writes keep it
            repo = self.repo()
            disk: dict[str, str] = {}
            for name in repo.branches.local:
                ref = repo.references.get(f"refs/heads/{name}")
                if ref is not None:
                    disk[name] = str(ref.resolve().target)
            self._disk_tips = disk
        tips = dict(self._disk_tips)
        tips.update(self._pending_refs)
        return tips

    def commit_map(self) -> dict[str, str]:
        if self._commits is not None:
            return self._commits
        commits: dict[str, str] = {}
        self._turn_no = {}
        repo = self.repo()
        tips = self.tips()
        if tips:
            walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
            for oid in set(tips.values()):
                walker.push(pygit2.Oid(hex=oid))
            for commit in walker:
                head, turn = trailers(commit.message)
                oid = str(commit.id)
                self._turn_no[oid] = turn
                if head is not None and head not in commits:
                    commits[head] = oid  # topological order: the newest commit of a head wins
        self._commits = commits
        return commits

    @mirror_op(dict)
    def turn_commits(self) -> dict[str, str]:
        """Turn-end node id -> its commit ({} without a mirror or with a broken one)."""
        return self.commit_map() if self.exists() else {}

    def covered_node_ids(self) -> set[str]:
        """Node ids that some branch tip's tree holds (every commit is an ancestor of a tip)."""
        self.flush_pending()
        if not self.exists() or self.broken:
            return set()
        repo = self.repo()
        covered: set[str] = set()
        for oid in set(self.tips().values()):
            tree = repo[oid].peel(pygit2.Tree)
            if "history" not in tree:
                continue
            for entry in tree["history"].peel(pygit2.Tree):
                nid = node_id_from_file_name(entry.name)
                if nid:
                    covered.add(nid)
        return covered

    # ------------------------------------------------------------------ commits

    @mirror_op(lambda: None)
    def commit(self, end: str) -> str | None:
        """Commit the turn ending at message `end` (and what its line lacks before it)."""
        return self._commit_at(end)

    def _commit_at(self, end: str) -> str | None:
        nodes = self.graph.nodes
        commits = self.commit_map()
        segment: list[str] = []
        cur: str | None = end
        while cur is not None and cur not in commits:
            segment.append(cur)
            parent = nodes[cur].parent_id
            cur = parent if parent in nodes else None
        base_head = cur
        parent_oid = commits.get(base_head) if base_head is not None else None
        base_history_oid = self._history_tree_of(parent_oid) if parent_oid else None
        base_raw = self.tree_raw(base_history_oid) if base_history_oid is not None else b""

        new_nodes = [nodes[c] for c in segment]
        tool_callers = list(segment)
        if base_head is not None:
            tool_callers.extend(n.id for n in self.graph.turn_chain(base_head))
        for caller in tool_callers:
            for tool in self.graph.tool_tree(caller):
                if self.skip_from is not None and tool.seq >= self.skip_from:
                    continue  # a live writer's tool result: its own commit takes it
                if not base_raw or (b" " + tool.file_name.encode() + b"\0") not in base_raw:
                    new_nodes.append(tool)
        if not new_nodes:
            return None

        objects: list[tuple[int, bytes, bytes]] = []  # (type, raw, id): each hashed once
        history_raw = self._history_tree(base_raw, new_nodes, objects)
        history_oid = object_id(TREE, history_raw)
        objects.append((TREE, history_raw, history_oid))

        turn_no = self._turn_no.get(parent_oid, 0) if parent_oid else 0
        # Turn N counts user nodes; a commit of only a system preface is turn 0.
        turn_no += sum(1 for c in segment if nodes[c].role == "user")
        meta_for_commit = self._meta_for_commit()
        assert meta_for_commit is not None, "the session repo is gone"
        meta_raw = meta_for_commit(end, turn_no)
        meta_oid = object_id(BLOB, meta_raw)
        objects.append((BLOB, meta_raw, meta_oid))
        root_raw = tree_entry(MODE_TREE, "history", history_oid) + tree_entry(MODE_BLOB, "meta.json", meta_oid)
        root_oid = object_id(TREE, root_raw)
        objects.append((TREE, root_raw, root_oid))

        chain = self.graph.turn_chain(end)
        message = commit_message(turn_no, end, chain, [t for c in chain for t in self.graph.tool_tree(c.id)])
        ident = f"{GIT_NAME} <{GIT_EMAIL}> {int(time.time())} +0000".encode()
        commit_raw = b"tree " + root_oid.hex().encode() + b"\n"
        if parent_oid:
            commit_raw += b"parent " + parent_oid.encode() + b"\n"
        # "replace": a lone surrogate in the user's text (valid in a JSON transcript) becomes "?" here
        commit_raw += b"author " + ident + b"\ncommitter " + ident + b"\n\n" + message.encode("utf-8", "replace")
        commit_oid = object_id(COMMIT, commit_raw)
        objects.append((COMMIT, commit_raw, commit_oid))
        oid = commit_oid.hex()

        self._pending.extend(objects)
        self._pending_trees[history_oid.hex()] = history_raw
        self._commit_history[oid] = history_oid.hex()
        branch = self._choose_branch(self.tips(), parent_oid, segment)
        self._pending_refs[branch] = oid
        head = self.graph.head
        if head is not None and (head == end or self.graph.is_ancestor(end, head)):
            self._pending_head = branch
        commits[end] = oid
        self._turn_no[oid] = turn_no
        if self.written_turns is not None:  # its line's nodes and their tool results
            for node in new_nodes:
                self.written_turns.setdefault(node.id, (turn_no, oid))
        if not self.grouping:
            self.flush_pending()
        return oid

    def _history_tree(self, base_raw: bytes, new_nodes: list[Node], objects: list[tuple[int, bytes, bytes]]) -> bytes:
        """The raw history/ tree: the parent's plus the new node files (their blobs go to `objects`)."""
        added: list[tuple[bytes, bytes]] = []
        for node in new_nodes:
            data = self.log.bytes_of(node)
            blob_oid = object_id(BLOB, data)
            objects.append((BLOB, data, blob_oid))
            added.append((node.file_name.encode(), blob_oid))
        added.sort()
        if base_raw and added[0][0] <= last_entry_name(base_raw):
            merged = {name: (mode, oid) for mode, name, oid in parse_tree(base_raw)}
            for name, oid in added:
                merged[name] = (MODE_BLOB, oid)
            return b"".join(m + b" " + n + b"\0" + o for n, (m, o) in sorted(merged.items()))
        # the usual case: new nodes sort after every node already in the tree
        return base_raw + b"".join(MODE_BLOB + b" " + n + b"\0" + o for n, o in added)

    @mirror_op(lambda: None)
    def flush_pending(self) -> None:
        """Write the commits made since the last flush: one pack, then refs, then HEAD.

        Inside a batch every turn commit waits here, so importing a session writes one pack
        instead of one per turn. The pack is not fsynced, like git's own objects: the node files
        are the truth, and a commit lost in a crash is rebuilt from them (backfill).
        """
        if not self._pending:
            return
        objects, self._pending = self._pending, []
        write_known_pack(self.packs.pack_dir, objects, durable=False)
        for key, raw in self._pending_trees.items():
            self._remember_tree(key, raw)
        self._pending_trees = {}
        refs, self._pending_refs = self._pending_refs, {}
        for branch, oid in refs.items():
            self._set_ref(branch, oid)
            if self._disk_tips is not None:
                self._disk_tips[branch] = oid
        head, self._pending_head = self._pending_head, None
        if head is not None:
            self.checkout(head)
        self._merge_packs()

    def _history_tree_of(self, commit_oid: str) -> str | None:
        known = self._commit_history.get(commit_oid)
        if known is not None:
            return known
        try:
            tree = self.repo()[commit_oid].peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if "history" not in tree:
            return None
        oid = str(tree["history"].id)
        self._commit_history[commit_oid] = oid
        return oid

    def tree_raw(self, oid: Any) -> bytes:
        key = str(oid)
        raw = self._pending_trees.get(key) or self._tree_cache.get(key)
        if raw is None:
            raw = self.repo().odb.read(pygit2.Oid(hex=key))[1]
            self._remember_tree(key, raw)
        return raw

    def _remember_tree(self, key: str, raw: bytes) -> None:
        self._tree_cache[key] = raw
        while len(self._tree_cache) > 4:
            self._tree_cache.pop(next(iter(self._tree_cache)))

    # ------------------------------------------------------------------ refs, HEAD and the index

    def _set_ref(self, branch: str, oid: str) -> None:
        path = self.git_dir / "refs" / "heads" / branch
        if not path.is_file():
            self._create_ref(branch, oid)
            return
        # git's own protocol: write `<ref>.lock`, rename it over the ref. A lock-free reader
        # sees the old ref or the new one, never a torn id; no reflog entry (as before).
        lock = path.with_name(f"{branch}.lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            # We hold the session's lock, so no other opmem writer is updating this ref: the lock
            # file is a writer's killed mid-update, and would fail every later commit of the branch.
            lock.unlink()
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, (oid + "\n").encode())
        finally:
            os.close(fd)
        os.replace(lock, path)

    def _create_ref(self, branch: str, oid: str) -> None:
        try:
            self.repo().references.create(f"refs/heads/{branch}", pygit2.Oid(hex=oid), force=True)
        except (pygit2.GitError, OSError):
            stale = self.git_dir / "refs" / "heads" / f"{branch}.lock"
            if not stale.is_file():
                raise
            # We hold the session's lock, so no other opmem writer is updating this ref: the lock
            # file is a writer's killed mid-update, and would fail every later commit of the branch.
            stale.unlink()
            self.repo().references.create(f"refs/heads/{branch}", pygit2.Oid(hex=oid), force=True)

    def checkout(self, branch: str) -> None:
        """Point HEAD at a branch; the index follows at the next flush_index. Files are never touched."""
        target = f"refs/heads/{branch}"
        try:
            unchanged = (self.git_dir / "HEAD").read_text().strip() == f"ref: {target}"
        except OSError:
            unchanged = False
        if not unchanged:
            self.repo().set_head(target)
        self.index_dirty = True

    def _choose_branch(self, tips: dict[str, str], parent_oid: str | None, segment: list[str]) -> str:
        if parent_oid is None:
            if "main" not in tips:
                return "main"
        else:
            at_parent = [name for name, tip in tips.items() if tip == parent_oid]
            if at_parent:
                try:
                    current = self._pending_head or self.repo().head.shorthand
                except pygit2.GitError:
                    current = None
                if current in at_parent:
                    return current
                return "main" if "main" in at_parent else sorted(at_parent)[0]
        line = [self.graph.nodes[c] for c in reversed(segment)]
        first = next((n for n in line if n.role == "assistant"), line[0] if line else None)
        base = branch_name(f"retry-{first.id if first else uuid.uuid4().hex[:12]}")
        name, k = base, 2
        while name in tips:
            name, k = f"{base}-{k}", k + 1
        return name

    def branch_for(self, node_id: str) -> str | None:
        """The branch whose line holds `node_id`'s newest commit."""
        if not self.exists():
            return None
        commits = self.commit_map()
        tips = self.tips()
        nodes = self.graph.nodes
        cur: str | None = node_id  # the node itself or its nearest committed ancestor
        while cur is not None and cur not in commits:
            cur = nodes[cur].parent_id if cur in nodes else None
        if cur is None:
            return None
        target = commits[cur]
        exact = [name for name, tip in tips.items() if tip == target]
        if exact:
            return "main" if "main" in exact else sorted(exact)[0]
        repo = self.repo()
        for name, tip in sorted(tips.items(), key=lambda kv: kv[0] != "main"):
            if repo.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=target)):
                return name
        return None

    @mirror_op(lambda: None)
    def follow_head(self, head: str) -> None:
        """HEAD to the branch of the session's head node, and the index after it."""
        branch = self.branch_for(head)
        if branch is not None:
            self.checkout(branch)
            self.flush_index()

    def flush_index(self, *, force: bool = False) -> None:
        """Make the git index match HEAD's tree, so `git status` in the session stays quiet.

        Rewriting the index is O(nodes), so it is not done per commit: the repo calls this when a
        write burst ends (a batch) and when the session goes quiet (head switch, packing,
        eviction, flush, close, verify).
        """
        self.flush_pending()
        if not (self.index_dirty or force) or not self.exists() or self.broken:
            return
        try:
            self._write_index()
        except OSError:
            pass  # the index is a convenience for `git status`; the commits are already safe

    @mirror_op(lambda: None)
    def _write_index(self) -> None:
        repo = self.repo()
        if repo.head_is_unborn:
            self.index_dirty = False
            return
        entries: list[tuple[bytes, bytes, bool]] = []
        stack: list[tuple[bytes, Any]] = [(b"", repo.head.peel(pygit2.Commit).tree_id)]
        while stack:
            prefix, oid = stack.pop()
            for mode, name, child in parse_tree(self.tree_raw(oid)):
                if mode == MODE_TREE:
                    stack.append((prefix + name + b"/", pygit2.Oid(raw=child)))
                else:  # meta.json is rewritten between commits: git is told not to look at it
                    entries.append((prefix + name, child, not prefix and name == b"meta.json"))
        if write_index(self.git_dir, index_bytes(entries)):
            self.index_dirty = False

    # ------------------------------------------------------------------ consistency

    def missing_node_ids(self, skip_from: int | None = None) -> set[str]:
        """Nodes no branch covers yet, leaving out those from `skip_from` on (a live writer's)."""
        if not self.graph.nodes:
            return set()
        missing = set(self.graph.nodes) - self.covered_node_ids()
        if skip_from is not None:
            missing = {nid for nid in missing if self.graph.nodes[nid].seq < skip_from}
        return missing

    @mirror_op(int)
    def backfill(self, skip_from: int | None = None, settle: Callable[[str], None] | None = None) -> int:
        """Commit, turn by turn, every node that no branch covers yet. Returns commits made.

        Nodes from seq `skip_from` on are left alone: a live writer is still writing that turn.
        `settle(end)` is told each turn end committed.
        """
        missing = self.missing_node_ids(skip_from)
        if not missing:
            return 0
        ends: set[str] = set()
        for nid in missing:
            ends.update(self.graph.turn_ends(self.graph.chain_root(nid), skip_from))
        made = 0
        grouping, self.grouping = self.grouping, True
        self.skip_from = skip_from
        try:
            for end in sorted(ends, key=lambda e: self.graph.nodes[e].seq):
                if self._commit_at(end):
                    made += 1
                if settle is not None:
                    settle(end)
        finally:
            self.grouping = grouping
            self.skip_from = None
        if not grouping:
            self.flush_pending()
        if self.graph.head is not None:
            branch = self.branch_for(self.graph.head)
            if branch:
                self.checkout(branch)
        self.flush_index()
        return made

    def rebuild(self, skip_from: int | None = None, settle: Callable[[str], None] | None = None) -> int:
        """Replace a broken mirror by one built from the node files. Returns the commits made."""
        aside = self.path / f".git-broken-{uuid.uuid4().hex[:8]}"
        if self.git_dir.exists():
            os.replace(self.git_dir, aside)
        grouping = self.grouping
        self.reset()
        self.grouping = grouping
        self.init()
        made = self.backfill(skip_from, settle)
        if self.broken:  # the rebuild failed too: put the old mirror back for inspection
            reason = self.broken
            shutil.rmtree(self.git_dir, ignore_errors=True)
            if aside.exists():
                os.replace(aside, self.git_dir)
            raise MirrorRebuildFailed(f"{self.path}: rebuilding the git mirror failed: {reason}")
        shutil.rmtree(aside, ignore_errors=True)
        self.flush_index(force=True)
        self.mutations += 1
        return made

    # ------------------------------------------------------------------ packs

    def _merge_packs(self) -> None:
        try:
            merged = self.packs.merge_if_due(self._history_base)
        except MergeRefused:
            self.repack()
            return
        if merged:
            self.mutations += 1
            self._git = None

    def _history_base(self, commit_raw: bytes) -> tuple[bytes, bytes] | None:
        """The history tree (oid, raw) of the parent of a commit given raw, if it has one."""
        for line in commit_raw.split(b"\n"):
            if line.startswith(b"parent "):
                try:
                    parent = self.repo()[line[7:].decode()].peel(pygit2.Commit)
                    tree_id = parent.tree["history"].id
                except (KeyError, ValueError, pygit2.GitError):
                    return None
                return tree_id.raw, self.tree_raw(tree_id)
            if not line:
                break
        return None

    @mirror_op(int)
    def repack(self) -> int:
        """Pack every object with deltas into one pack, then drop loose objects and old packs."""
        self.flush_pending()
        if not self.exists():
            return 0
        self.mutations += 1
        written = self.packs.repack(self.repo())
        self._git = None
        self.flush_index()
        return written


class MirrorRebuildFailed(OpmemError):
    pass
