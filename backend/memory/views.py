"""Entity views: one readable Markdown page per entity, memory/graph/views/entity/<slug>.md.

    render_entity_view(memory, entity_id) -> str
    write_views(memory, entity_ids=None, stamp="", sessions_token="", session_key=None) -> ViewsWritten
    view_path(memory_root, entity_id) -> Path

A page holds the entity's type, id and scope, its aliases and why each was merged (and
whether undone), attributes, current relations, superseded history (from when to when, why,
replaced by what), timeline mentions, and provenance pointers (`session:<id>`, turn, commit).
An entity merged into another gets a short page pointing to its canonical one. File names come
from slugs.safe_name(entity id): nothing leaves the folder and no two entities share a file.
Entity text is untrusted: escapes and control characters are stripped and Markdown syntax is
escaped, so a name can neither style nor link anything. Pages depend only on the memory.

A page is rendered only when its inputs changed: VIEWS_STATE (beside the pages) keeps, per
entity, the caller's `stamp` of the memory's state, a hash of the page's inputs (entity,
aliases, relations, mentions) and the file's size and mtime; and how far each log was read
and each named session's visibility. Only the entities the records appended since then can
touch (their ends and mentions, both sides of a supersede, the alias history of a merge and
the pages linking it) and those of a session whose visibility changed are looked at; a log
rewritten or replaced makes every page be looked at. The same stamp skips a page without a
query; the same inputs hash skips rendering it. A lost or stale state file only costs a
re-render: the page itself is still compared byte for byte before it is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from ..model import OpmemError, Provenance
from ..store.files import write_atomic
from .cache import parse_log_line
from .core import clean
from .logs import ReadState, fingerprint, log_names, read_lines
from .records import AliasMerge, AliasUnmerge, Edge, Entity, Event, Patch
from .results import AliasInfo, EntityRef, GraphEdge, Neighborhood, TimelinePage
from .slugs import safe_name
from .store import MemoryStore

VIEWS_DIR = "graph/views/entity"
VIEWS_STATE = "graph/views/state.json"
STATE_VERSION = 1
RELATIONS_SHOWN = 200
MENTIONS_SHOWN = 50
SOURCES_SHOWN = 30
_TAIL_CHUNK = 1 << 16
SessionKey = Callable[[str], str]
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~!&#])")


@dataclass(frozen=True, slots=True)
class ViewsWritten:
    written: int
    unchanged: int
    rendered: int = 0  # pages whose text was made (written or found equal); the rest were skipped


def view_path(memory_root: Path, entity_id: str) -> Path:
    return memory_root / VIEWS_DIR / f"{safe_name(entity_id)}.md"


@lru_cache(maxsize=1 << 16)
def md(text: str, limit: int = 160) -> str:
    """Untrusted text as inert Markdown: one line, no escapes, every syntax character escaped.

    Cached: the same session ids and names recur on every line of every page."""
    return _MARKDOWN.sub(r"\\\1", clean(text, limit))


def _day(t: float | None) -> str:
    if t is None:
        return "?"
    try:
        return f"{datetime.fromtimestamp(t, UTC):%Y-%m-%d}"
    except (OverflowError, OSError, ValueError):
        return "?"


def _pointer(p: Provenance) -> str:
    return _pointer_text(p.session_id, p.turn, p.commit)


@lru_cache(maxsize=1 << 14)
def _pointer_text(session_id: str, turn: int | None, commit: str | None) -> str:
    parts = [f"session:{md(session_id, 128)}"] if session_id else ["no session"]
    if turn is not None:
        parts.append(f"turn {turn}")
    if commit:
        parts.append(f"commit {md(commit[:12], 12)}")
    return "↪ " + ", ".join(parts)


def _link(ref: EntityRef) -> str:
    return f"[{md(ref.name, 80)}]({safe_name(ref.id)}.md)"


def _relation_line(g: GraphEdge, center: str, names: dict[str, EntityRef]) -> str:
    rel = md(g.relation, 60)
    if g.source == center:
        shape = f"──{rel}──► {_link(names[g.target])}"
    else:
        shape = f"{_link(names[g.source])} ──{rel}──► this"
    return shape


@dataclass(frozen=True, slots=True)
class _Merged:
    """The inputs of the page of an entity merged into another."""

    target: EntityRef
    name: str
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Inputs:
    """Everything a canonical entity's page is made from (the queries, done once)."""

    entity: Entity
    aliases: tuple[AliasInfo, ...]
    hood: Neighborhood
    page: TimelinePage

    def digest(self) -> str:
        edges = [
            (g.edge.id, g.edge.superseded_by, g.source, g.target, g.valid_to, g.superseded_reason)
            for g in self.hood.edges
        ]
        names = sorted(self.hood.entities.items())
        events = [(e.id, e.superseded_by) for e in self.page.events]
        flags = (self.hood.truncated, self.page.truncated)
        text = repr((self.entity, self.aliases, edges, names, events, flags))
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _gather(memory: MemoryStore, entity_id: str) -> _Inputs | _Merged:
    canonical = memory.canonical_id(entity_id)
    if canonical != entity_id:
        own = memory.entity_by_id(entity_id)
        reasons = tuple(
            a.merge.reason for a in memory.aliases(canonical) if a.active and a.merged and a.merged.id == entity_id
        )
        return _Merged(memory.entity_refs([canonical])[canonical], own.name if own else entity_id, reasons)
    entity = memory.entity(entity_id)
    hood = memory.neighbors(entity.id, hops=1, include_superseded=True, limit=RELATIONS_SHOWN * 2, fan_out=1)
    page = memory.timeline(entity=entity.id, limit=MENTIONS_SHOWN)
    return _Inputs(entity, memory.aliases(entity.id), hood, page)


