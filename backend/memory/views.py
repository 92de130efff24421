"""Entity views: one readable Markdown page per entity, memory/graph/views/entity/<slug>.md.

    render_entity_view(memory, entity_id) -> str
    write_views(memory, entity_ids=None) -> ViewsWritten     all entities when None
    view_path(memory_root, entity_id) -> Path

A page holds the entity's type, id and scope, its aliases and why each was merged (and
whether undone), attributes, current relations, superseded history (from when to when, why,
replaced by what), timeline mentions, and provenance pointers (`session:<id>`, turn, commit).
An entity merged into another gets a short page pointing to its canonical one. File names come
from slugs.safe_name(entity id): nothing leaves the folder and no two entities share a file.
Entity text is untrusted: escapes and control characters are stripped and Markdown syntax is
escaped, so a name can neither style nor link anything. Pages depend only on the memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..model import Provenance
from ..store.files import write_atomic
from .core import clean
from .results import EntityRef, GraphEdge
from .slugs import safe_name
from .store import MemoryStore

VIEWS_DIR = "graph/views/entity"
RELATIONS_SHOWN = 200
MENTIONS_SHOWN = 50
SOURCES_SHOWN = 30
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~!&#])")


@dataclass(frozen=True, slots=True)
class ViewsWritten:
    written: int
    unchanged: int


def view_path(memory_root: Path, entity_id: str) -> Path:
    return memory_root / VIEWS_DIR / f"{safe_name(entity_id)}.md"


def md(text: str, limit: int = 160) -> str:
    """Untrusted text as inert Markdown: one line, no escapes, every syntax character escaped."""
    return _MARKDOWN.sub(r"\\\1", clean(text, limit))


def _day(t: float | None) -> str:
    if t is None:
        return "?"
    try:
        return f"{datetime.fromtimestamp(t, UTC):%Y-%m-%d}"
    except (OverflowError, OSError, ValueError):
        return "?"


def _pointer(p: Provenance) -> str:
    parts = [f"session:{md(p.session_id, 128)}"] if p.session_id else ["no session"]
    if p.turn is not None:
        parts.append(f"turn {p.turn}")
    if p.commit:
        parts.append(f"commit {md(p.commit[:12], 12)}")
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


def render_entity_view(memory: MemoryStore, entity_id: str) -> str:
    canonical = memory.canonical_id(entity_id)
    if canonical != entity_id:
        target = memory.entity_refs([canonical])[canonical]
        own = memory.entity_by_id(entity_id)
        reasons = [
            a.merge.reason for a in memory.aliases(canonical) if a.active and a.merged and a.merged.id == entity_id
        ]
        why = f": {md(reasons[0])}" if reasons else ""
        title = md(own.name if own else entity_id, 120)
        return f"# {title}\n\nMerged into {_link(target)}{why}.\n"
    entity = memory.entity(entity_id)
    out = [f"# {md(entity.name, 120)}", ""]
    out += [f"- Type: {md(entity.type, 60)}", f"- Id: {md(entity.id, 200)}", f"- Scope: {md(entity.scope, 140)}"]
    out += _aliases_section(memory, entity.id, entity.aliases)
    if entity.attrs:
        out += ["", "## Attributes", ""]
        out += [
            f"- {md(str(k), 60)}: {md(str(v), 200)}" for k, v in sorted(entity.attrs.items(), key=lambda kv: str(kv[0]))
        ]
    hood = memory.neighbors(entity.id, hops=1, include_superseded=True, limit=RELATIONS_SHOWN * 2, fan_out=1)
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
    page = memory.timeline(entity=entity.id, limit=MENTIONS_SHOWN)
    out += ["", "## Timeline mentions", ""]
    out += [f"- {_day(e.event_time)} {md(e.summary, 200)} {_pointer(e.provenance)}" for e in page.events] or ["- none"]
    if page.truncated:
        out.append(f"- … older mentions not shown (the newest {MENTIONS_SHOWN} are)")
    out += ["", "## Sources", ""]
    out += _sources(entity.provenance, (g.edge.provenance for g in hood.edges), (e.provenance for e in page.events))
    return "\n".join(out) + "\n"


def _aliases_section(memory: MemoryStore, entity_id: str, names: tuple[str, ...]) -> list[str]:
    infos = memory.aliases(entity_id)
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


def write_views(memory: MemoryStore, entity_ids: Iterable[str] | None = None) -> ViewsWritten:
    """Regenerate the pages of `entity_ids` (every entity when None); unchanged files stay untouched."""
    ids = sorted(set(memory.entity_ids() if entity_ids is None else entity_ids))
    folder = memory.root / VIEWS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written = unchanged = 0
    for entity_id in ids:
        if memory.entity_by_id(entity_id) is None:
            continue
        path = view_path(memory.root, entity_id)
        data = render_entity_view(memory, entity_id).encode("utf-8")
        try:
            if path.read_bytes() == data:
                unchanged += 1
                continue
        except OSError:
            pass
        write_atomic(path, data, durable=False)  # derived: rebuilt by the next run if lost
        written += 1
    return ViewsWritten(written, unchanged)
