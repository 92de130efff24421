"""Stage 1, collect: the nodes added since each session's cursor, and the project commits since the last run.

Everything is read through the store's public API and the provenance read layer
(backend/store/provenance.py): every branch, tool nodes and `reads` included. New nodes are
grouped into turns (a user node and everything answering it on any branch); a turn that grew
since the last run is collected whole, so its work event is rewritten and supersedes the old one.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..importers.registry import CODING_SOURCES as IMPORTED_CODING_SOURCES
from ..memory.records import GLOBAL, project_scope
from ..model import SESSION_ID_RE, CorruptFile, Node, OpmemError, SessionMeta, SessionNotFound
from ..privacy.redact import map_strings, redact_text, redact_value, with_fields
from ..projects.folders import folder_project, stands_for_a_project
from ..projects.identity import project_folder, recorded_remote, repository_identity
from ..projects.registry import Project, ProjectRegistry
from ..safe_text import plain
from ..store.sessions import SessionStore
from .injected import mark_injected
from .model import (
    CODING,
    CONVERSATION,
    Collected,
    CollectedTurn,
    ProjectCommit,
    ProjectCommits,
    SessionBatch,
    SessionInfo,
)
from .state import DistillState, SessionCursor, trusted_stamp

# A session of a coding agent without tool calls (a question asked in Cursor's chat) is still
# not a personal conversation: each importer says whether its agent is one (`Importer.coding`).
CODING_SOURCES = IMPORTED_CODING_SOURCES | {"opmem"}
# A session with more new nodes than this is distilled in several batches (cut at seq bounds).
BATCH_NODES = 2000
# The first run over a project takes at most this many of its commits (newest first).
FIRST_RUN_COMMITS = 200
MAX_NEW_COMMITS = 2000


@dataclass(frozen=True, slots=True)
class Pending:
    """A session whose history folder changed since its cursor."""

    session_id: str
    cursor: SessionCursor
    stamp: int  # the folder's mtime now (before reading), kept when the batch is durable
    folder: str = ""


def history_stamp(folder: str) -> int | None:
    try:
        return os.stat(folder + "/history").st_mtime_ns
    except OSError:
        return None


def newest_seq(folder: str) -> int:
    """The highest seq among a session's node files, from their names (`NNNNNN-r-<id>.json`); -1 if none."""
    best = -1
    try:
        with os.scandir(folder + "/history") as entries:
            for entry in entries:
                head = entry.name.partition("-")[0]
                if head.isdigit() and entry.name.endswith(".json"):
                    best = max(best, int(head))
    except OSError:
        return -1
    return best


def change_token(store: SessionStore) -> str:
    """The store's change token (rewritten whenever it writes a session); "" when there is none."""
    try:
        return store.changed_path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def session_folders(store: SessionStore) -> Iterator[tuple[str, str]]:
    """(id, folder) of every session folder, without opening any: the cheap walk of an idle run."""
    try:
        located = store.locations()
    except CorruptFile:
        located = {}
    seen: set[str] = set()
    try:
        entries = sorted(os.scandir(store.root), key=lambda e: e.name)
    except FileNotFoundError:
        entries = []
    match = SESSION_ID_RE.fullmatch
    for entry in entries:
        name = entry.name
        if name in located or not match(name) or not entry.is_dir():
            continue
        seen.add(name)
        yield name, entry.path
    for sid in sorted(located):
        if sid not in seen and match(sid):
            yield sid, located[sid]


def pending_sessions(
    store: SessionStore, state: DistillState, *, only: Iterable[str] | None = None, again: bool = False
) -> list[Pending]:
    """Sessions with nodes the cursors have not covered; one stat per session, nothing opened."""
    wanted = set(only) if only is not None else None
    cursors = state.sessions
    fresh = SessionCursor()
    out: list[Pending] = []
    for sid, folder in session_folders(store):
        if wanted is not None and sid not in wanted:
            continue
        stamp = history_stamp(folder)
        if stamp is None:
            continue
        cursor = fresh if again else cursors.get(sid, fresh)
        if cursor.stamp and cursor.stamp == stamp:
            continue
        out.append(Pending(sid, cursor, stamp, folder))
    return out