def render_entity_view(memory: MemoryStore, entity_id: str) -> str:
    return _render(_gather(memory, entity_id))


def _render(inputs: _Inputs | _Merged) -> str:
    if isinstance(inputs, _Merged):
        why = f": {md(inputs.reasons[0])}" if inputs.reasons else ""
        return f"# {md(inputs.name, 120)}\n\nMerged into {_link(inputs.target)}{why}.\n"
    entity, hood, page = inputs.entity, inputs.hood, inputs.page
    out = [f"# {md(entity.name, 120)}", ""]
    out += [f"- Type: {md(entity.type, 60)}", f"- Id: {md(entity.id, 200)}", f"- Scope: {md(entity.scope, 140)}"]
    out += _aliases_section(inputs.aliases, entity.aliases)
    if entity.attrs:
        out += ["", "## Attributes", ""]
        out += [
            f"- {md(str(k), 60)}: {md(str(v), 200)}" for k, v in sorted(entity.attrs.items(), key=lambda kv: str(kv[0]))
        ]
    names = dict(hood.entities)
    current = [g for g in hood.edges if g.edge.superseded_by is None]
    retired = [g for g in hood.edges if g.edge.superseded_by is not None]
    out += ["", "## Current relations", ""]
    out += [
        f"- {_relation_line(g, entity.id, names)} (confidence {g.confidence:.2f}, since {_day(g.edge.event_time)})"
        f" {_pointer(g.edge.provenance)}"
        for g in current[:RELATIONS_SHOWN]
    ] or ["- none"]
    if retired:
        out += ["", "## History (superseded)", ""]
        out += [
            f"- {_relation_line(g, entity.id, names)}, {_day(g.edge.event_time)} → {_day(g.valid_to)}"
            f", superseded: {md(g.superseded_reason) or 'no reason given'} {_pointer(g.edge.provenance)}"
            for g in retired[:RELATIONS_SHOWN]
        ]
    if hood.truncated:
        out.append(f"- … more relations than the {RELATIONS_SHOWN * 2} shown")
    out += ["", "## Timeline mentions", ""]
    out += [f"- {_day(e.event_time)} {md(e.summary, 200)} {_pointer(e.provenance)}" for e in page.events] or ["- none"]
    if page.truncated:
        out.append(f"- … older mentions not shown (the newest {MENTIONS_SHOWN} are)")
    out += ["", "## Sources", ""]
    out += _sources(entity.provenance, (g.edge.provenance for g in hood.edges), (e.provenance for e in page.events))
    return "\n".join(out) + "\n"


def _aliases_section(infos: tuple[AliasInfo, ...], names: tuple[str, ...]) -> list[str]:
    if not infos and not names:
        return []
    out = ["", "## Aliases", ""]
    merged_names = set()
    for info in infos:
        who = md(info.merged.name, 120) if info.merged else md(info.merge.merged, 120)
        merged_names.add(info.merged.name if info.merged else info.merge.merged)
        line = f"- {who}: merged {_day(info.merge.at)}, {md(info.merge.reason) or 'no reason given'}"
        line += f" (score {info.merge.score:.2f})"
        if info.unmerge is not None:
            line += f"; undone {_day(info.unmerge.at)}: {md(info.unmerge.reason) or 'no reason given'}"
        out.append(line)
    out += [f"- {md(n, 120)}: also written this way" for n in names if n not in merged_names]
    return out


