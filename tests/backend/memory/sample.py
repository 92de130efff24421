"""Small constructors for hand-made memory histories (times are plain numbers: days as seconds)."""

from __future__ import annotations

from opmem_tui.backend.memory.records import GLOBAL, Edge, Entity, Event, entity_id
from opmem_tui.backend.model import Provenance

DAY = 86_400.0
T0 = 1_780_000_000.0  # 2026-05-28


def prov(event_time: float, ingestion_time: float | None = None, session: str = "s1", project: str = "") -> Provenance:
    return Provenance(
        project, session, ("n1",), None, event_time, event_time if ingestion_time is None else ingestion_time
    )


def entity(kind: str, name: str, scope: str = GLOBAL, aliases: tuple[str, ...] = (), **attrs: object) -> Entity:
    return Entity(entity_id(kind, name), kind, name, aliases, attrs, scope, prov(T0))


def edge(
    src: Entity,
    relation: str,
    dst: Entity,
    event_time: float,
    ingestion_time: float | None = None,
    *,
    scope: str = GLOBAL,
    session: str = "s1",
    confidence: float = 1.0,
) -> Edge:
    p = prov(event_time, ingestion_time, session)
    return Edge(Edge.make_id(src.id, relation, dst.id, p), src.id, dst.id, relation, p, confidence, scope)


def event(
    summary: str,
    event_time: float,
    ingestion_time: float | None = None,
    *,
    kind: str = "work",
    importance: float = 0.5,
    entities: tuple[Entity, ...] = (),
    scope: str = GLOBAL,
    session: str = "s1",
) -> Event:
    p = prov(event_time, ingestion_time, session)
    return Event(Event.make_id(summary, kind, p), summary, kind, importance, p, tuple(e.id for e in entities), scope)
