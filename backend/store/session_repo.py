"""One session folder: meta.json, its node files (the truth) and their git mirror (one commit per turn).

The parts, each in its own module: `NodeLog` (history/, written once and fsynced),
`Conversation` (the graph of nodes, branches and turns), `GitMirror` (commits, refs, HEAD,
index, packs) with `git_views` (branches, log, a commit's conversation). This class holds
meta.json and ties them together.

Not thread-safe on its own: SessionStore serializes access with a per-session lock and a
file lock, and calls `refresh()` when another process may have written.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..model import ROLES, Branch, Node, OpmemError, SessionMeta, Turn, TurnCommit
from . import git_views
from .commit_text import PREVIEW_CHARS, TITLE_CHARS, excerpt
from .conversation import Conversation
from .files import dump_json, fsync_dir, read_json_object, write_atomic
from .git_mirror import GitMirror, init_session_git
from .node_log import NODE_ID_RE, NodeLog
from .writers import new_writer

__all__ = ["GENERATION_FILE", "NODE_ID_RE", "SessionRepo"]

# Rewritten (not only added to) by a privacy purge: an open copy whose generation differs reads
# the session again whole, since a node file it read before may have changed.
GENERATION_FILE = "opmem-generation"

_DEFAULT: Any = object()


class SessionRepo:
    """A session folder: meta.json, history/, context/, workdir/ and .git/."""

    def __init__(self, path: Path, session_id: str, *, pack_threshold: int = 50, durable: bool = True):
        self.path = Path(path)
        self.id = session_id
        self.durable = durable
        self.graph = Conversation(f"session {session_id}")
        self.log = NodeLog(self.path / "history", durable=durable)
        self.mirror = GitMirror(self.path, self.graph, self.log, self._meta_for_commit, pack_threshold=pack_threshold)
        self._meta: dict[str, Any] = {}
        self._generation = ""
        self._in_batch = False  # between begin_group and end_group (backfill groups its commits too)
        self._batch_saw_meta = False  # meta.json was there when this batch looked
        self._meta_behind = False  # meta.json lags the turn commits of the open batch
        self._parent_behind = False  # created in the open batch: the rename into sessions/ is synced at its end
        self._writes = 0
        self.writer = new_writer(self)  # this writer's token in the in-flight markers
        self.marked_since: int | None = None  # what the marker file says about this writer
        self._own: dict[str, int] = {}  # node id -> seq of nodes this object wrote and has not committed

    @property
    def mutations(self) -> int:
        """Bumped by every write, so the store knows to publish a change."""
        return self._writes + self.mirror.mutations

    @property
    def problems(self) -> list[str]:
        return self.log.problems + self.mirror.problems

    @property
    def meta_path(self) -> Path:
        return self.path / "meta.json"

    def exists(self) -> bool:
        return self.meta_path.is_file()

    # ------------------------------------------------------------------ reading what is on disk

    def _reset(self) -> None:
        self.graph.clear()
        self.log.reset()
        self.mirror.reset()
        self._meta = {}

    def load(self) -> None:
        """Read meta.json and every node file (raises CorruptFile for a bad meta.json)."""
        self._reset()
        if not self.path.is_dir():
            return
        self._generation = self._read_generation()
        self._meta = read_json_object(self.meta_path)
        self._read_new_nodes()
        # A repo written before opmem kept the index (or by a process killed before it wrote it).
        self.mirror.index_dirty = self.mirror.exists() and not (self.mirror.git_dir / "index").exists()

    def refresh(self) -> None:
        """Pick up what another process wrote: new node files, a new meta.json, new refs."""
        if not self.path.is_dir():
            self._reset()
            return
        if not self._meta and not self.meta_path.exists():
            return
        if self._read_generation() != self._generation:
            self.load()  # rewritten in place (a purge): what was read before may have changed
            return
        self._meta = read_json_object(self.meta_path)
        self._read_new_nodes()
        self.mirror.forget_reads()

    def _read_generation(self) -> str:
        try:
            return (self.path / ".git" / GENERATION_FILE).read_text()
        except OSError:
            return ""

    def _read_new_nodes(self) -> None:
        for node in self.log.scan(self.graph.nodes):
            self.graph.add(node)
        self.graph.recover_head(self._meta.get("head_id"), self._meta.get("head_seq_mark", -1))

    # ------------------------------------------------------------------ reads

    @property
    def head(self) -> str | None:
        return self.graph.head

    def meta(self) -> SessionMeta:
        return SessionMeta.from_listing(self._meta, self.id, str(self.path))

    def raw_meta(self) -> dict[str, Any]:
        return dict(self._meta)

    def has_node(self, node_id: str) -> bool:
        return node_id in self.graph.nodes

    def node(self, node_id: str) -> Node:
        return self.graph.get(node_id)

    def nodes(self) -> list[Node]:
        return self.graph.ordered()

    def get_branch(self, head_id: str | None = None) -> list[Node]:
        return self.graph.branch(head_id)

    def leaves(self) -> list[str]:
        return self.graph.leaves()

    def turns(self, head_id: str | None = None) -> list[Turn]:
        return self.graph.turns(head_id, self.mirror.turn_commits())

    def turn_starts(self, head_id: str | None = None) -> dict[str, tuple[int, str | None]]:
        return self.graph.turn_starts(head_id, self.mirror.turn_commits())

    def branches(self) -> list[Branch]:
        return git_views.branches(self.mirror)

    def session_commits(self, limit: int = 100) -> list[TurnCommit]:
        return git_views.session_commits(self.mirror, limit)

    def turn_view(self, commit: str) -> list[Node]:
        """The conversation exactly as it stood at a commit, read from its tree (moves no file)."""
        return git_views.nodes_at(self.mirror, commit, f"session {self.id}")

    # ------------------------------------------------------------------ writes

    def _ensure_created(self, session_meta: Mapping[str, Any] | None) -> None:
        if self._batch_saw_meta:
            return  # looked once this batch, under its lock: a stat per node was a twentieth of an import
        if self.meta_path.exists():
            self._batch_saw_meta = self._in_batch
            return
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
        self._meta = meta
        self._create_whole()
        self._batch_saw_meta = self._in_batch

    def _create_whole(self) -> None:
        """Make the session folder (git repo, meta.json, sub-folders) beside it, then rename it
        into place: a writer killed midway leaves a hidden `.<id>.creating-*` folder, never a
        session without meta.json or with half a `.git`. Runs under the session's lock."""
        for stale in _creating_leftovers(self.path.parent, self.path.name):
            shutil.rmtree(stale, ignore_errors=True)  # a writer killed while creating this session
        if _half_created(self.path):
            shutil.rmtree(self.path)  # left by a writer killed before this was atomic: nothing in it
        if self.path.exists():  # anything else already there: create around it, keep every file
            for sub in ("history", "context/commits", "workdir"):
                (self.path / sub).mkdir(parents=True, exist_ok=True)
            self.mirror.init()
            self._write_meta()
            return
        staging = self.path.with_name(f".{self.path.name}.creating-{uuid.uuid4().hex[:8]}")
        for sub in ("history", "context/commits", "workdir"):
            (staging / sub).mkdir(parents=True)
        init_session_git(staging)
        # in a batch, made durable with its node files at the batch end (an fsync a session was a
        # tenth of a backlog import's own time): until then, nothing of the batch is reported written
        write_atomic(staging / "meta.json", dump_json(self._meta), durable=self.durable and not self._in_batch)
        self._writes += 1
        os.rename(staging, self.path)
        if self.durable and self._in_batch:
            self.log.track(os.fspath(self.meta_path))
        if self.durable and self._in_batch:
            self._parent_behind = True  # one flush at the batch end, with its node files'
        elif self.durable:
            fsync_dir(self.path.parent)
        self.mirror.reset()

    def _write_meta(self, durable: bool = True) -> bytes:
        self._writes += 1
        self._meta_behind = False
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
        graph = self.graph
        if node_id is not None and node_id in graph.nodes:
            return graph.nodes[node_id]
        if role not in ROLES:
            raise OpmemError(f"session {self.id}: unknown role {role!r} (use one of {', '.join(ROLES)})")
        if node_id is None:
            node_id = uuid.uuid4().hex[:12]
        elif not isinstance(node_id, str) or not NODE_ID_RE.fullmatch(node_id):
            raise OpmemError(f"session {self.id}: invalid node id {node_id!r}")
        if called_by is not None and called_by not in graph.nodes:
            raise OpmemError(f"session {self.id}: caller {called_by!r} is not in the session")
        if parent_id is _DEFAULT:
            parent_id = called_by if called_by is not None else graph.head
        if parent_id is not None and parent_id not in graph.nodes:
            raise OpmemError(f"session {self.id}: parent {parent_id!r} is not in the session")
        if not isinstance(content, str):
            content = "" if content is None else str(content)
        self._ensure_created(session_meta)
        created = float(created_at) if created_at is not None else time.time()
        node = Node(
            id=node_id,
            seq=graph.max_seq + 1,
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
        self.log.write(node)
        graph.add(node)
        self._own[node.id] = node.seq
        self._writes += 1
        meta = self._meta
        if not meta.get("created_at"):
            meta["created_at"] = created
        if created > (meta.get("updated_at") or 0):
            meta["updated_at"] = created
        if called_by is None:
            linear = parent_id == graph.head or graph.head is None
            graph.head = node.id
            if not linear:
                # A fork: a reload could not guess this head, so it is saved now.
                meta["head_id"] = node.id
                meta["head_seq_mark"] = node.seq - 1
                meta.pop("head_committed_seq", None)
                self._write_meta()
        return node

    def begin_group(self) -> None:
        """Group commit: turn commits are written together (one pack) at end_group."""
        self.mirror.grouping = True
        self._in_batch = True
        self._batch_saw_meta = False

    def end_group(self, sync_later: Callable[[Callable[[], None]], None] | None = None) -> None:
        """Make the group's node files durable, then write its commits and the index: a write burst ends.

        sync_later: takes the sync of the node files (and of the session folder's rename) to run
        it on another thread; its caller waits for it before reporting them written."""
        self.mirror.grouping = False
        self._in_batch = False
        self._batch_saw_meta = False
        if sync_later is None:
            self._sync_files()
        else:
            sync_later(self._take_sync())
        if self._meta_behind:
            self._meta_behind = False
            self._write_meta(durable=False)
        self.mirror.flush_index()

    def _sync_files(self) -> None:
        """Node files durable, and the session folder's rename into place if its batch created it."""
        self.log.sync()
        if self._parent_behind:
            fsync_dir(self.path.parent)
            self._parent_behind = False  # only once synced: a failed sync is tried again

    def _take_sync(self) -> Callable[[], None]:
        files = self.log.take_sync()
        parent = self.path.parent if self._parent_behind else None
        self._parent_behind = False

        def sync() -> None:
            if files is not None:
                files()
            if parent is not None:
                fsync_dir(parent)

        return sync

    def set_head(self, node_id: str) -> None:
        head = self.graph.chain_node(node_id)
        self.graph.head = head
        self._meta["head_id"] = head
        self._meta["head_seq_mark"] = self.graph.max_seq
        self._meta.pop("head_committed_seq", None)  # another line: what of it is committed is not known here
        self._meta["turns"] = self.graph.user_count(head)
        self._meta["turns_head"] = head
        self._write_meta()
        self.mirror.follow_head(head)

    def update_meta(self, fields: Mapping[str, Any]) -> None:
        for key, value in fields.items():
            if key == "id":
                continue
            self._meta[key] = value
        self._write_meta()

    # ------------------------------------------------------------------ commits

    def commit_turn(self, head_id: str | None = None) -> str | None:
        end = self.graph.chain_node(head_id) if head_id is not None else self.graph.head
        if end is None:
            return None
        if not self.mirror.grouping:
            self.log.sync()  # the turn's node files are durable before its commit names them
        oid = self.mirror.commit(end)
        self._settle_own(end)
        return oid

    def _meta_for_commit(self, end: str, turn_no: int) -> bytes:
        """Derived meta fields (head, turns, title and preview from the first prompt), written and committed."""
        self._derive_meta(end, turn_no, committed=True)
        if self._in_batch:  # written once when the batch ends: a rename per turn is costly
            self._meta_behind = True
            return dump_json(self._meta)
        return self._write_meta(durable=False)  # derived fields; recomputed if lost

    def _derive_meta(self, end: str, turn_no: int, *, committed: bool) -> None:
        meta, graph = self._meta, self.graph
        head = graph.head
        if head == end or head is None or graph.is_ancestor(end, head):
            meta["head_id"] = head or end
            meta["head_seq_mark"] = graph.max_seq
        if committed and (head == end or head is None):
            # the head's whole line, tool calls included, is in this commit (tail.py reads it)
            meta["head_committed_seq"] = graph.max_seq
        if head == end or head is None or "turns_head" not in meta:
            # `turns` counts the user nodes on the line to `turns_head` (the listing shows it;
            # a cold open of the last turn adds the ones after it)
            meta["turns"], meta["turns_head"] = turn_no, end
        wants_title = meta.get("title_source") not in ("user", "llm") and not meta.get("title")
        if not meta.get("preview") or wants_title:
            first_user = graph.first_user(end)
            if first_user is not None:
                if not meta.get("preview"):
                    meta["preview"] = excerpt(first_user.content, PREVIEW_CHARS)
                title = excerpt(first_user.content, TITLE_CHARS) if wants_title else ""
                if title:
                    meta["title"] = title
                    meta["title_source"] = "excerpt"

    def defer_mirror(self) -> None:
        """The nodes written so far go to the mirror backlog (mirror_backlog.py), not in flight:
        meta.json gets what a commit of the head's line would give it (title, preview, turns),
        so the session lists and opens as it will once committed."""
        self._own.clear()
        head = self.graph.head
        if head is not None:
            self._derive_meta(head, self.graph.user_count(head), committed=False)
            self._meta_behind = True

    def read_copy(self) -> SessionRepo:
        """A copy for lock-free reads (reader.py) of what this writer holds: its first read
        refreshes (meta.json again, only the node files it does not know), not a parse of all."""
        copy = SessionRepo(self.path, self.id, durable=False)
        copy._meta = dict(self._meta)
        copy._generation = self._generation
        graph, mine = copy.graph, self.graph
        graph.nodes = dict(mine.nodes)
        graph.children = {k: list(v) for k, v in mine.children.items()}
        graph.tools = {k: list(v) for k, v in mine.tools.items()}
        graph.max_seq, graph.head = mine.max_seq, mine.head
        copy.log.known = set(self.log.known)
        copy.log.problems = list(self.log.problems)
        return copy

    def write_backlog(self, skip_from: int | None = None) -> int:
        """Backfill as one group (one pack, meta.json written once). Returns commits made."""
        if self._in_batch:  # inside a batch: its end writes the pack and meta.json
            return self.backfill(skip_from)
        self.begin_group()
        try:
            return self.backfill(skip_from)
        finally:
            self.end_group()

    def flush_pending(self) -> None:
        self.mirror.flush_pending()

    def flush(self, *, force_index: bool = False) -> None:
        """The session goes quiet: node files durable, commits written, the index after HEAD."""
        if not self.path.is_dir():
            return  # removed (with its store, or deleted): nothing to make again
        self._sync_files()
        self.mirror.flush_index(force=force_index)

    def flush_index(self, *, force: bool = False) -> None:
        self.mirror.flush_index(force=force)

    def pack(self) -> int:
        """Every object in one delta-compressed pack (the daily sleep, or on request)."""
        return self.mirror.repack()

    # ------------------------------------------------------------------ writers in flight, consistency

    def in_flight_since(self) -> int | None:
        """Seq of the first node this writer wrote and has not committed (None: nothing in flight)."""
        return min(self._own.values()) if self._own else None

    def _settle_own(self, end: str) -> None:
        """Forget own nodes that the line ending at `end` now covers (whoever committed them)."""
        for nid in list(self._own):
            if self.graph.is_ancestor(self.graph.chain_root(nid), end):
                del self._own[nid]

    @property
    def mirror_broken(self) -> str | None:
        return self.mirror.broken

    def covered_node_ids(self) -> set[str]:
        return self.mirror.covered_node_ids()

    def missing_node_ids(self, skip_from: int | None = None) -> set[str]:
        return self.mirror.missing_node_ids(skip_from)

    def backfill(self, skip_from: int | None = None) -> int:
        """Commit, turn by turn, every node no branch covers, except a live writer's (from `skip_from` on)."""
        return self.mirror.backfill(skip_from, self._settle_own)

    def mirror_problems(self) -> list[str]:
        return git_views.missing_objects(self.mirror)

    def rebuild_mirror(self, skip_from: int | None = None) -> int:
        """Replace a broken git mirror by one built from the node files. Returns commits made."""
        return self.mirror.rebuild(skip_from, self._settle_own)


_LEFTOVERS: dict[Path, set[str]] = {}  # sessions folder -> `.<id>.creating-*` names seen at its scan
_LEFTOVERS_LOCK = threading.Lock()


def _creating_leftovers(parent: Path, name: str) -> list[Path]:
    """The `.<name>.creating-*` folders killed writers left, from one scan of `parent` per process:
    a glob per new session read the whole sessions folder each time (quadratic in a first import).
    One a writer of another process leaves after that scan is removed by the next process."""
    with _LEFTOVERS_LOCK:
        names = _LEFTOVERS.get(parent)
        if names is None:
            try:
                names = {entry.name for entry in os.scandir(parent) if ".creating-" in entry.name}
            except OSError:
                names = set()
            _LEFTOVERS[parent] = names
        prefix = f".{name}.creating-"
        found = [item for item in names if item.startswith(prefix)]
        names.difference_update(found)
    return [parent / item for item in found]


def _half_created(path: Path) -> bool:
    """A session folder an earlier writer died creating: only our sub-folders, no node file."""
    try:
        names = {entry.name for entry in os.scandir(path)}
    except (FileNotFoundError, NotADirectoryError):
        return False
    return names <= {".git", "history", "context", "workdir"} and not any(path.glob("history/*.json"))