def session_info(
    store: SessionStore, projects: ProjectRegistry | None, meta: SessionMeta, nodes: Sequence[Node]
) -> SessionInfo:
    project_id, project_name, root = meta.project_id, "", ""
    if meta.project_id and projects is not None:
        try:
            project = projects.get(meta.project_id)
            project_name, root = project.name, project.workdir
        except OpmemError:
            pass
    cwd = meta.extra.get("cwd")
    if not root and isinstance(cwd, str):
        root = cwd
    elif root:
        root = _own_root(root, cwd)
    speakers: dict[str, None] = {}
    has_tools = False
    for node in nodes:
        has_tools = has_tools or node.is_tool
        speaker = node.metadata.get("speaker")
        if isinstance(speaker, str) and speaker.strip() and node.role in ("user", "assistant"):
            speakers.setdefault(speaker.strip(), None)
    coding = has_tools or bool(meta.project_id) or (meta.source in CODING_SOURCES and not speakers)
    if meta.project_id:
        scope = project_scope(meta.project_id)
    elif meta.agent_id:
        scope = f"agent:{meta.agent_id}"
    elif coding and stands_for_a_project(root):  # a project folder the session is not bound to: its memory is its own
        bound = _bound_project(projects, root, recorded_remote(meta.extra), _branch(meta))
        if bound is not None:  # imported before its folder was bound, or a worktree / checkout of a bound one
            project_id, project_name, root = bound.id, bound.name, _own_root(bound.workdir, root)
            scope = project_scope(bound.id)
        else:  # keyed by its repository's main work tree when it is one here (a worktree too)
            keyed = project_folder(root)
            project_key, key_name = folder_project(keyed)
            scope = project_scope(project_key)
            if posixpath.normpath(keyed) != posixpath.normpath(root):
                project_name = key_name
    else:
        scope = GLOBAL
    return SessionInfo(
        session_id=meta.id,
        title=redact_text(plain(meta.title)),
        project_id=project_id,
        project_name=project_name,
        root=root,
        agent_id=meta.agent_id,
        source=meta.source,
        kind=CODING if coding else CONVERSATION,
        scope=scope,
        speakers=tuple(speakers),
        created_at=meta.created_at,
    )


def _own_root(workdir: str, cwd: object) -> str:
    """What a session's file paths are relative to: its project's folder, unless it ran in a
    worktree or another checkout of the project elsewhere (then that work tree's root)."""
    if not isinstance(cwd, str) or not cwd.startswith("/") or not workdir:
        return workdir
    if cwd == workdir or cwd.startswith(workdir.rstrip("/") + "/"):
        return workdir
    here = repository_identity(cwd)
    if here is None:
        return workdir
    theirs = repository_identity(workdir)
    same = theirs is not None and (
        here.common_dir == theirs.common_dir or (here.remote and here.remote == theirs.remote)
    )
    return here.root if same else workdir


def _branch(meta: SessionMeta) -> str:
    branch = meta.extra.get("git_branch")
    return branch if isinstance(branch, str) else ""


def _bound_project(projects: ProjectRegistry | None, root: str, remote: str = "", branch: str = "") -> Project | None:
    if projects is None:
        return None
    try:
        found = projects.project_for(root, remote=remote, branch=branch)
        return projects.get(found) if found else None
    except (OpmemError, OSError):
        return None


def as_shown(node: Node) -> Node:
    """The node as the screen shows it, secrets masked: terminal escapes and control bytes out of
    its text, its tool name, its input and its metadata's strings, then every secret value
    replaced by its marker (backend/privacy). The memory (and the core.md handed to agents, and
    every LLM request the extractor makes) holds what a reader sees; coloured tool output and OSC
    titles are common in sessions, and so are tokens in env dumps and curl headers."""
    content = _shown(node.content)
    name = _shown(node.name) if node.name else node.name
    # keys are the importers' own names (redacted, not made plain); an empty input, metadata or
    # reads (None, {}, ()) holds no string, and map_strings would return it as it is
    tool_input = map_strings(node.input, _shown, keys=redact_text) if node.input else node.input
    metadata = map_strings(node.metadata, _shown, keys=redact_text) if node.metadata else node.metadata
    reads = redact_value(node.reads) if node.reads else node.reads
    return with_fields(node, content, name, tool_input, metadata, reads)


