"""Stage 4, reconcile: contradictions on single-valued relations, and re-distilled duplicate events.

- An edge on a single-valued relation (config `[distill] single_valued`: listens-on, lives-in,
  ...) with the same subject and scope as a current edge but another value retires it, if it is
  newer in the world (event_time; values stated at the same moment stay current together); an older fact ingested late is itself retired by the current
  one, never the other way round. Edges restating the current value stay, side by side.
- Knowledge slots (the relation table, memory/relations.py: a project's test framework, ORM, package
  manager, its `*-command`, `*-version` and `*-status` relations) are single-valued whatever the config says.
  When a slot changes value, or a `dropped` edge names a technology, the subject's older stack
  edges to the old technology (`uses`, `depends-on`, its slot) are retired too: a replaced
  technology stays as history and is never current.
- A switch slot (a database, cache or queue the user says the project switched to) retires the
  subject's older stack edges to every other technology of that category (`category_of`).
- An event with the same `key` as a current one (the turn grew, an LLM re-run) supersedes it.
- Before all that, the fact gate (fact_gate.py) refuses facts about a session and facts that
  point to themselves, whatever extractor made them.
- Nothing else is ever retired, and every contradiction is reported (the pipeline logs it to
  memory/contradictions.jsonl).
The stage reads the memory through two callables, so it can be tested on plain lists.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace

from ..memory import relations
from ..memory.records import Edge, Event, Patch
from ..memory.relations import STACK_RELATIONS, SWITCH_RELATIONS
from .fact_gate import gate
from .model import Contradiction, Linked, Reconciled

DEFAULT_SINGLE_VALUED = (
    "listens-on",
    "version-of",
    "located-in",
    "prefers",
    "uses-version",
    "lives-in",
    "works-at",
)

STATE_SUFFIXES = ("-status", "-command")  # retired by the newer value without a contradiction logged
CurrentEdges = Callable[[str, str, str], Sequence[Edge]]  # (subject, relation, scope) -> current edges
CurrentEvents = Callable[[str], Sequence[Event]]  # key -> current events with that key
CategoryOf = Callable[[str], str]  # entity id -> its technology category ("" when none or unknown)


def _order(edge: Edge) -> tuple[float, float, str]:
    return (edge.event_time, edge.ingestion_time, edge.id)


def resolve_chain(edges: Iterable[Edge], *, at: float) -> tuple[list[Patch], list[Contradiction]]:
    """Walk one subject's values of one relation in world order; each change of value retires the old ones."""
    patches: list[Patch] = []
    contradictions: list[Contradiction] = []
    unique = {e.id: e for e in edges}
    if len({e.to_id for e in unique.values()}) < 2:
        return patches, contradictions  # one value, however often restated (the usual chain): nothing changes
    group: list[Edge] = []  # the current value's edges (a value may be stated several times)
    for edge in sorted(unique.values(), key=_order):
        # values stated at one moment ("my eslint config, my oxlint config") are current together
        if group and edge.to_id not in {e.to_id for e in group} and edge.event_time > group[-1].event_time:
            for old in group:
                reason = f"{edge.relation} is single-valued: {edge.to_id} (newer) replaces {old.to_id}"
                patches.append(Patch(old.id, edge.id, at, reason))
                contradictions.append(
                    Contradiction(
                        relation=edge.relation,
                        subject=edge.from_id,
                        scope=edge.scope,
                        kept=edge.id,
                        retired=old.id,
                        kept_value=edge.to_id,
                        retired_value=old.to_id,
                        reason="the newer value wins (event_time)",
                        at=at,
                    )
                )
            group = []
        group.append(edge)
    return patches, contradictions


def reconcile_edges(
    edges: Iterable[Edge],
    current: CurrentEdges,
    single_valued: Collection[str],
    *,
    at: float,
    category_of: CategoryOf | None = None,
) -> tuple[list[Patch], list[Contradiction]]:
    edges = list(edges)
    groups: dict[tuple[str, str, str], dict[str, Edge]] = {}
    for edge in edges:
        if edge.relation in single_valued or relations.single_valued(edge.relation):
            groups.setdefault((edge.from_id, edge.relation, edge.scope), {})[edge.id] = edge
    patches: list[Patch] = []
    contradictions: list[Contradiction] = []
    replaced: list[tuple[Edge, str]] = []  # (the edge that replaces, the technology it retires)
    for (subject, relation, scope), new in groups.items():
        stored = [e for e in current(subject, relation, scope) if e.scope == scope and e.relation == relation]
        found_patches, found = resolve_chain([*stored, *new.values()], at=at)
        patches += found_patches
        if not relation.endswith(STATE_SUFFIXES):  # a check's outcome or the latest command: a change, not a conflict
            contradictions += found
        if relation not in ("uses", "depends-on") and relation in STACK_RELATIONS:
            by_id = {e.id: e for e in [*stored, *new.values()]}
            replaced += [(by_id[c.kept], c.retired_value) for c in found if c.kept in by_id]
    replaced += [(e, e.to_id) for e in edges if e.relation == "dropped"]
    if category_of is not None:
        replaced += _switched_from(edges, current, category_of)
    patches += _retire_replaced(replaced, edges, current, {p.id for p in patches}, at=at)
    return patches, contradictions


