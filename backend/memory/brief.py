"""A project's brief: the lines core.md leads with (ARCHITECTURE.md §5, §7).

From the knowledge edges the distiller wrote from the project entity (distill/extract/knowledge.py)
and the user's global ones, current values only (a replaced technology shows as "(was X)" beside
what replaced it, never as current):
    · stack: Python 3.11, Django, PostgreSQL, Celery, pytest (was nose), pnpm
    · test: pytest -q · run: make dev · lint: ruff check
    · state: tests failing: 3 failed (2026-11-28)
    · convention: Always write docstrings for public functions
    · decided 2026-11-29: Vitest replaces Jest as test framework
    · env: DATABASE_URL, REDIS_URL · endpoints: GET /api/items · ports: :8000
Each line carries the session of its newest fact. Lines come in importance order; the layout
(core.py) takes them while they fit. Everything else stays in the graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from .records import GLOBAL, entity_id, project_scope
from .results import GraphEdge
from .store import MemoryStore

CATEGORY_ORDER = (
    "language", "runtime", "web-framework", "meta-framework", "frontend-framework", "database", "orm",
    "migration-tool", "cache", "queue", "api", "css-framework", "ui-kit", "state-management", "http-client",
    "auth", "ai", "test-framework", "package-manager", "bundler", "linter", "formatter", "type-checker", "infra",
)  # fmt: skip
SLOTS = frozenset(
    {"test-framework", "orm", "migration-tool", "package-manager", "web-framework", "frontend-framework",
     "css-framework", "bundler", "linter", "formatter", "type-checker", "state-management", "http-client"}
)  # fmt: skip
COMMAND_KINDS = ("test", "build", "run", "lint", "format", "typecheck", "migrate", "deploy")
STATUS_KINDS = ("test", "build", "typecheck", "lint")
BRIEF_RELATIONS = frozenset(
    {"uses", "dropped", "convention", "env-var", "endpoint", "exposes", *SLOTS}
    | {f"{k}-command" for k in COMMAND_KINDS}
    | {f"{k}-status" for k in STATUS_KINDS}
)
STACK_ITEMS = 14
CONVENTIONS = 6
DECISIONS = 4


@dataclass(frozen=True, slots=True)
class BriefLine:
    text: str
    session_id: str
    importance: float  # the layout takes lines in this order, highest first


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


def is_brief_relation(relation: str) -> bool:
    return relation in BRIEF_RELATIONS or relation.endswith("-version")


def _newest(edges: Iterable[GraphEdge]) -> GraphEdge:
    return max(edges, key=lambda g: (g.edge.event_time, g.edge.id))


def _project_edges(memory: MemoryStore, project_id: str) -> tuple[str, list[GraphEdge]]:
    subject = entity_id("project", project_id)
    edges = memory.edges(scope=project_scope(project_id), include_superseded=True, limit=None, relations=None)
    return subject, [g for g in edges if g.edge.from_id == subject and is_brief_relation(g.relation)]


def project_brief(memory: MemoryStore, project_id: str) -> list[BriefLine]:
    subject, edges = _project_edges(memory, project_id)
    lines = _brief_from(memory, edges)
    lines += _decisions(memory, project_scope(project_id))
    lines += preference_lines(memory, limit=3, importance=0.55)
    return sorted(lines, key=lambda line: -line.importance)


def global_brief(memory: MemoryStore) -> list[BriefLine]:
    return preference_lines(memory, limit=12, importance=0.9)


def preference_lines(memory: MemoryStore, *, limit: int, importance: float) -> list[BriefLine]:
    user = entity_id("person", "user")
    edges = [
        g
        for g in memory.edges(scope=GLOBAL, relations=["convention", *SLOTS], limit=200)
        if g.edge.from_id == user and g.edge.scope == GLOBAL
    ]
    edges.sort(key=lambda g: -g.edge.event_time)
    names = memory.entity_refs({g.target for g in edges})
    out = []
    for rank, g in enumerate(edges[:limit]):
        ref = names.get(g.target)
        if ref is None:
            continue
        label = "preference" if g.relation == "convention" else g.relation
        out.append(BriefLine(f"· {label}: {ref.name}", g.edge.provenance.session_id, importance - rank * 0.01))
    return out


def _brief_from(memory: MemoryStore, edges: list[GraphEdge]) -> list[BriefLine]:
    current = [g for g in edges if g.edge.superseded_by is None]
    retired = [g for g in edges if g.edge.superseded_by is not None]
    ids = {g.target for g in edges}
    refs = memory.entity_refs(ids)
    categories = {eid: _category(memory, eid) for eid in ids if refs.get(eid) and refs[eid].type == "tech"}
    out: list[BriefLine] = []
    # stack: current technologies by category (a slot's value first), versions beside their language
    by_rel: dict[str, list[GraphEdge]] = {}
    for g in current:
        by_rel.setdefault(g.relation, []).append(g)
    slot_value = {rel: _newest(gs).target for rel, gs in by_rel.items() if rel in SLOTS}
    slot_of_category = {c: c for c in SLOTS}
    versions = {}
    for rel, gs in by_rel.items():
        if rel.endswith("-version"):
            versions[rel[: -len("-version")]] = refs[_newest(gs).target].name if _newest(gs).target in refs else ""
    was: dict[str, str] = {}
    for g in retired:
        if g.relation in SLOTS and g.relation in slot_value and g.target != slot_value[g.relation]:
            ref = refs.get(g.target)
            if ref is not None and slot_value[g.relation] not in was:
                was[slot_value[g.relation]] = ref.name
    stack: dict[str, tuple[int, float, str, GraphEdge]] = {}
    for g in by_rel.get("uses", []) + [g for rel in SLOTS for g in by_rel.get(rel, [])]:
        ref = refs.get(g.target)
        category = categories.get(g.target, "")
        if ref is None or ref.type != "tech" or not category or category == "library":
            continue
        slot = slot_of_category.get(category)
        if slot and slot in slot_value and slot_value[slot] != g.target:
            # another value holds the slot: this one shows only if the slot's value is older
            holder = _newest(by_rel[slot])
            if holder.edge.event_time >= g.edge.event_time:
                continue
        rank = CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER else len(CATEGORY_ORDER)
        old = stack.get(g.target)
        if old is None or g.edge.event_time > old[3].edge.event_time:
            stack[g.target] = (rank, -g.confidence, ref.name, g)
    items = sorted(stack.values(), key=lambda item: (item[0], item[1], item[2]))[:STACK_ITEMS]
    if items:
        parts = []
        for _, _, name, g in items:
            key = _slug(name)
            text = versions.get(key) or name
            if g.target in was:
                text += f" (was {was[g.target]})"
            parts.append(text)
        newest = _newest(g for *_, g in items)
        out.append(BriefLine("· stack: " + ", ".join(parts), newest.edge.provenance.session_id, 1.0))
    # commands, most recent kind first within the canonical order
    commands = []
    for kind in COMMAND_KINDS:
        gs = by_rel.get(f"{kind}-command")
        if gs:
            g = _newest(gs)
            if g.target in refs:
                commands.append((kind, refs[g.target].name, g))
    if commands:
        chunk: list[str] = []
        chunk_edges: list[GraphEdge] = []
        for kind, name, g in commands:
            piece = f"{kind}: {name}"
            if chunk and len(" · ".join([*chunk, piece])) > 150:
                out.append(_joined(chunk, chunk_edges, 0.95))
                chunk, chunk_edges = [], []
            chunk.append(piece)
            chunk_edges.append(g)
        out.append(_joined(chunk, chunk_edges, 0.95 - 0.001 * len(out)))
    # state: the latest outcome of each checked kind; failing first
    states = []
    for kind in STATUS_KINDS:
        gs = by_rel.get(f"{kind}-status")
        if gs:
            g = _newest(gs)
            ref = refs.get(g.target)
            if ref is not None:
                states.append((("failing" not in ref.name), f"{ref.name} ({_day(g.edge.event_time)})", g))
    if states:
        states.sort(key=lambda s: s[0])
        failing = not states[0][0]
        text = "· state: " + " · ".join(s[1] for s in states)
        out.append(BriefLine(text, _newest(s[2] for s in states).edge.provenance.session_id, 0.9 if failing else 0.6))
    # conventions, newest first
    conventions = sorted(by_rel.get("convention", []), key=lambda g: -g.edge.event_time)[:CONVENTIONS]
    for rank, g in enumerate(conventions):
        ref = refs.get(g.target)
        if ref is not None:
            out.append(BriefLine(f"· convention: {ref.name}", g.edge.provenance.session_id, 0.85 - rank * 0.02))
    # dropped technologies still dropped (nothing newer brought them back)
    drops = [g for g in by_rel.get("dropped", []) if g.target not in stack and g.target in refs]
    if drops:
        names = ", ".join(dict.fromkeys(refs[g.target].name for g in sorted(drops, key=lambda g: -g.edge.event_time)))
        out.append(BriefLine(f"· dropped: {names}", _newest(drops).edge.provenance.session_id, 0.5))
    # where it listens and what it reads from the environment
    pieces = []
    where = []
    for rel, label, limit in (("env-var", "env", 8), ("endpoint", "endpoints", 6), ("exposes", "ports", 4)):
        gs = sorted(by_rel.get(rel, []), key=lambda g: -g.edge.event_time)[:limit]
        names = [refs[g.target].name for g in gs if g.target in refs]
        if names:
            pieces.append(f"{label}: " + ", ".join(dict.fromkeys(names)))
            where += gs
    if pieces:
        out.append(BriefLine("· " + " · ".join(pieces), _newest(where).edge.provenance.session_id, 0.65))
    return out


def _slug(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _joined(chunk: list[str], edges: list[GraphEdge], importance: float) -> BriefLine:
    return BriefLine("· " + " · ".join(chunk), _newest(edges).edge.provenance.session_id, importance)


def _category(memory: MemoryStore, eid: str) -> str:
    entity = memory.entity_by_id(eid)
    return str(entity.attrs.get("category", "")) if entity is not None else ""


def _decisions(memory: MemoryStore, scope: str) -> list[BriefLine]:
    page = memory.timeline(kinds=["decision"], scope=scope, limit=DECISIONS * 3)
    out = []
    for rank, ev in enumerate(list(page.events)[:DECISIONS]):
        if ev.scope == GLOBAL:
            continue
        summary = ev.summary
        for prefix in ("Decided: ", "Changed: "):
            if summary.startswith(prefix):
                summary = summary[len(prefix) :]
        out.append(
            BriefLine(f"· decided {_day(ev.event_time)}: {summary}", ev.provenance.session_id, 0.75 - rank * 0.03)
        )
    return out
