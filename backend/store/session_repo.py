"""One session: immutable node files (the truth) and their git mirror (one commit per turn).

Not thread-safe on its own: SessionStore serializes access with a per-session lock and a
file lock, and calls `refresh()` when another process may have written.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import pygit2

from ..model import (
    ROLES,
    Branch,
    CorruptFile,
    Node,
    OpmemError,
    SessionMeta,
    Turn,
    TurnCommit,
)
from .files import dump_compact_json, dump_json, read_json_object, write_atomic
from .git_index import index_bytes, write_index
from .packwriter import (
    BLOB,
    COMMIT,
    MODE_BLOB,
    MODE_TREE,
    TREE,
    MergeRefused,
    last_entry_name,
    merge_packs,
    object_id,
    parse_tree,
    tree_entry,
    write_pack,
)
from .writers import new_writer

NODE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
NODE_FILE_RE = re.compile(r"^(\d+)-([uats])-(.+)\.json$")
GIT_NAME = "opmem"
GIT_EMAIL = "opmem@localhost"
TITLE_CHARS = 50
PREVIEW_CHARS = 80

_DEFAULT: Any = object()

# What pygit2 raises when the mirror's objects or refs are missing or unreadable.
GIT_ERRORS = (KeyError, ValueError, pygit2.GitError, zlib.error)
_T = TypeVar("_T")


def mirror_op(default: Callable[[], Any]) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """A git-mirror operation: once the mirror is found broken it returns `default()` instead.

    The node files are the truth, so a broken mirror never blocks a read or a node write; it is
    recorded in `problems` and `opmem verify` rebuilds it.
    """

    def wrap(fn: Callable[..., _T]) -> Callable[..., _T]:
        @wraps(fn)
        def run(self: SessionRepo, *args: Any, **kwargs: Any) -> _T:
            if self.mirror_broken:
                return default()
            try:
                return fn(self, *args, **kwargs)
            except GIT_ERRORS as exc:
                self.mirror_failed(exc)
                return default()

        return run

    return wrap


# We build every tree from entries we just wrote, so libgit2's existence checks on each entry
# only cost time (they made a 2,000-turn commit O(n) lookups).
pygit2.settings.enable_strict_object_creation(False)
pygit2.settings.enable_strict_symbolic_ref_creation(False)


def excerpt(text: str, limit: int) -> str:
    """First non-empty line, whitespace collapsed, cut at `limit` chars with an ellipsis."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= limit else line[:limit].rstrip() + "…"
    return ""


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat[:limit]


def sync_files(paths: list[Path], folder: Path) -> None:
    """fsync many new files at once: one syncfs(2) where Linux has it, else one fsync each."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        fd = -1
    try:
        if fd >= 0 and _syncfs is not None and _syncfs(fd) == 0:
            return
        for path in reversed(paths):  # the first fsync commits the journal holding them all
            try:
                ffd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(ffd)
            finally:
                os.close(ffd)
        if fd >= 0:
            os.fsync(fd)
    finally:
        if fd >= 0:
            os.close(fd)


def _load_syncfs() -> Any:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.syncfs
        fn.argtypes = [ctypes.c_int]
        return fn
    except (OSError, AttributeError):
        return None


_syncfs = _load_syncfs()


def branch_name(text: str) -> str:
    """A git-legal ref name from a node id (ids may hold ':' or '..', which git refuses)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    name = re.sub(r"\.{2,}", ".", name).strip(".-")
    while name.endswith(".lock"):
        name = name[: -len(".lock")]
    return name[:100] or "retry"


def node_id_from_file_name(name: str) -> str | None:
    match = NODE_FILE_RE.match(name)
    return match.group(3) if match else None