def _switched_from(edges: Sequence[Edge], current: CurrentEdges, category_of: CategoryOf) -> list[tuple[Edge, str]]:
    """(switch edge, technology it retires): every other of the switch's category the subject used before."""
    out: list[tuple[Edge, str]] = []
    for by in edges:
        if by.relation not in SWITCH_RELATIONS:
            continue
        used = [*current(by.from_id, "uses", by.scope), *(e for e in edges if e.relation == "uses")]
        for target in dict.fromkeys(
            e.to_id
            for e in used
            if e.from_id == by.from_id and e.scope == by.scope and e.to_id != by.to_id and e.event_time <= by.event_time
        ):
            if category_of(target) == by.relation:
                out.append((by, target))
    return out


def _retire_replaced(
    replaced: Sequence[tuple[Edge, str]], batch: Sequence[Edge], current: CurrentEdges, done: set[str], *, at: float
) -> list[Patch]:
    """Retire the subject's stack edges to a replaced or dropped technology older than the change."""
    patches: list[Patch] = []
    for by, target in replaced:
        candidates: dict[str, Edge] = {}
        for relation in STACK_RELATIONS:
            for edge in current(by.from_id, relation, by.scope):
                candidates[edge.id] = edge
        for edge in batch:
            if edge.relation in STACK_RELATIONS:
                candidates[edge.id] = edge
        for edge in candidates.values():
            if (
                edge.to_id == target
                and edge.from_id == by.from_id
                and edge.scope == by.scope
                and edge.id not in done
                and edge.id != by.id
                and edge.event_time <= by.event_time
            ):
                what = "dropped" if by.relation == "dropped" else f"replaced as {by.relation} by {by.to_id}"
                patches.append(Patch(edge.id, by.id, at, f"{target} {what}"))
                done.add(edge.id)
    return patches


def reconcile_events(
    events: Iterable[Event], current: CurrentEvents, *, at: float, check: Callable[[Event], bool] | None = None
) -> list[Patch]:
    """Patches retiring older copies; `check` says which events may have one (default: all)."""
    patches: list[Patch] = []
    for event in events:
        if not event.key or (check is not None and not check(event)):
            continue
        for old in current(event.key):
            if old.id != event.id and old.superseded_by is None:
                patches.append(Patch(old.id, event.id, at, f"re-distilled: a newer copy of {event.key}"))
    return patches


def reconcile(
    linked: Linked,
    *,
    current_edges: CurrentEdges,
    current_events: CurrentEvents,
    single_valued: Collection[str] = DEFAULT_SINGLE_VALUED,
    at: float,
    maybe_copied: Callable[[Event], bool] | None = None,
    category_of: CategoryOf | None = None,
) -> Reconciled:
    """`maybe_copied`: which events may have an older copy stored (those of a turn that grew, ...);
    the others are not looked up. Default: all of them. `category_of`: a technology's category
    as stored (the batch's own entities are looked up first); without it a switch slot retires
    only its own older values."""
    extraction, _refused = gate(linked.extraction)
    if _refused:
        linked = replace(linked, extraction=extraction)
    lookup = None
    if category_of is not None:
        batch = {e.id: str(e.attrs.get("category", "")) for e in extraction.entities if e.type == "tech"}
        lookup = lambda eid: batch[eid] if eid in batch else category_of(eid)  # noqa: E731
    edge_patches, contradictions = reconcile_edges(
        extraction.edges, current_edges, single_valued, at=at, category_of=lookup
    )
    event_patches = reconcile_events(extraction.events, current_events, at=at, check=maybe_copied)
    return Reconciled(
        linked=linked,
        edge_patches=tuple(edge_patches),
        event_patches=tuple(event_patches),
        contradictions=tuple(contradictions),
    )
