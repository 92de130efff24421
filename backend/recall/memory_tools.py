"""memory_timeline and memory_graph_neighbors: the distilled memory, every result with its pointer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..memory.records import EVENT_KINDS, GLOBAL, Event, entity_id
from ..memory.results import AmbiguousEntity, EntityNotFound, EntityRef, GraphEdge
from ..model import Provenance
from .context import Recall
from .dates import iso, parse_when
from .errors import AMBIGUOUS_ENTITY, BAD_ARGUMENT, UNKNOWN_ENTITY, RecallError
from .reply import page_of

MAX_EVENTS = 500  # events read for one timeline answer (then paged)
MAX_EDGES = 500  # edges read for one neighbourhood (then paged)
FAN_OUT = 50  # edges followed from each entity
SUMMARY_CHARS = 300


def pointer(provenance: Provenance) -> dict[str, Any]:
    """Where a memory record came from: `session:<id>`, the turn, the commit. A record with no
    session (a project commit made outside opmem) points at `project:<id>` and its commit, which
    memory_git_show opens; never at an empty `session:`."""
    if provenance.session_id:
        out: dict[str, Any] = {"source": f"session:{provenance.session_id}"}
    elif provenance.project_id:
        out = {"source": f"project:{provenance.project_id}"}
    else:
        out = {}
    if provenance.turn is not None:
        out["turn"] = provenance.turn
    if provenance.commit:
        out["commit"] = provenance.commit[:12]
    return out


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _entity_error(exc: EntityNotFound | AmbiguousEntity) -> RecallError:
    if isinstance(exc, AmbiguousEntity):
        return RecallError(AMBIGUOUS_ENTITY, str(exc), [c.id for c in exc.candidates])
    names = list(dict.fromkeys(s.name for s in exc.suggestions))
    return RecallError(UNKNOWN_ENTITY, f"no entity {exc.query!r} in memory", names)


def memory_timeline(
    recall: Recall,
    entity: str | None = None,
    since: str | None = None,
    until: str | None = None,
    kinds: list[str] | None = None,
    page: int = 0,
) -> dict[str, Any]:
    """Timeline events (what happened, newest first) in the caller's scope, optionally about
    one entity (id, name or alias), between two dates, of some kinds."""
    since_ts = parse_when(since, "since", now=recall.now) if since else None
    until_ts = parse_when(until, "until", now=recall.now) if until else None
    if since_ts is not None and until_ts is not None and since_ts > until_ts:
        raise RecallError(BAD_ARGUMENT, "since is after until")
    unknown = sorted(set(kinds or ()) - set(EVENT_KINDS))
    if unknown:
        raise RecallError(BAD_ARGUMENT, f"unknown kinds {unknown}: use {', '.join(EVENT_KINDS)}")
    memory = recall.memory
    memory.refresh()  # each call sees what other processes appended up to now
    try:
        found = memory.timeline(since_ts, until_ts, entity, kinds or None, recall.scope.memory_scopes, limit=MAX_EVENTS)
    except (EntityNotFound, AmbiguousEntity) as exc:
        raise _entity_error(exc) from None
    envelope: dict[str, Any] = {}
    filters = {"entity": entity, "since": iso(since_ts), "until": iso(until_ts), "kinds": kinds}
    envelope["query"] = {k: v for k, v in filters.items() if v}
    if recall.scope.memory_scope:
        envelope["scope"] = recall.scope.memory_scope
    if found.hidden_superseded:
        envelope["hidden_superseded"] = found.hidden_superseded
    if found.truncated:
        envelope["more_events"] = f"only the newest {MAX_EVENTS}: narrow since/until to see older ones"
    items = [_event(e) for e in found.events if _told_in(e, recall.scope.project_id)]
    reply, _ = page_of(envelope, "events", items, page, recall.max_reply_bytes)
    return reply


_USER = entity_id("person", "user")


def _known_in(edge: GraphEdge, project_id: str) -> bool:
    """Whether a fact belongs in a project's graph: its own, one its sessions told, or the user's
    own preference (a global fact); not what a session of no project (or of another) did."""
    e = edge.edge
    return not project_id or e.scope != GLOBAL or e.provenance.project_id == project_id or e.from_id == _USER


def _told_in(event: Event, project_id: str) -> bool:
    """Whether an event belongs in a project's timeline: the project's own, or a global one its own
    sessions told; what sessions of no project (or of another) did is no part of its story."""
    return not project_id or event.scope != GLOBAL or event.provenance.project_id == project_id


def _event(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {
        "time": iso(event.event_time),
        "kind": event.kind,
        "summary": _short(event.summary, SUMMARY_CHARS),
        "importance": round(event.importance, 2),
    }
    if event.entities:
        out["entities"] = list(event.entities[:10])
    out.update(pointer(event.provenance))
    out["id"] = event.id
    return out


def memory_graph_neighbors(
    recall: Recall,
    entity: str,
    hops: int = 2,
    as_of: str | None = None,
    page: int = 0,
) -> dict[str, Any]:
    """The knowledge graph around an entity: current relations within `hops` (1..3), nearest
    first, or as they stood at `as_of`; superseded ones are counted, not shown."""
    if not 1 <= hops <= 3:
        raise RecallError(BAD_ARGUMENT, f"hops must be 1..3, got {hops}")
    as_of_ts = parse_when(as_of, "as_of", now=recall.now) if as_of else None
    memory = recall.memory
    memory.refresh()  # each call sees what other processes appended up to now
    try:
        found = memory.neighbors(
            entity, hops, as_of=as_of_ts, scope=recall.scope.memory_scopes, limit=MAX_EDGES, fan_out=FAN_OUT
        )
    except (EntityNotFound, AmbiguousEntity) as exc:
        raise _entity_error(exc) from None
    center = found.center
    envelope: dict[str, Any] = {
        "entity": {"id": center.id, "type": center.type, "name": center.name},
    }
    if center.aliases:
        envelope["entity"]["aliases"] = list(center.aliases[:10])
    if as_of_ts is not None:
        envelope["as_of"] = iso(as_of_ts)
    if found.hidden_superseded:
        envelope["hidden_superseded"] = found.hidden_superseded
    if found.truncated:
        envelope["more_edges"] = "the neighbourhood is larger than shown: ask about a nearer entity or fewer hops"
    project_id = recall.scope.project_id
    items = [_edge(g, found.entities) for g in found.edges if _known_in(g, project_id)]
    reply, _ = page_of(envelope, "edges", items, page, recall.max_reply_bytes)
    return reply


def _name(refs: Mapping[str, EntityRef], entity_id: str) -> str:
    ref = refs.get(entity_id)
    return _short(ref.name, 80) if ref is not None else entity_id


def _edge(edge: GraphEdge, refs: Mapping[str, EntityRef]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "fact": f"{_name(refs, edge.source)} -{edge.relation}-> {_name(refs, edge.target)}",
        "from": edge.source,
        "relation": edge.relation,
        "to": edge.target,
        "hop": edge.hop,
        "confidence": round(edge.confidence, 2),
        "since": iso(edge.edge.event_time),
    }
    if edge.valid_to is not None:
        out["until"] = iso(edge.valid_to)
    out.update(pointer(edge.edge.provenance))
    return out