class SessionRepo:
    """A session folder: meta.json, history/, context/, workdir/ and .git/."""

    def __init__(self, path: Path, session_id: str, *, pack_threshold: int = 50, durable: bool = True):
        self.path = Path(path)
        self.id = session_id
        self.pack_threshold = pack_threshold
        self.durable = durable
        self.problems: list[str] = []
        self.mutations = 0  # bumped by every write, so the store knows to publish a change
        self._unsynced: list[Path] | None = None  # node files awaiting a group fsync
        self.writer = new_writer(self)  # this writer's token in the in-flight markers
        self.marked_since: int | None = None  # what the marker file says about this writer
        self._own: dict[str, int] = {}  # node id -> seq of nodes this object wrote and has not committed
        self._reset()

    # ------------------------------------------------------------------ state

    def _reset(self) -> None:
        self._nodes: dict[str, Node] = {}
        self._known_files: set[str] = set()
        self._children: dict[str | None, list[str]] = {}
        self._tools: dict[str, list[str]] = {}
        self._max_seq = -1
        self._meta: dict[str, Any] = {}
        self._head: str | None = None
        self._pending_bytes: dict[str, bytes] = {}
        self._git: pygit2.Repository | None = None
        self._commits: dict[str, str] | None = None  # turn-end node id -> newest commit
        self._turn_no: dict[str, int] = {}  # commit oid -> turn number
        self._index_dirty = False
        self._tree_cache: dict[str, bytes] = {}
        self._grouping = False
        self._pending: list[tuple[int, bytes]] = []  # objects of commits not yet written
        self._pending_trees: dict[str, bytes] = {}
        self._pending_refs: dict[str, str] = {}
        self._pending_head: str | None = None
        self._commit_history: dict[str, str] = {}  # commit oid -> its history tree oid
        self._skip_from: int | None = None  # during backfill: nodes from this seq on belong to a live writer
        self.mirror_broken: str | None = None
        self.problems = []

    @property
    def history_dir(self) -> Path:
        return self.path / "history"

    @property
    def meta_path(self) -> Path:
        return self.path / "meta.json"

    def exists(self) -> bool:
        return self.meta_path.is_file()

    def load(self) -> None:
        """Read meta.json and every node file (raises CorruptFile for a bad meta.json)."""
        self._reset()
        if not self.path.is_dir():
            return
        self._meta = read_json_object(self.meta_path)
        self._scan_history()
        self._recover_head()
        # A repo written before opmem kept the index (or by a process killed before it wrote it).
        self._index_dirty = (self.path / ".git").is_dir() and not (self.path / ".git" / "index").exists()

    def refresh(self) -> None:
        """Pick up what another process wrote: new node files, a new meta.json, new refs."""
        if not self.path.is_dir():
            self._reset()
            return
        if not self._meta and not self.meta_path.exists():
            return
        self._meta = read_json_object(self.meta_path)
        self._scan_history()
        self._recover_head()
        self._commits = None
        if self._git is not None:
            self._git = None  # reopen: another process may have packed

    def _scan_history(self) -> None:
        try:
            names = os.listdir(self.history_dir)
        except FileNotFoundError:
            return
        new = [n for n in names if n not in self._known_files and n.endswith(".json") and not n.startswith(".")]
        loaded: list[Node] = []
        for name in new:
            path = self.history_dir / name
            try:
                node = Node.from_json(read_json_object(path), path)
            except CorruptFile as exc:
                self.problems.append(str(exc))
                self._known_files.add(name)
                continue
            self._known_files.add(name)
            if node.id in self._nodes:
                self.problems.append(f"{path}: duplicate node id {node.id!r}")
                continue
            loaded.append(node)
        for node in sorted(loaded, key=lambda n: n.seq):
            self._index(node)

    def _index(self, node: Node) -> None:
        self._nodes[node.id] = node
        self._known_files.add(node.file_name)
        if node.seq > self._max_seq:
            self._max_seq = node.seq
        if node.called_by is not None:
            self._tools.setdefault(node.called_by, []).append(node.id)
        else:
            self._children.setdefault(node.parent_id, []).append(node.id)

    def _recover_head(self) -> None:
        """meta.json's head, moved forward to nodes appended on its line after it was saved."""
        head = self._meta.get("head_id")
        if head not in self._nodes:
            head = None
        mark = self._meta.get("head_seq_mark", -1)
        mark = mark if isinstance(mark, int) else -1
        latest = None
        for node in self._nodes.values():
            if node.called_by is None and node.seq > mark and (latest is None or node.seq > latest.seq):
                latest = node
        if latest is not None and (head is None or self._is_ancestor(head, latest.id)):
            head = latest.id
        self._head = head

    def _is_ancestor(self, ancestor: str, node_id: str) -> bool:
        cur: str | None = node_id
        while cur is not None:
            if cur == ancestor:
                return True
            cur = self._nodes[cur].parent_id if cur in self._nodes else None
        return False

    # ------------------------------------------------------------------ reads

    @property
    def head(self) -> str | None:
        return self._head

    def meta(self) -> SessionMeta:
        return SessionMeta.from_listing(self._meta, self.id, str(self.path))

    def raw_meta(self) -> dict[str, Any]:
        return dict(self._meta)

    def has_node(self, node_id: str) -> bool:
        return node_id in self._nodes

    def node(self, node_id: str) -> Node:
        try:
            return self._nodes[node_id]
        except KeyError:
            raise OpmemError(f"session {self.id}: no node {node_id!r}") from None

    def nodes(self) -> list[Node]:
        return sorted(self._nodes.values(), key=lambda n: n.seq)

    def _chain_node(self, node_id: str) -> str:
        node = self.node(node_id)
        return node.called_by if node.called_by is not None else node.id

    def _path_ids(self, head: str | None) -> list[str]:
        ids: list[str] = []
        cur = head
        seen: set[str] = set()
        while cur is not None:
            if cur in seen:
                raise OpmemError(f"session {self.id}: parent cycle at node {cur!r}")
            seen.add(cur)
            ids.append(cur)
            node = self._nodes.get(cur)
            if node is None:
                break
            cur = node.parent_id if node.parent_id in self._nodes else None
        ids.reverse()
        return ids

    def get_branch(self, head_id: str | None = None) -> list[Node]:
        head = self._chain_node(head_id) if head_id is not None else self._head
        if head is None:
            return []
        out: list[Node] = []
        for cid in self._path_ids(head):
            out.append(self._nodes[cid])
            out.extend(self._tool_tree(cid))
        out.sort(key=lambda n: n.seq)
        return out

    def _tool_tree(self, caller: str) -> list[Node]:
        """Tool nodes of a caller, and tools those tools called (nested agents)."""
        out: list[Node] = []
        stack = list(self._tools.get(caller, ()))
        while stack:
            tid = stack.pop()
            out.append(self._nodes[tid])
            stack.extend(self._tools.get(tid, ()))
        return out

    def leaves(self) -> list[str]:
        return [nid for nid, n in self._nodes.items() if n.called_by is None and not self._children.get(nid)]

    def _leaves_under(self, node_id: str) -> list[str]:
        out: list[str] = []
        stack = [node_id]
        while stack:
            cur = stack.pop()
            kids = self._children.get(cur)
            if kids:
                stack.extend(kids)
            else:
                out.append(cur)
        return sorted(out, key=lambda n: self._nodes[n].seq)

    def turns(self, head_id: str | None = None) -> list[Turn]:
        branch = self.get_branch(head_id)
        if not branch:
            return []
        commits = self._turn_commits()
        on_path = {n.id for n in branch if n.called_by is None}
        groups: list[list[Node]] = []
        for node in branch:
            if (
                node.called_by is None
                and node.role == "user"
                and groups
                and any(m.role == "user" and m.called_by is None for m in groups[-1])
            ) or not groups:
                groups.append([node])
            else:
                groups[-1].append(node)
        turns: list[Turn] = []
        if not any(n.role == "user" and n.called_by is None for n in groups[0]):
            # No user node on the branch (a system preface alone): one turn numbered 0, as in git.
            return [Turn(number=0, nodes=tuple(groups[0]), commit=commits.get(groups[0][-1].id))]
        for number, group in enumerate(groups, start=1):
            chain = [n for n in group if n.called_by is None]
            last = chain[-1] if chain else group[-1]
            fork_points = [chain[0].parent_id] + [n.id for n in chain[:-1]] if chain else []
            forks: list[str] = []
            for point in fork_points:
                for child in self._children.get(point, ()):
                    if child not in on_path:
                        forks.extend(self._leaves_under(child))
            turns.append(Turn(number=number, nodes=tuple(group), commit=commits.get(last.id), fork_heads=tuple(forks)))
        return turns

    # ------------------------------------------------------------------ writes

    def _ensure_created(self, session_meta: Mapping[str, Any] | None) -> None:
        if self.meta_path.exists():
            return
        for sub in ("history", "context/commits", "workdir"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)
        meta: dict[str, Any] = {
            "id": self.id,
            "title": "",
            "title_source": "",
            "agent_id": "",
            "project_id": "",
            "source": "opmem",
            "source_ref": None,
            "created_at": 0.0,
            "updated_at": 0.0,  # raised to the newest message's time as messages arrive
            "head_id": None,
        }
        for key, value in (session_meta or {}).items():
            if key != "id":
                meta[key] = value
        if meta.get("title") and not meta.get("title_source"):
            meta["title_source"] = "user"
        self._init_git()
        self._meta = meta
        self._write_meta()

    def _init_git(self) -> None:
        if (self.path / ".git").exists():
            return
        repo = pygit2.init_repository(str(self.path), initial_head="main")
        repo.config["status.showUntrackedFiles"] = "no"
        repo.config["gc.auto"] = "0"  # we pack ourselves; the git CLI must not gc behind our lock
        self._git = repo

    def _write_meta(self, durable: bool = True) -> bytes:
        self.mutations += 1
        data = dump_json(self._meta)
        write_atomic(self.meta_path, data, durable=self.durable and durable)
        return data

    def append(
        self,
        role: str,
        content: str = "",
        *,
        parent_id: str | None = _DEFAULT,
        called_by: str | None = None,
        name: str | None = None,
        input: Any = None,
        reads: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        node_id: str | None = None,
        created_at: float | None = None,
        session_meta: Mapping[str, Any] | None = None,
    ) -> Node:
        if node_id is not None and node_id in self._nodes:
            return self._nodes[node_id]
        if role not in ROLES:
            raise OpmemError(f"session {self.id}: unknown role {role!r} (use one of {', '.join(ROLES)})")
        if node_id is None:
            node_id = uuid.uuid4().hex[:12]
        elif not isinstance(node_id, str) or not NODE_ID_RE.fullmatch(node_id):
            raise OpmemError(f"session {self.id}: invalid node id {node_id!r}")
        if called_by is not None and called_by not in self._nodes:
            raise OpmemError(f"session {self.id}: caller {called_by!r} is not in the session")
        if parent_id is _DEFAULT:
            parent_id = called_by if called_by is not None else self._head
        if parent_id is not None and parent_id not in self._nodes:
            raise OpmemError(f"session {self.id}: parent {parent_id!r} is not in the session")
        if not isinstance(content, str):
            content = "" if content is None else str(content)
        self._ensure_created(session_meta)
        created = float(created_at) if created_at is not None else time.time()
        node = Node(
            id=node_id,
            seq=self._max_seq + 1,
            role=role,
            content=content,
            parent_id=parent_id,
            called_by=called_by,
            name=name,
            input=input,
            reads=tuple(reads),
            created_at=created,
            metadata=dict(metadata or {}),
        )
        data = dump_compact_json(node.to_json())
        path = self.history_dir / node.file_name
        if self._unsynced is None:
            write_atomic(path, data, durable=self.durable)
        else:
            write_atomic(path, data, durable=False)
            self._unsynced.append(path)
        self._pending_bytes[node.id] = data
        self._index(node)
        self._own[node.id] = node.seq
        self.mutations += 1
        meta = self._meta
        if not meta.get("created_at"):
            meta["created_at"] = created
        if created > (meta.get("updated_at") or 0):
            meta["updated_at"] = created
        if called_by is None:
            linear = parent_id == self._head or self._head is None
            self._head = node.id
            if not linear:
                # A fork: a reload could not guess this head, so it is saved now.
                meta["head_id"] = node.id
                meta["head_seq_mark"] = node.seq - 1
                self._write_meta()
        return node

    def begin_group(self) -> None:
        """Group commit: node files are fsynced and turn commits written together at end_group."""
        self._grouping = True
        if self.durable and self._unsynced is None:
            self._unsynced = []

    def end_group(self) -> None:
        """Make the group's node files durable, then write its commits, before the batch returns."""
        self._grouping = False
        paths, self._unsynced = self._unsynced, None
        if paths:
            sync_files(paths, self.history_dir)
        self.flush_index()  # the end of a write burst: commits, then an index `git status` agrees with

    def in_flight_since(self) -> int | None:
        """Seq of the first node this writer wrote and has not committed (None: nothing in flight)."""
        return min(self._own.values()) if self._own else None

    def _settle_own(self, end: str) -> None:
        """Forget own nodes that the line ending at `end` now covers (whoever committed them)."""
        for nid in list(self._own):
            root = nid
            while root in self._nodes and self._nodes[root].called_by is not None:
                root = self._nodes[root].called_by  # type: ignore[assignment]
            if self._is_ancestor(root, end):
                del self._own[nid]

    def set_head(self, node_id: str) -> None:
        head = self._chain_node(node_id)
        self._head = head
        self._meta["head_id"] = head
        self._meta["head_seq_mark"] = self._max_seq
        self._meta["turns"] = sum(1 for cid in self._path_ids(head) if self._nodes[cid].role == "user")
        self._write_meta()
        self._move_head_branch(head)

    @mirror_op(lambda: None)
    def _move_head_branch(self, head: str) -> None:
        branch = self._branch_for(head)
        if branch is not None:
            self._checkout(branch)
            self.flush_index()

    def update_meta(self, fields: Mapping[str, Any]) -> None:
        for key, value in fields.items():
            if key == "id":
                continue
            self._meta[key] = value
        self._write_meta()

    # ------------------------------------------------------------------ git mirror

    def _git_dir_exists(self) -> bool:
        return (self.path / ".git").is_dir()

    def _repo(self) -> pygit2.Repository:
        if self._git is None:
            if not self._git_dir_exists():
                self._init_git()
            if self._git is None:
                self._git = pygit2.Repository(str(self.path))
        return self._git

    def _tips(self) -> dict[str, str]:
        repo = self._repo()
        tips: dict[str, str] = {}
        for name in repo.branches.local:
            ref = repo.references.get(f"refs/heads/{name}")
            if ref is not None:
                tips[name] = str(ref.resolve().target)
        tips.update(self._pending_refs)
        return tips

    @staticmethod
    def _trailers(message: str) -> tuple[str | None, int]:
        head, turn = None, 0
        for line in reversed(message.splitlines()):
            if line.startswith("Opmem-Head: "):
                head = line[12:].strip()
            elif line.startswith("Opmem-Turn: "):
                try:
                    turn = int(line[12:].strip())
                except ValueError:
                    turn = 0
            elif line and not line.startswith("Opmem-"):
                break
        return head, turn

    def _commit_map(self) -> dict[str, str]:
        if self._commits is not None:
            return self._commits
        commits: dict[str, str] = {}
        self._turn_no = {}
        repo = self._repo()
        tips = self._tips()
        if tips:
            walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
            for oid in set(tips.values()):
                walker.push(pygit2.Oid(hex=oid))
            for commit in walker:
                head, turn = self._trailers(commit.message)
                oid = str(commit.id)
                self._turn_no[oid] = turn
                if head is not None and head not in commits:
                    commits[head] = oid  # topological order: the newest commit of a head wins
        self._commits = commits
        return commits

    @mirror_op(dict)
    def _turn_commits(self) -> dict[str, str]:
        return self._commit_map() if self._git_dir_exists() else {}

    def mirror_failed(self, exc: BaseException) -> None:
        """Stop using a mirror that cannot be read: drop what waits to be written, say so once."""
        if self.mirror_broken:
            return
        self.mirror_broken = f"{self.path}/.git: the git mirror cannot be read ({type(exc).__name__}: {exc})"
        self.problems.append(f"{self.mirror_broken}; `opmem verify` rebuilds it from the node files")
        self._pending, self._pending_trees, self._pending_refs, self._pending_head = [], {}, {}, None
        self._commits = None
        self._git = None

    def covered_node_ids(self) -> set[str]:
        """Node ids that some branch tip's tree holds (every commit is an ancestor of a tip)."""
        self.flush_pending()
        if not self._git_dir_exists():
            return set()
        repo = self._repo()
        covered: set[str] = set()
        for oid in set(self._tips().values()):
            tree = repo[oid].peel(pygit2.Tree)
            if "history" not in tree:
                continue
            for entry in tree["history"].peel(pygit2.Tree):
                nid = node_id_from_file_name(entry.name)
                if nid:
                    covered.add(nid)
        return covered

    def _node_bytes(self, node: Node) -> bytes:
        data = self._pending_bytes.pop(node.id, None)
        if data is None:
            data = (self.history_dir / node.file_name).read_bytes()
        return data

    def commit_turn(self, head_id: str | None = None) -> str | None:
        end = self._chain_node(head_id) if head_id is not None else self._head
        if end is None:
            return None
        oid = self._commit_guarded(end)
        self._settle_own(end)
        return oid

    @mirror_op(lambda: None)
    def _commit_guarded(self, end: str) -> str | None:
        return self._commit_at(end)

    def _turn_chain(self, end: str) -> list[Node]:
        """Chain nodes of the turn ending at `end`, back to (and with) its user node."""
        chain: list[Node] = []
        cur: str | None = end
        while cur is not None and cur in self._nodes:
            node = self._nodes[cur]
            chain.append(node)
            if node.role == "user":
                break
            cur = node.parent_id
        chain.reverse()
        return chain

    def _commit_at(self, end: str) -> str | None:
        commits = self._commit_map()
        segment: list[str] = []
        cur: str | None = end
        while cur is not None and cur not in commits:
            segment.append(cur)
            parent = self._nodes[cur].parent_id
            cur = parent if parent in self._nodes else None
        base_head = cur
        parent_oid = commits.get(base_head) if base_head is not None else None
        base_history_oid = self._history_tree_of(parent_oid) if parent_oid else None
        base_raw = self._tree_raw(base_history_oid) if base_history_oid is not None else b""

        new_nodes = [self._nodes[c] for c in segment]
        tool_callers = list(segment)
        if base_head is not None:
            tool_callers.extend(n.id for n in self._turn_chain(base_head))
        skip_from = self._skip_from
        for caller in tool_callers:
            for tool in self._tool_tree(caller):
                if skip_from is not None and tool.seq >= skip_from:
                    continue  # a live writer's tool result: its own commit takes it
                if not base_raw or (b" " + tool.file_name.encode() + b"\0") not in base_raw:
                    new_nodes.append(tool)
        if not new_nodes:
            return None

        objects: list[tuple[int, bytes]] = []
        added: list[tuple[bytes, bytes]] = []
        for node in new_nodes:
            data = self._node_bytes(node)
            objects.append((BLOB, data))
            added.append((node.file_name.encode(), object_id(BLOB, data)))
        added.sort()
        if base_raw and added[0][0] <= last_entry_name(base_raw):
            merged = {name: (mode, oid) for mode, name, oid in parse_tree(base_raw)}
            for name, oid in added:
                merged[name] = (MODE_BLOB, oid)
            history_raw = b"".join(m + b" " + n + b"\0" + o for n, (m, o) in sorted(merged.items()))
        else:  # the usual case: new nodes sort after every node already in the tree
            history_raw = base_raw + b"".join(MODE_BLOB + b" " + n + b"\0" + o for n, o in added)
        history_oid = object_id(TREE, history_raw)
        objects.append((TREE, history_raw))

        turn_no = self._turn_no.get(parent_oid, 0) if parent_oid else 0
        # Turn N counts user nodes; a commit of only a system preface is turn 0.
        turn_no += sum(1 for c in segment if self._nodes[c].role == "user")
        chain = self._turn_chain(end)
        self._update_meta_for_commit(end, turn_no)
        meta_raw = self._write_meta(durable=False)  # derived fields; recomputed if lost
        objects.append((BLOB, meta_raw))
        root_raw = tree_entry(MODE_TREE, "history", history_oid) + tree_entry(
            MODE_BLOB, "meta.json", object_id(BLOB, meta_raw)
        )
        tree_oid = object_id(TREE, root_raw)
        objects.append((TREE, root_raw))

        message = self._commit_message(turn_no, end, chain)
        when = int(time.time())
        ident = f"{GIT_NAME} <{GIT_EMAIL}> {when} +0000".encode()
        commit_raw = b"tree " + tree_oid.hex().encode() + b"\n"
        if parent_oid:
            commit_raw += b"parent " + parent_oid.encode() + b"\n"
        commit_raw += b"author " + ident + b"\ncommitter " + ident + b"\n\n" + message.encode("utf-8")
        objects.append((COMMIT, commit_raw))
        oid = object_id(COMMIT, commit_raw).hex()
        self._pending.extend(objects)
        self._pending_trees[history_oid.hex()] = history_raw
        self._commit_history[oid] = history_oid.hex()
        tips = self._tips()
        branch = self._choose_branch(tips, parent_oid, segment)
        self._pending_refs[branch] = oid
        if self._head is not None and (self._head == end or self._is_ancestor(end, self._head)):
            self._pending_head = branch
        commits[end] = oid
        self._turn_no[oid] = turn_no
        if not self._grouping:
            self.flush_pending()
        return oid

    @mirror_op(lambda: None)
    def flush_pending(self) -> None:
        """Write the commits made since the last flush: one pack, then refs, then HEAD.

        Inside a batch (begin_group) every turn commit waits here, so importing a session writes
        one pack instead of one per turn. The pack is not fsynced, like git's own objects: the
        node files are the truth, and a commit lost in a crash is rebuilt from them (backfill).
        """
        if not self._pending:
            return
        objects, self._pending = self._pending, []
        write_pack(self.path / ".git" / "objects" / "pack", objects, durable=False)
        for key, raw in self._pending_trees.items():
            self._remember_tree(key, raw)
        self._pending_trees = {}
        refs, self._pending_refs = self._pending_refs, {}
        for branch, oid in refs.items():
            self._set_ref(branch, oid)
        head, self._pending_head = self._pending_head, None
        if head is not None:
            self._checkout(head)
        self._count_packs()

    def _history_tree_of(self, commit_oid: str) -> str | None:
        known = self._commit_history.get(commit_oid)
        if known is not None:
            return known
        try:
            tree = self._repo()[commit_oid].peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if "history" not in tree:
            return None
        oid = str(tree["history"].id)
        self._commit_history[commit_oid] = oid
        return oid

    def _checkout(self, branch: str) -> None:
        """Point HEAD at a branch; the index follows at the next flush. Files are never touched."""
        target = f"refs/heads/{branch}"
        head_file = self.path / ".git" / "HEAD"
        try:
            unchanged = head_file.read_text().strip() == f"ref: {target}"
        except OSError:
            unchanged = False
        if not unchanged:
            self._repo().set_head(target)
        self._index_dirty = True

    def flush_index(self, *, force: bool = False) -> None:
        """Make the git index match HEAD's tree, so `git status` in the session stays quiet.

        Rewriting the index is O(nodes), so it is not done per commit: the store calls this when
        a write burst ends (a batch) and when a session goes quiet (head switch, packing,
        eviction, flush, close, verify).
        """
        self.flush_pending()
        if not (self._index_dirty or force) or not self._git_dir_exists() or self.mirror_broken:
            return
        try:
            self._write_index()
        except OSError:
            pass  # the index is a convenience for `git status`; the commits are already safe

    @mirror_op(lambda: None)
    def _write_index(self) -> None:
        repo = self._repo()
        if repo.head_is_unborn:
            self._index_dirty = False
            return
        tree = repo.head.peel(pygit2.Commit).tree_id
        entries: list[tuple[bytes, bytes, bool]] = []
        stack: list[tuple[bytes, Any]] = [(b"", tree)]
        while stack:
            prefix, oid = stack.pop()
            for mode, name, child in parse_tree(self._tree_raw(oid)):
                if mode == MODE_TREE:
                    stack.append((prefix + name + b"/", pygit2.Oid(raw=child)))
                else:  # meta.json is rewritten between commits: git is told not to look at it
                    entries.append((prefix + name, child, not prefix and name == b"meta.json"))
        if write_index(self.path / ".git", index_bytes(entries)):
            self._index_dirty = False

    def _set_ref(self, branch: str, oid: str) -> None:
        path = self.path / ".git" / "refs" / "heads" / branch
        try:
            fd = os.open(path, os.O_WRONLY)
        except OSError:
            self._repo().references.create(f"refs/heads/{branch}", pygit2.Oid(hex=oid), force=True)
            return
        try:
            # One 41-byte write over a 41-byte file: atomic for readers, and no new inode.
            if os.fstat(fd).st_size == 41:
                os.pwrite(fd, (oid + "\n").encode(), 0)
                return
        finally:
            os.close(fd)
        self._repo().references.create(f"refs/heads/{branch}", pygit2.Oid(hex=oid), force=True)

    def _tree_raw(self, oid: Any) -> bytes:
        key = str(oid)
        raw = self._pending_trees.get(key) or self._tree_cache.get(key)
        if raw is None:
            raw = self._repo().odb.read(pygit2.Oid(hex=key))[1]
            self._remember_tree(key, raw)
        return raw

    def _remember_tree(self, key: str, raw: bytes) -> None:
        self._tree_cache[key] = raw
        while len(self._tree_cache) > 4:
            self._tree_cache.pop(next(iter(self._tree_cache)))

    def _choose_branch(self, tips: dict[str, str], parent_oid: str | None, segment: list[str]) -> str:
        if parent_oid is None:
            if "main" not in tips:
                return "main"
        else:
            at_parent = [name for name, tip in tips.items() if tip == parent_oid]
            if at_parent:
                try:
                    current = self._pending_head or self._repo().head.shorthand
                except pygit2.GitError:
                    current = None
                if current in at_parent:
                    return current
                return "main" if "main" in at_parent else sorted(at_parent)[0]
        line = [self._nodes[c] for c in reversed(segment)]
        first = next((n for n in line if n.role == "assistant"), line[0] if line else None)
        base = branch_name(f"retry-{first.id if first else uuid.uuid4().hex[:12]}")
        name, k = base, 2
        while name in tips:
            name, k = f"{base}-{k}", k + 1
        return name

    def _branch_for(self, node_id: str) -> str | None:
        if not self._git_dir_exists():
            return None
        commits = self._commit_map()
        tips = self._tips()
        repo = self._repo()
        # The newest commit on the node's line: the node itself or its nearest committed ancestor.
        cur: str | None = node_id
        while cur is not None and cur not in commits:
            cur = self._nodes[cur].parent_id if cur in self._nodes else None
        if cur is None:
            return None
        target = commits[cur]
        exact = [name for name, tip in tips.items() if tip == target]
        if exact:
            return "main" if "main" in exact else sorted(exact)[0]
        for name, tip in sorted(tips.items(), key=lambda kv: kv[0] != "main"):
            if repo.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=target)):
                return name
        return None

    def _update_meta_for_commit(self, end: str, turn_no: int) -> None:
        meta = self._meta
        if self._head == end or self._head is None or self._is_ancestor(end, self._head):
            meta["head_id"] = self._head or end
            meta["head_seq_mark"] = self._max_seq
            meta["turns"] = turn_no if self._head == end or self._head is None else meta.get("turns", turn_no)
        first_user = self._first_user(end)
        if first_user is not None:
            if not meta.get("preview"):
                meta["preview"] = excerpt(first_user.content, PREVIEW_CHARS)
            if meta.get("title_source") not in ("user", "llm") and not meta.get("title"):
                title = excerpt(first_user.content, TITLE_CHARS)
                if title:
                    meta["title"] = title
                    meta["title_source"] = "excerpt"

    def _first_user(self, end: str) -> Node | None:
        for cid in self._path_ids(end):
            node = self._nodes[cid]
            if node.role == "user" and node.content.strip():
                return node
        return None

    def _commit_message(self, turn_no: int, end: str, chain: list[Node]) -> str:
        user = next((n for n in chain if n.role == "user"), None)
        replies = [n for n in chain if n.role == "assistant" and n.content.strip()]
        tools = [t for c in chain for t in self._tool_tree(c.id)]
        names = Counter()
        order: list[str] = []
        for tool in sorted(tools, key=lambda n: n.seq):
            label = (tool.name or "tool").strip() or "tool"
            if label not in names:
                order.append(label)
            names[label] += 1
        tool_line = ", ".join(f"{n} × {names[n]}" if names[n] > 1 else n for n in order)
        took = max(0.0, chain[-1].created_at - chain[0].created_at) if chain else 0.0
        tokens = 0
        for node in chain:
            tokens += _token_count(node.metadata)
        subject = _one_line(user.content, 60) if user else _one_line(chain[0].content if chain else "", 60)
        lines = [f"turn {turn_no}: {subject}".rstrip(), ""]
        if replies:
            lines.append(f"assistant: {_one_line(replies[-1].content, 80)}")
        if tool_line:
            lines.append(f"tools: {tool_line}")
        if lines[-1] != "":
            lines.append("")
        meta_line = f"[meta: turn took {took:.1f}s, {len(tools)} tools"
        meta_line += f", {tokens} tokens]" if tokens else "]"
        lines.append(meta_line)
        lines.append("")
        lines.append(f"Opmem-Turn: {turn_no}")
        lines.append(f"Opmem-Head: {end}")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ consistency

    def turn_ends(self, start: str, skip_from: int | None = None) -> list[str]:
        ends: list[str] = []
        stack = [start]
        while stack:
            cur = stack.pop()
            kids = self._children.get(cur, [])
            if skip_from is not None:
                kids = [k for k in kids if self._nodes[k].seq < skip_from]
            if not kids or any(self._nodes[k].role == "user" for k in kids):
                ends.append(cur)
            stack.extend(k for k in kids if self._nodes[k].role != "user")
        return ends

    def missing_node_ids(self, skip_from: int | None = None) -> set[str]:
        """Nodes no branch covers yet, leaving out those from `skip_from` on (a live writer's)."""
        if not self._nodes:
            return set()
        missing = set(self._nodes) - self.covered_node_ids()
        if skip_from is not None:
            missing = {nid for nid in missing if self._nodes[nid].seq < skip_from}
        return missing

    @mirror_op(int)
    def backfill(self, skip_from: int | None = None) -> int:
        """Commit, turn by turn, every node that no branch covers yet. Returns commits made.

        Nodes from seq `skip_from` on are left alone: a live writer is still writing that turn.
        """
        missing = self.missing_node_ids(skip_from)
        if not missing:
            return 0
        ends: set[str] = set()
        for nid in missing:
            chain_id = nid
            while self._nodes[chain_id].called_by is not None:
                chain_id = self._nodes[chain_id].called_by
            ends.update(self.turn_ends(chain_id, skip_from))
        made = 0
        grouping, self._grouping = self._grouping, True
        self._skip_from = skip_from
        try:
            for end in sorted(ends, key=lambda e: self._nodes[e].seq):
                if self._commit_at(end):
                    made += 1
                self._settle_own(end)
        finally:
            self._grouping = grouping
            self._skip_from = None
        if not grouping:
            self.flush_pending()
        if self._head is not None:
            branch = self._branch_for(self._head)
            if branch:
                self._checkout(branch)
        self.flush_index()
        return made

    def mirror_problems(self) -> list[str]:
        """What is missing from the git mirror: every commit and tree of every branch, and each tip's files."""
        if not self._git_dir_exists():
            return []
        try:
            self.flush_pending()
            repo = self._repo()
            tips = self._tips()
            if not tips:
                return []
            walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL)
            for oid in set(tips.values()):
                walker.push(pygit2.Oid(hex=oid))
            for commit in walker:
                tree = commit.tree
                if "history" in tree:
                    tree["history"].peel(pygit2.Tree)
            odb = repo.odb
            for oid in set(tips.values()):
                tree = repo[oid].peel(pygit2.Tree)
                entries = list(tree["history"].peel(pygit2.Tree)) if "history" in tree else []
                for entry in [*entries, *(e for e in tree if e.name == "meta.json")]:
                    if not odb.exists(entry.id):
                        return [f"{self.path}/.git: object {entry.id} ({entry.name}) is missing"]
        except GIT_ERRORS as exc:
            return [f"{self.path}/.git: {type(exc).__name__}: {exc}"]
        return []

    def rebuild_mirror(self, skip_from: int | None = None) -> int:
        """Replace a broken git mirror by one built from the node files. Returns commits made."""
        git_dir = self.path / ".git"
        aside = self.path / f".git-broken-{uuid.uuid4().hex[:8]}"
        if git_dir.exists():
            os.replace(git_dir, aside)
        self._git = None
        self._commits, self._turn_no, self._tree_cache, self._commit_history = None, {}, {}, {}
        self._pending, self._pending_trees, self._pending_refs, self._pending_head = [], {}, {}, None
        self.mirror_broken = None
        self.problems = [p for p in self.problems if "/.git" not in p]
        self._init_git()
        made = self.backfill(skip_from)
        if self.mirror_broken:  # the rebuild failed too: put the old mirror back for inspection
            shutil.rmtree(git_dir, ignore_errors=True)
            if aside.exists():
                os.replace(aside, git_dir)
            raise OpmemError(f"{self.path}: rebuilding the git mirror failed: {self.mirror_broken}")
        shutil.rmtree(aside, ignore_errors=True)
        self._index_dirty = True
        self.flush_index()
        self.mutations += 1
        return made

    # ------------------------------------------------------------------ history views

    @mirror_op(list)
    def branches(self) -> list[Branch]:
        self.flush_pending()
        if not self._git_dir_exists():
            return []
        repo = self._repo()
        try:
            current = repo.head.shorthand if not repo.head_is_unborn else None
        except pygit2.GitError:
            current = None
        out: list[Branch] = []
        for name, tip in sorted(self._tips().items(), key=lambda kv: (kv[0] != "main", kv[0])):
            head, turn = self._trailers(repo[tip].peel(pygit2.Commit).message)
            out.append(Branch(name=name, head_id=head or "", tip=tip, turns=turn, is_current=name == current))
        return out

    @mirror_op(list)
    def session_commits(self, limit: int = 100) -> list[TurnCommit]:
        self.flush_pending()
        if not self._git_dir_exists():
            return []
        repo = self._repo()
        tips = self._tips()
        if not tips:
            return []
        decorations: dict[str, list[str]] = {}
        for name, tip in tips.items():
            decorations.setdefault(tip, []).append(name)
        walker = repo.walk(None, pygit2.enums.SortMode.TIME | pygit2.enums.SortMode.TOPOLOGICAL)
        for oid in set(tips.values()):
            walker.push(pygit2.Oid(hex=oid))
        out: list[TurnCommit] = []
        for commit in walker:
            if len(out) >= limit:
                break
            head, turn = self._trailers(commit.message)
            oid = str(commit.id)
            out.append(
                TurnCommit(
                    oid=oid,
                    turn=turn,
                    head_id=head or "",
                    summary=commit.message.split("\n", 1)[0],
                    message=commit.message,
                    time=float(commit.commit_time),
                    branches=tuple(sorted(decorations.get(oid, ()))),
                    parents=tuple(str(p) for p in commit.parent_ids),
                )
            )
        return out

    def turn_view(self, commit: str) -> list[Node]:
        """The conversation exactly as it stood at a commit, read from its tree (moves no file)."""
        self.flush_pending()
        repo = self._repo()
        try:
            obj = repo.revparse_single(commit)
            tree = obj.peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError):
            raise OpmemError(f"session {self.id}: no commit {commit!r}") from None
        if "history" not in tree:
            return []
        import json

        nodes: list[Node] = []
        for entry in tree["history"].peel(pygit2.Tree):
            try:
                blob = repo[entry.id].peel(pygit2.Blob)
            except GIT_ERRORS as exc:
                self.mirror_failed(exc)
                raise OpmemError(f"session {self.id}: {self.mirror_broken}") from None
            label = f"{self.path}@{commit[:12]}:history/{entry.name}"
            try:
                nodes.append(Node.from_json(json.loads(blob.data), label))
            except (ValueError, CorruptFile) as exc:
                raise CorruptFile(label, str(exc)) from None
        nodes.sort(key=lambda n: n.seq)
        return nodes

    # ------------------------------------------------------------------ storage

    def _loose_dirs(self) -> list[Path]:
        objects = self.path / ".git" / "objects"
        try:
            return [objects / d for d in os.listdir(objects) if len(d) == 2]
        except FileNotFoundError:
            return []

    def _pack_files(self) -> list[Path]:
        pack_dir = self.path / ".git" / "objects" / "pack"
        try:
            return sorted(pack_dir / n for n in os.listdir(pack_dir) if n.endswith(".idx") and n.startswith("pack-"))
        except FileNotFoundError:
            return []

    def _count_packs(self) -> None:
        """Keep the file count bounded as turn packs accumulate, at a cost per turn, not per session.

        Once `pack_threshold` packs sit beside the largest one, they are merged into it by
        concatenation, history trees stored as append deltas (packwriter.merge_packs). A full
        libgit2 repack (`pack()`) runs at the daily sleep or on request.
        """
        packs = self._pack_files()
        if len(packs) < 2 or len(packs) <= self.pack_threshold:
            return  # whatever the setting: nothing to merge in one pack
        sizes = {p: p.stat().st_size for p in packs}
        base = max(packs, key=lambda p: sizes[p])
        others = sorted((p for p in packs if p != base), key=lambda p: p.stat().st_mtime_ns)
        pack_dir = self.path / ".git" / "objects" / "pack"
        try:
            merged = merge_packs(pack_dir, base, others, self._history_base, durable=False)
        except (MergeRefused, ValueError, zlib.error):
            self.pack()
            return
        for idx in [base, *others]:
            if idx.stem == merged:
                continue  # the merge gave back this very pack (same objects, same name): it stays
            idx.unlink(missing_ok=True)  # the index first: no reader finds an index without its pack
            idx.with_suffix(".pack").unlink(missing_ok=True)
        self.mutations += 1
        self._git = None

    def _history_base(self, commit_raw: bytes) -> tuple[bytes, bytes] | None:
        """The history tree (oid, raw) of the parent of a commit given raw, if it has one."""
        for line in commit_raw.split(b"\n"):
            if line.startswith(b"parent "):
                try:
                    parent = self._repo()[line[7:].decode()].peel(pygit2.Commit)
                    tree_id = parent.tree["history"].id
                except (KeyError, ValueError, pygit2.GitError):
                    return None
                return tree_id.raw, self._tree_raw(tree_id)
            if not line:
                break
        return None

    @mirror_op(int)
    def pack(self) -> int:
        """Pack every object with deltas into one pack, then drop loose objects and old packs."""
        self.flush_pending()
        if not self._git_dir_exists():
            return 0
        repo = self._repo()
        pack_dir = self.path / ".git" / "objects" / "pack"
        old_packs = set(pack_dir.glob("pack-*")) if pack_dir.exists() else set()
        self.mutations += 1
        written = repo.pack()
        new_packs = set(pack_dir.glob("pack-*")) - old_packs
        if not any(p.suffix == ".idx" for p in new_packs):
            return written
        for path in old_packs:
            path.unlink(missing_ok=True)
        for directory in self._loose_dirs():
            shutil.rmtree(directory, ignore_errors=True)
        self._git = None
        self.flush_index()
        return written


def _token_count(metadata: Mapping[str, Any]) -> int:
    value = metadata.get("tokens")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    usage = metadata.get("usage")
    if isinstance(usage, Mapping):
        total = 0
        for key in ("input_tokens", "output_tokens"):
            part = usage.get(key)
            if isinstance(part, int) and not isinstance(part, bool):
                total += part
        return total
    return 0