class _Unchanged:
    """Strings that plain() and redact_text() both leave as they are, up to `strings` of them and
    `chars` characters in all. Metadata keys and values, tool names and short prompts repeat from
    node to node, and so do long texts: a file read again, a tool's output a node holds as its
    content and again in its metadata, the context an agent puts before every session. Only an
    unchanged string is kept, so one that holds a secret is scanned every time it is shown."""

    def __init__(self, strings: int, chars: int) -> None:
        self.seen: set[str] = set()
        self.size = 0
        self.max_strings = strings
        self.max_chars = chars

    def add(self, text: str) -> None:
        if len(text) > self.max_chars // 16:
            return  # one huge text would push out everything else
        if len(self.seen) >= self.max_strings or self.size + len(text) > self.max_chars:
            self.seen.clear()
            self.size = 0
        self.seen.add(text)
        self.size += len(text)


_unchanged = _Unchanged(strings=50_000, chars=4_000_000)


def _shown(text: str) -> str:
    """A string as the screen shows it: plain, then its secrets masked (one walk, not two)."""
    if text in _unchanged.seen:
        return text
    out = redact_text(plain(text))
    if out is text:
        _unchanged.add(text)
    return out


def anchors(nodes: Sequence[Node]) -> dict[str, str]:
    """node id -> the id of the user node whose turn holds it ("" before the first user node)."""
    by_id = {n.id: n for n in nodes}
    found: dict[str, str] = {}
    for node in nodes:
        path: list[str] = []
        current: Node | None = node
        anchor = ""
        while current is not None:
            if current.id in found:
                anchor = found[current.id]
                break
            path.append(current.id)
            if current.called_by is not None:
                current = by_id.get(current.called_by)
            elif current.role == "user":
                anchor = current.id
                break
            else:
                current = by_id.get(current.parent_id) if current.parent_id else None
            if len(path) > len(nodes):  # a cycle in bad data: stop, not spin
                break
        for nid in path:
            found[nid] = anchor
    return found


def _turn_index(
    store: SessionStore, session_id: str, wanted: set[str], head: Mapping[str, tuple[int, str | None]] | None
) -> dict[str, tuple[int, str | None]]:
    """anchor id -> (turn number, turn commit): the head's line first (`head`, read with the nodes),
    then other leaves if needed."""
    index: dict[str, tuple[int, str | None]] = dict(head or {})

    def add(leaf: str) -> None:
        try:
            starts = store.turn_starts(session_id, head_id=leaf)
        except (SessionNotFound, OpmemError):
            return
        for user, found in starts.items():
            index.setdefault(user, found)  # a turn shared by several lines: as the first line numbers it

    if wanted <= index.keys():
        return index
    try:
        leaves = store.leaves(session_id)
    except SessionNotFound:
        return index
    for leaf in leaves:
        if wanted <= index.keys():
            break
        add(leaf)
    return index


def _chunks(new: Sequence[Node], size: int) -> list[Sequence[Node]]:
    return [new[i : i + size] for i in range(0, len(new), size)] or [new]


