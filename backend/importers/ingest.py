"""Write an ImportedSession into the SessionStore: idempotent and incremental.

Ids are deterministic, so importing the same file twice writes nothing the second time, and a
file that grew adds only its new nodes:
- session id: ``<prefix>-<native id>`` (e.g. ``cc-<uuid>`` for Claude Code), made safe;
- node id: the node's source_id when it is a valid node id, else ``h-`` + a hash of it.

One commit per turn: before a user node whose previous turn got new nodes, and at the end for
every line (branch) that got new nodes. A turn that grows later gets a newer commit.
`defer_mirror` (a backlog): no commit here; the session's mirror is written afterwards by
store/mirror_backlog.py (one backfill per session), and the session id goes to
report.mirror_pending.

Importer ``extra`` keys ingest understands (the rest is kept as meta ``source_extra``):
- ``title_source``: "user" (a title the user gave in the agent) or "llm" (agent-generated);
- ``children``: {native id of a subagent session: source_id of the node that spawned it}.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..model import Node, OpmemError
from ..privacy import redact_node, redact_value
from ..store.sessions import SessionBatch, SessionStore
from .base import ImportedSession, ImportReport, dated
from .session_ids import node_id_for, resolve_session_id

# Meta keys ingest owns; importer extras never overwrite them.
RESERVED_EXTRA = frozenset({"title_source", "children"})

ProjectHook = Callable[[str, str], Any]
PREFETCH_OVER = 32


def find_git_root(path: str | Path) -> Path | None:
    """The nearest folder at or above `path` holding a .git (folder or file), if any."""
    try:
        current = Path(path).expanduser()
        if not current.is_absolute() or not current.exists():
            return None
        for folder in (current, *current.parents):
            if (folder / ".git").exists():
                return folder
    except (OSError, ValueError):
        return None
    return None


def ingest(
    store: SessionStore,
    imported: ImportedSession,
    report: ImportReport,
    *,
    session_id: str | None = None,
    on_project: ProjectHook | None = None,
    redact: bool = False,
    defer_mirror: bool = False,
    sync_later: Callable[[Callable[[], None]], None] | None = None,
) -> str:
    """Write `imported` into `store`; returns the opmem session id. Re-running adds nothing.

    sync_later: the batch end's sync runs there (see SessionStore.batch); the caller waits for it.

    redact: the nodes and meta.json fields (title included) are stored with their secrets
    replaced by markers (`[privacy] redact_on_import`); nodes stored before stay as they are.

    A change hint the store could not write (store.take_hint_failures) is a warning of the report."""
    try:
        return _ingest(store, imported, report, session_id, on_project, redact, defer_mirror, sync_later)
    finally:
        for path, problem in store.take_hint_failures():
            report.warn(path, None, problem)


def _ingest(
    store: SessionStore,
    imported: ImportedSession,
    report: ImportReport,
    session_id: str | None,
    on_project: ProjectHook | None,
    redact: bool,
    defer_mirror: bool,
    sync_later: Callable[[Callable[[], None]], None] | None,
) -> str:
    imported = dated(imported)
    sid = session_id or resolve_session_id(store, imported.source, imported.native_id, imported.aliases)
    existed = store.exists(sid)
    if imported.nodes or existed:  # a session with no message (an empty Goose row) is none
        report.sessions += 1
    meta = _meta_fields(store, imported, sid)
    if redact:
        meta = redact_value(meta)
    if imported.nodes:
        with store.batch(sid, defer_mirror=defer_mirror, sync_later=sync_later) as batch:
            writer = _Writer(batch, sid, existed, meta, report, imported)
            writer.redact = redact
            writer.defer = defer_mirror
            writer.write(imported.nodes)
            if defer_mirror and writer.written and imported.head:
                head = node_id_for(imported.head)
                if batch.head != head and batch.has_node(head):
                    batch.set_head(head)  # before the batch ends: its meta.json follows this head
        written = writer.written
        if defer_mirror and written:
            report.mirror_pending.add(sid)
    else:
        written = 0
    if written and not existed:
        report.new_sessions += 1
    if not store.exists(sid):
        return sid  # nothing to write yet (no nodes): no empty session folder
    if existed and _update_meta(store, sid, meta):
        report.touched.add(sid)
    if written:
        report.touched.add(sid)
        if not defer_mirror:  # (a backlog's batch set it)
            _set_head(store, sid, imported)  # a re-import leaves a head the user chose alone
    _link_children(store, sid, imported)
    if on_project is not None and imported.cwd:  # also a re-import (--force) of an unbound session
        bind_cwd(store, sid, imported.cwd, on_project, report)
    return sid


def bind_cwd(store: SessionStore, session_id: str, cwd: str, on_project: ProjectHook, report: ImportReport) -> None:
    """Hand a session whose cwd lies in a git repository to the projects layer."""
    try:
        if store.get_meta(session_id).project_id:
            return
    except OpmemError:
        return
    if find_git_root(cwd) is None:
        return
    try:
        on_project(session_id, cwd)
    except OpmemError as exc:
        report.warn(cwd, None, f"cannot bind session {session_id} to its project: {exc}")


# ---------------------------------------------------------------------------------------------


def _meta_fields(store: SessionStore, imported: ImportedSession, sid: str) -> dict[str, Any]:
    """meta.json fields for this session as the importer sees it now."""
    extra = dict(imported.extra)
    title_source = extra.get("title_source") if imported.title else ""
    meta: dict[str, Any] = {
        "source": imported.source,
        "source_ref": {"file": imported.source_file, "native_id": imported.native_id},
        "kind": imported.kind,
        "cwd": imported.cwd,
        "model": imported.model,
        "git_branch": imported.git_branch,
        "source_extra": {k: v for k, v in extra.items() if k not in RESERVED_EXTRA},
    }
    if imported.title:
        meta["title"] = imported.title
        meta["title_source"] = title_source if title_source in ("user", "llm") else "llm"
        meta["imported_title"] = imported.title
    if imported.parent_native_id:
        parent = resolve_session_id(store, imported.source, imported.parent_native_id)
        meta["parent_session"] = parent
        if imported.parent_node:
            meta["parent_node"] = node_id_for(imported.parent_node)
        else:
            known = _parent_link(store, parent, sid)
            if known:
                meta["parent_node"] = known
    return meta


def _parent_link(store: SessionStore, parent: str, child: str) -> str | None:
    try:
        if not store.exists(parent):
            return None
        links = store.get_meta(parent).extra.get("subagents")
    except OpmemError:
        return None
    if isinstance(links, Mapping):
        node = links.get(child)
        return node if isinstance(node, str) else None
    return None


def _update_meta(store: SessionStore, sid: str, meta: Mapping[str, Any]) -> bool:
    """Refresh what the importer owns (True when something changed); a title the user set in opmem is never replaced."""
    current = store.get_meta(sid)
    stored = dict(current.extra)
    stored.update(
        title=current.title, title_source=current.title_source, source=current.source, source_ref=current.source_ref
    )
    changes: dict[str, Any] = {}
    for key, value in meta.items():
        if key in ("title", "title_source", "imported_title"):
            continue
        if key == "parent_node" and stored.get(key):
            continue
        if stored.get(key) != value and not (value in ("", None) and key not in stored):
            changes[key] = value
    title = meta.get("title")
    if title and title != current.title:
        ours = current.title_source in ("", "excerpt") or current.title == stored.get("imported_title")
        if ours:
            changes.update(title=title, title_source=meta["title_source"], imported_title=title)
    if changes:
        store.update_session(sid, **changes)
    return bool(changes)


def _set_head(store: SessionStore, sid: str, imported: ImportedSession) -> None:
    if not imported.head:
        return
    head = node_id_for(imported.head)
    try:
        if store.head(sid) != head and store.has_node(sid, head):
            store.switch_head(sid, head)
    except OpmemError:
        return


def _link_children(store: SessionStore, sid: str, imported: ImportedSession) -> None:
    """Record spawned sessions on the parent, and tell children imported before it."""
    children = imported.extra.get("children")
    if not isinstance(children, Mapping) or not children:
        return
    links = {
        resolve_session_id(store, imported.source, str(native)): node_id_for(str(node))
        for native, node in children.items()
    }
    current = store.get_meta(sid).extra.get("subagents")
    merged = dict(current) if isinstance(current, Mapping) else {}
    merged.update(links)
    if merged != current:
        store.update_session(sid, subagents=merged)
    for child, node in links.items():
        try:
            if store.exists(child) and not store.get_meta(child).extra.get("parent_node"):
                store.update_session(child, parent_session=sid, parent_node=node)
        except OpmemError:
            continue


class _Writer:
    """Appends the new nodes of one session and commits each turn that got new nodes."""

    def __init__(
        self,
        batch: SessionBatch,
        sid: str,
        existed: bool,
        meta: dict[str, Any],
        report: ImportReport,
        imported: ImportedSession,
    ) -> None:
        self.batch = batch
        self.sid = sid
        self.existed = existed
        self.meta = meta
        self.report = report
        self.imported = imported
        self.written = 0
        self.commits = 0
        self.dirty: dict[str, bool] = {}  # chain node -> its turn has uncommitted new nodes
        self.latest_child: dict[str, str] = {}
        self.known: set[str] = set()  # node ids present in the store (written or found)
        self.user_line: dict[str, bool] = {}  # chain node -> its line holds a user node
        self.late_tool = False  # a tool of a turn written by an earlier import
        self.prefetched = False
        self.redact = False  # store the nodes redacted
        self.defer = False  # a backlog: the mirror is written afterwards (no commit here)
        self.node_ids: dict[str, str] = {}  # source id -> node id (each is named ~3 times: id, parent, caller)

    def present(self, node_id: str) -> bool:
        if node_id in self.known:
            return True
        if self.existed and not self.prefetched and self.batch.has_node(node_id):
            self.known.add(node_id)
            return True
        return False

    def write(self, nodes: tuple[Node, ...]) -> None:
        if self.existed and len(nodes) > PREFETCH_OVER:
            # One read of the stored ids instead of a locked lookup per node (a re-import).
            self.known.update(self.batch.node_ids())
            self.prefetched = True
        for node in nodes:
            self._one(node)
        self._commit_tips()

    def node_id(self, source_id: str) -> str:
        nid = self.node_ids.get(source_id)
        if nid is None:
            nid = self.node_ids[source_id] = node_id_for(source_id)
        return nid

    def _one(self, node: Node) -> None:
        nid = self.node_id(node.id)
        parent = self.node_id(node.parent_id) if node.parent_id else None
        called_by = self.node_id(node.called_by) if node.called_by else None
        if called_by is not None and not self.present(called_by):
            self.report.warn(self.imported.source_file, None, f"{node.id}: its caller is missing; kept as a plain node")
            called_by = None
        if parent is not None and not self.present(parent):
            self.report.warn(self.imported.source_file, None, f"{node.id}: its parent is missing; kept as a root")
            parent = None
        is_tool = called_by is not None
        if (
            not is_tool
            and node.role == "user"
            and parent is not None
            and self.dirty.get(parent)
            and self._has_user(parent)
        ):
            self._commit(parent)
        new = not self.present(nid)
        if new:
            if self.redact:
                node = redact_node(node)
            metadata = dict(node.metadata)
            metadata["source_id"] = node.id
            self.batch.append(
                node.role,
                node.content,
                parent_id=parent if not is_tool else called_by,
                called_by=called_by,
                name=node.name,
                input=node.input,
                metadata=metadata,
                node_id=nid,
                created_at=node.created_at or None,
                session_meta=self.meta if not self.existed and not self.written else None,
            )
            self.known.add(nid)
            self.written += 1
            self.report.nodes += 1
        if is_tool:
            if new and called_by in self.dirty:
                tip = called_by
                while tip in self.latest_child:
                    tip = self.latest_child[tip]
                self.dirty[tip] = True
            elif new:
                self.late_tool = True
            return
        carried = self.dirty.get(parent, False) if parent is not None and node.role != "user" else False
        self.dirty[nid] = new or carried
        self.user_line[nid] = node.role == "user" or (parent is not None and self._has_user(parent))
        if parent is not None:
            self.latest_child[parent] = nid

    def _commit(self, head: str | None) -> None:
        if head is not None:
            self.dirty[head] = False
        if self.defer:  # the turn commit the mirror backlog will write for it
            self.report.turns += 1
            return
        try:
            oid = self.batch.commit_turn(head)
        except OpmemError as exc:  # the node files are safe; a later open backfills git
            self.report.warn(self.imported.source_file, None, f"session {self.sid}: commit failed: {exc}")
            return
        if oid:
            self.commits += 1
            self.report.turns += 1

    def _has_user(self, node_id: str) -> bool:
        """Whether the line up to `node_id` holds a user node (else it is a preamble)."""
        if node_id in self.user_line:
            return self.user_line[node_id]
        seen: list[str] = []
        cur: str | None = node_id
        found = False
        while cur is not None and cur not in self.user_line:
            seen.append(cur)
            try:
                stored = self.batch.node(cur)
            except OpmemError:
                break
            if stored.role == "user" and stored.called_by is None:
                found = True
                break
            cur = stored.parent_id
        else:
            found = found or (cur is not None and self.user_line[cur])
        for item in seen:
            self.user_line[item] = found
        return found

    def _commit_tips(self) -> None:
        # A line with no user node yet (a preamble) waits: its commit would count as a turn.
        tips = [
            nid for nid, dirty in self.dirty.items() if dirty and nid not in self.latest_child and self._has_user(nid)
        ]
        head = node_id_for(self.imported.head) if self.imported.head else None
        tips.sort(key=lambda nid: nid == head)  # the current line last, so HEAD follows it
        for tip in tips:
            self._commit(tip)
        if self.late_tool and not tips:
            self._commit(None)  # the store's current head: its turn commit picks the tool up