def _sources(first: Provenance | None, *groups: Iterable[Provenance]) -> list[str]:
    seen: dict[tuple, Provenance] = {}
    for p in ([first] if first else []) + [p for group in groups for p in group]:
        key = (p.session_id, p.turn, p.commit)
        if p.session_id and key not in seen:
            seen[key] = p
    lines = [f"- {_pointer(p)}{' (first seen)' if first is not None and p is first else ''}" for p in seen.values()]
    if len(lines) > SOURCES_SHOWN:
        lines = [*lines[:SOURCES_SHOWN], f"- … {len(lines) - SOURCES_SHOWN} more"]
    return lines or ["- none"]


def _load_state(memory: MemoryStore) -> tuple[dict[str, list], dict]:
    """(per-entity entries, the base: how far the logs were read and the sessions' visibility)."""
    try:
        state = json.loads((memory.root / VIEWS_STATE).read_bytes())
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        return {}, {}
    views, base = state.get("views"), state.get("base")
    return (views if isinstance(views, dict) else {}), (base if isinstance(base, dict) else {})


def _file_mark(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _log_ends(root: Path) -> dict[str, list]:
    """name -> [offset after its last complete line, inode, fingerprint there] of every log."""
    ends: dict[str, list] = {}
    for name in log_names(root):
        path = root / name
        try:
            with path.open("rb") as fh:
                st = os.fstat(fh.fileno())
                end = st.st_size
                while end > 0:  # back to the last "\n": a torn last line is not read yet
                    start = max(0, end - _TAIL_CHUNK)
                    fh.seek(start)
                    at = fh.read(end - start).rfind(b"\n")
                    if at >= 0:
                        end = start + at + 1
                        break
                    end = start
            ends[name] = [end, st.st_ino, _hashed_fingerprint(path, end)]
        except OSError:
            continue
    return ends


def _hashed_fingerprint(path: Path, offset: int) -> str:
    """logs.fingerprint hashed: the log's bytes (a session's text) never land in the views' state."""
    return hashlib.blake2b(fingerprint(path, offset).encode("ascii"), digest_size=16).hexdigest()


def _appended(root: Path, old: dict, new: dict[str, list]) -> list | None:
    """The records appended to the logs between two `_log_ends`; None when a log was rewritten,
    replaced or removed (or there is no `old`): then nothing is known and every view is checked."""
    if not isinstance(old, dict) or not old or any(name not in new for name in old):
        return None
    records = []
    for name, (end, ino, _) in new.items():
        was = old.get(name)
        offset = 0
        if was is not None:
            if not (isinstance(was, list) and len(was) == 3 and was[1] == ino and isinstance(was[0], int)):
                return None
            offset = was[0]
            if offset > end or _hashed_fingerprint(root / name, offset) != was[2]:
                return None
        if offset == end:
            continue
        state = ReadState(offset, 0)
        for raw in read_lines(root / name, state):
            if state.offset > end:
                break  # appended after the ends were taken: the next call reads it
            try:
                records.append(parse_log_line(name, raw.data, name))
            except (OpmemError, ValueError, RecursionError):
                continue  # a bad line: the memory skips it too
    return records


def _dirty(memory: MemoryStore, records: list) -> set[str]:
    """Every entity whose page these appended records can change (a superset; never fewer)."""
    ids: set[str] = set()  # events and edges
    named: set[str] = set()  # entities whose name or group moved: the pages linking them too
    for record in records:
        if isinstance(record, (Event, Edge)):
            ids.add(record.id)
        elif isinstance(record, Patch):
            ids.update((record.id, record.by))
        elif isinstance(record, Entity):
            named.add(record.id)
        elif isinstance(record, AliasMerge):
            named.update((record.into, record.merged))
        elif isinstance(record, AliasUnmerge):
            merge = memory.alias_merge(record.id)
            if merge is not None:
                named.update((merge.into, merge.merged))
    touched: set[str] = set()
    if ids:
        ids |= memory.supersede_links(ids)  # a patch that waited for its record takes effect now
        touched |= memory.record_entities(ids)
    if named:
        named = memory.alias_component(named)
        touched |= named | memory.edge_ends(named)
    return memory.alias_groups(touched) if touched else set()


def _visibility(
    memory: MemoryStore, known: dict, named: Iterable[str], key: SessionKey | None, trusted: bool
) -> tuple[dict[str, list], list[str]]:
    """[key, shown] of each named session, and the sessions whose answer changed. A session whose
    key is the one kept (and `trusted`: what else visibility depends on is the same) is not asked."""
    now: dict[str, list] = {}
    moved = []
    for sid in sorted(set(named)):
        mark = key(sid) if key is not None else None
        was = known.get(sid)
        was = was if isinstance(was, list) and len(was) == 2 else None
        if trusted and mark is not None and was is not None and was[0] == mark:
            now[sid] = was
            continue
        shown = memory.session_visible(sid)
        if was is not None and was[1] != shown:
            moved.append(sid)
        now[sid] = [mark, shown]
    return now, moved


def write_views(
    memory: MemoryStore,
    entity_ids: Iterable[str] | None = None,
    stamp: str = "",
    sessions_token: str = "",
    session_key: SessionKey | None = None,
) -> ViewsWritten:
    """Regenerate the pages that may have changed; unchanged files stay untouched.

    Which pages: those of the entities the records appended since the last call can touch
    (VIEWS_STATE keeps how far each log was read), of the sessions whose visibility changed, and
    of `entity_ids`; every entity when a log was rewritten or nothing was kept. `stamp`: the
    caller's token of everything a page depends on (the memory's logs and the sessions that
    exist); a page written under the same stamp and untouched since is skipped without a query.
    `sessions_token` (what every session's visibility depends on: the exclusions, ...) and
    `session_key` (sid -> a cheap key of that session's own part, its meta.json's stat): when
    both are the same as last time a session's visibility is not asked again. Every page is
    compared before it is written.
    """
    folder = memory.root / VIEWS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    state, base = _load_state(memory)
    ends = _log_ends(memory.root)  # before any query: a record appended meanwhile is read next time
    appended = _appended(memory.root, base.get("logs"), ends)
    all_ids = memory.entity_ids()
    seen = base.get("sessions") if isinstance(base.get("sessions"), dict) else {}
    trusted = bool(sessions_token) and sessions_token == base.get("sessions_token")
    if appended is None:
        dirty = None
        sessions, _ = _visibility(memory, seen, memory.sessions_named(), session_key, trusted)
    else:
        dirty = _dirty(memory, appended) | set(() if entity_ids is None else entity_ids)
        new = {p.session_id for r in appended if (p := getattr(r, "provenance", None)) is not None}
        sessions, moved = _visibility(memory, seen, {*seen, *new} - {""}, session_key, trusted)
        if moved:
            dirty |= memory.alias_groups(memory.session_entities(moved))
    ids = sorted(set(all_ids if entity_ids is None or dirty is not None else entity_ids))
    written = unchanged = rendered = 0
    for entity_id in ids:
        path = view_path(memory.root, entity_id)
        known = state.get(entity_id)
        mark = _file_mark(path)
        fresh = isinstance(known, list) and len(known) == 3 and known[2] == mark
        if fresh and ((stamp and known[0] == stamp) or (dirty is not None and entity_id not in dirty)):
            unchanged += 1
            continue
        if memory.entity_by_id(entity_id) is None:
            continue
        if memory.entity_hidden(entity_id):  # learnt only from a private (or excluded, deleted) session
            path.unlink(missing_ok=True)
            state.pop(entity_id, None)  # not even its id is kept (it may be the secret): asked again next time
            continue
        inputs = _gather(memory, entity_id)
        digest = inputs.digest() if isinstance(inputs, _Inputs) else repr(inputs)
        if fresh and known[1] == digest:
            state[entity_id] = [stamp, digest, mark]
            unchanged += 1
            continue
        rendered += 1
        data = _render(inputs).encode("utf-8")
        try:
            same = path.read_bytes() == data
        except OSError:
            same = False
        if same:
            unchanged += 1
        else:
            write_atomic(path, data, durable=False)  # derived: rebuilt by the next run if lost
            written += 1
        state[entity_id] = [stamp, digest, _file_mark(path)]
    # a partial call over a memory not followed (entity_ids, no base) leaves the base for a whole one
    whole = entity_ids is None or dirty is not None
    kept = {"logs": ends, "sessions": sessions, "sessions_token": sessions_token} if whole else {}
    payload = json.dumps({"version": STATE_VERSION, "views": state, "base": kept}, ensure_ascii=False, sort_keys=True)
    write_atomic(memory.root / VIEWS_STATE, payload.encode("utf-8", "surrogatepass"), durable=False)
    return ViewsWritten(written, unchanged, rendered)