def collect_session(
    store: SessionStore,
    projects: ProjectRegistry | None,
    pending: Pending,
    *,
    batch_nodes: int = BATCH_NODES,
) -> list[SessionBatch]:
    """The new nodes of one session as batches of whole turns (empty when nothing is new)."""
    sid = pending.session_id
    if pending.folder and pending.cursor.seq >= 0 and newest_seq(pending.folder) <= pending.cursor.seq:
        return []  # the folder changed but holds no newer node (a left-over temp file, a copied home)
    try:
        snapshot = store.snapshot(sid)
    except SessionNotFound:
        return []
    meta = snapshot.meta
    # every node (seq > -1, as iter_nodes_since gives them): a grown turn is distilled whole
    nodes = [as_shown(n) for n in snapshot.nodes if n.seq > -1]
    new = [n for n in nodes if n.seq > pending.cursor.seq]
    if not new:
        return []
    info = session_info(store, projects, meta, nodes)
    anchor_of = anchors(nodes)
    first_anchor = next((n.id for n in nodes if n.role == "user" and not n.is_tool), "")
    if first_anchor:  # what precedes the first prompt (injected context) belongs to turn 1
        anchor_of = {nid: (a or first_anchor) for nid, a in anchor_of.items()}
    index = _turn_index(store, sid, set(anchor_of.values()) - {""}, snapshot.turn_starts)
    # turns are cut by the stored roles; extraction gets injected user text as system text
    nodes = mark_injected(meta, nodes)
    new = [n for n in nodes if n.seq > pending.cursor.seq]
    batches: list[SessionBatch] = []
    for chunk in _chunks(new, batch_nodes):
        end = chunk[-1].seq
        touched = dict.fromkeys(anchor_of.get(n.id, "") for n in chunk)
        groups: dict[str, list[Node]] = {a: [] for a in touched}
        for node in nodes:
            key = anchor_of.get(node.id, "")
            if key in groups and node.seq <= end:
                groups[key].append(node)
        turns = []
        for key, group in groups.items():
            number, commit = index.get(key, (None, None))
            turns.append(CollectedTurn(session=info, nodes=tuple(group), number=number, commit=commit))
        turns.sort(key=lambda t: t.nodes[0].seq)
        old = frozenset(n.id for t in turns for n in t.nodes if n.seq < chunk[0].seq)
        batches.append(
            SessionBatch(session=info, turns=tuple(turns), last_seq=end, first_seq=chunk[0].seq, old_nodes=old)
        )
    return batches


def collect_commits(
    projects: ProjectRegistry | None, state: DistillState, store: SessionStore | None = None
) -> list[ProjectCommits]:
    """Each project's commits since its cursor (newest first from HEAD), linked to turns when known."""
    if projects is None:
        return []
    try:
        listed = projects.list_projects()
    except OpmemError:
        return []
    out: list[ProjectCommits] = []
    for project in listed:
        try:
            commits = _new_commits(projects, project.id, state.projects.get(project.id))
        except OpmemError:
            continue  # a project folder that is gone or not a repository any more
        if commits is None:
            continue
        head, infos = commits
        linked = tuple(_linked(projects, project.id, project.name, info) for info in reversed(infos))
        out.append(ProjectCommits(project_id=project.id, commits=linked, head=head))
    return out


def _new_commits(projects: ProjectRegistry, project_id: str, cursor: Any) -> tuple[str, list[Any]] | None:
    page = projects.log(project_id, limit=1)
    if not page:
        return None
    head = page[0].oid
    if cursor is not None and cursor.head == head:
        return None
    limit = FIRST_RUN_COMMITS if cursor is None else MAX_NEW_COMMITS
    found: list[Any] = []
    after: str | None = None
    while len(found) < limit:
        page = projects.log(project_id, limit=min(100, limit - len(found)), after=after)
        if not page:
            break
        for info in page:
            if cursor is not None and (info.oid == cursor.head or info.time < cursor.time - 86400):
                return head, found
            found.append(info)
        after = page[-1].oid
    return head, found


def _linked(projects: ProjectRegistry, project_id: str, name: str, info: Any) -> ProjectCommit:
    session_id, turn, head_id = info.session_id, info.turn, ""
    try:
        links = projects.links_for_commit(project_id, info.oid)
    except OpmemError:
        links = []
    if links:
        best = links[0]
        session_id, turn, head_id = best.session_id, best.turn, best.head_id
    return ProjectCommit(
        project_id=project_id,
        project_name=name,
        oid=info.oid,
        summary=info.summary,
        message=info.message,
        time=info.time,
        author=info.author_name,
        session_id=session_id,
        turn=turn,
        head_id=head_id,
    )


def collect(
    store: SessionStore,
    projects: ProjectRegistry | None,
    state: DistillState,
    *,
    sessions: Iterable[str] | None = None,
    commits: bool = True,
    again: bool = False,
) -> Collected:
    """Everything new since the cursors in `state` (all of it in memory: the pipeline streams instead)."""
    batches: list[SessionBatch] = []
    for pending in pending_sessions(store, state, only=sessions, again=again):
        batches.extend(collect_session(store, projects, pending))
    return Collected(
        batches=tuple(batches),
        commits=tuple(collect_commits(projects, state, store)) if commits else (),
    )


def stamp_after(pending: Pending, now: float | None = None) -> int:
    return trusted_stamp(pending.stamp, now)
