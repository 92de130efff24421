"""Turns what the rules found into records with deterministic ids and provenance.

One RecordBuilder per batch. Entities of a kind that only means something inside a project
(a file, a folder, a test, an issue number) get ids keyed by the project (or the session's
folder when it has none), so `README.md` of two projects are two entities; the others
(packages, URLs, people, ...) are global, so two sessions that name one package share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...memory.records import GLOBAL, Edge, Entity, Event, entity_id
from ...model import Node, Provenance
from ..model import Extraction, SessionInfo, TurnFacts

PROJECT_KEYED = frozenset({"file", "folder", "test", "issue", "commit", "service", "endpoint"})
MAX_NODE_IDS = 32


class RecordBuilder:
    def __init__(self, session: SessionInfo | None, ingestion_time: float) -> None:
        self.session = session
        self.ingestion_time = ingestion_time
        self._entities: dict[str, Entity] = {}
        self._edges: dict[str, Edge] = {}
        self._events: dict[str, Event] = {}
        self.facts: list[TurnFacts] = []
        self.notes: list[str] = []
        self._ids: dict[tuple[str, str], str] = {}  # (type, key) -> id: entity_id hashes once per name
        self._known: dict[tuple[str, str, str | None], str] = {}  # (type, name as given, key) -> id, once recorded
        self._once: dict[tuple[str, str, str], str] = {}
        self._single: dict[tuple[Any, ...], Provenance] = {}  # provenance of one node (immutable, shared)

    @property
    def scope(self) -> str:
        return self.session.scope if self.session is not None else GLOBAL

    def provenance(
        self,
        nodes: Sequence[Node],
        *,
        turn: int | None = None,
        commit: str | None = None,
        event_time: float | None = None,
        session_id: str | None = None,
        project_id: str | None = None,
    ) -> Provenance:
        session = self.session
        project = project_id if project_id is not None else (session.project_id if session else "")
        sid = session_id if session_id is not None else (session.session_id if session else "")
        ref = None
        if len(nodes) == 1:
            ids = (nodes[0].id,)
            when = event_time if event_time is not None else nodes[0].created_at
            ref = (ids[0], when, turn, commit, sid, project)
            found = self._single.get(ref)  # the rules ask for one node's provenance again and again
            if found is not None:
                return found
        else:
            ids = tuple(dict.fromkeys(n.id for n in nodes))
            if len(ids) > MAX_NODE_IDS:
                ids = ids[: MAX_NODE_IDS - 1] + ids[-1:]
            when = event_time if event_time is not None else max((n.created_at for n in nodes), default=0.0)
        made = Provenance(
            project_id=project,
            session_id=sid,
            node_ids=ids,
            commit=commit,
            event_time=when,
            ingestion_time=self.ingestion_time,
            turn=turn,
        )
        if ref is not None:
            self._single[ref] = made
        return made

    def key_for(self, entity_type: str, name: str) -> str:
        """The name an entity's id is made from: project-keyed types carry their project."""
        if entity_type in PROJECT_KEYED and self.session is not None:
            owner = self.session.project_id or self.session.root or self.session.session_id
            return f"{owner}::{name}"
        return name

    def entity(
        self,
        entity_type: str,
        name: str,
        provenance: Provenance | None = None,
        *,
        attrs: Mapping[str, Any] | None = None,
        key: str | None = None,
        scope: str | None = None,
        aliases: Iterable[str] = (),
    ) -> str:
        """The entity's id; the first sighting in the batch is the one recorded."""
        given = (entity_type, name, key)
        known = self._known.get(given)
        if known is not None:
            return known  # a later sighting changes nothing: skip the normalizing
        name = " ".join(name.split())
        ref = (entity_type, key if key is not None else self.key_for(entity_type, name))
        eid = self._ids.get(ref)
        if eid is None:
            eid = self._ids[ref] = entity_id(*ref)
        if eid not in self._entities:
            if scope is None:
                scope = self.scope if entity_type in PROJECT_KEYED or entity_type in ("project", "session") else GLOBAL
            self._entities[eid] = Entity(
                id=eid,
                type=entity_type,
                name=name,
                aliases=tuple(a for a in dict.fromkeys(aliases) if a != name),
                attrs=dict(attrs or {}),
                scope=scope,
                provenance=provenance,
            )
        self._known[given] = eid
        return eid

    def edge(
        self,
        from_id: str,
        relation: str,
        to_id: str,
        provenance: Provenance,
        confidence: float = 1.0,
        *,
        once: bool = False,
        scope: str | None = None,
    ) -> str:
        """An edge; `once`: the first of the batch only (structure and activity, where the timeline
        already keeps every turn: `session edited file` needs saying once per batch, not per edit)."""
        if once:
            triple = (from_id, relation, to_id)
            known = self._once.get(triple)
            if known is not None:
                return known
        eid = Edge.make_id(from_id, relation, to_id, provenance)
        if once:
            self._once[triple] = eid
        if eid not in self._edges and from_id != to_id:
            self._edges[eid] = Edge(
                id=eid,
                from_id=from_id,
                to_id=to_id,
                relation=relation,
                provenance=provenance,
                confidence=round(min(1.0, max(0.0, confidence)), 3),
                scope=scope or self.scope,
            )
        return eid

    def event(
        self,
        summary: str,
        kind: str,
        importance: float,
        provenance: Provenance,
        entities: Iterable[str] = (),
        *,
        key: str = "",
    ) -> str:
        summary = " ".join(summary.split())
        eid = Event.make_id(summary, kind, provenance)
        if eid not in self._events and summary:
            self._events[eid] = Event(
                id=eid,
                summary=summary,
                kind=kind,
                importance=round(min(1.0, max(0.0, importance)), 3),
                provenance=provenance,
                entities=tuple(dict.fromkeys(e for e in entities if e in self._entities)),
                scope=self.scope,
                key=key,
            )
        return eid

    @property
    def event_count(self) -> int:
        return len(self._events)

    def has_entity(self, eid: str) -> bool:
        return eid in self._entities

    def build(self) -> Extraction:
        return Extraction(
            entities=tuple(self._entities.values()),
            edges=tuple(self._edges.values()),
            events=tuple(self._events.values()),
            facts=tuple(self.facts),
            notes=tuple(self.notes),
        )
