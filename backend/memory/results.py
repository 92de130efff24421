"""What the memory store's queries return, and the errors it raises (all frozen, all typed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..model import OpmemError
from .records import AliasMerge, AliasUnmerge, Edge, Entity, Event
from .temporal import edge_from_row


class MemoryLocked(OpmemError):
    """Another process holds the memory lock longer than we were willing to wait."""


class RecordNotFound(OpmemError, KeyError):
    """A supersede, merge or unmerge names a record the memory does not hold."""

    def __init__(self, kind: str, record_id: str) -> None:
        self.kind = kind
        self.record_id = record_id
        super().__init__(f"no {kind} {record_id!r} in memory")

    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0])


@dataclass(frozen=True, slots=True)
class EntityRef:
    """An entity's id, type and display name: what a graph edge's ends need to be shown."""

    id: str
    type: str
    name: str
    scope: str


class EntityNotFound(OpmemError, KeyError):
    """No entity with that id, name or alias (in the caller's scope); `suggestions` are close names."""

    def __init__(self, query: str, suggestions: tuple[EntityRef, ...] = ()) -> None:
        self.query = query
        self.suggestions = suggestions
        text = f"no entity {query!r} in memory"
        if suggestions:
            text += "; did you mean " + ", ".join(f"{s.name} ({s.id})" for s in suggestions) + "?"
        super().__init__(text)

    def __str__(self) -> str:
        return str(self.args[0])


class AmbiguousEntity(OpmemError):
    """A name that fits several distinct entities (e.g. a package and a command); pass an id."""

    def __init__(self, query: str, candidates: tuple[EntityRef, ...]) -> None:
        self.query = query
        self.candidates = candidates
        names = ", ".join(f"{c.id} ({c.type})" for c in candidates)
        super().__init__(f"{query!r} names {len(candidates)} entities: {names}; ask by id")


@dataclass(frozen=True, slots=True)
class MemoryProblem:
    """A line the memory could not use: `path:line: message` (line None for a whole-file problem)."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


class GraphEdge:
    """One edge of a neighbourhood. `source`/`target` are canonical entity ids (aliases folded).

    `edge.superseded_by` is set when the edge is retired in the view asked for (shown only with
    include_superseded); `valid_to` is then the retiring edge's event_time and
    `superseded_reason` the patch's reason. Immutable. A query makes it from its cache row and
    builds the Edge (and its Provenance) on first use of `edge`: a walk keeps many it never shows.
    """

    __slots__ = ("_by", "_edge", "_row", "hop", "source", "superseded_reason", "target", "valid_to")
    source: str
    target: str
    hop: int
    valid_to: float | None
    superseded_reason: str

    def __init__(
        self,
        edge: Edge | None,
        source: str,
        target: str,
        hop: int,
        valid_to: float | None = None,
        superseded_reason: str = "",
        *,
        row: tuple | None = None,
        superseded_by: str | None = None,
    ) -> None:
        if edge is None and row is None:
            raise TypeError("GraphEdge needs an edge or a cache row")
        put = object.__setattr__
        put(self, "_edge", edge)
        put(self, "_row", row)
        put(self, "_by", superseded_by)
        put(self, "source", source)
        put(self, "target", target)
        put(self, "hop", hop)
        put(self, "valid_to", valid_to)
        put(self, "superseded_reason", superseded_reason)

    @property
    def edge(self) -> Edge:
        edge = self._edge
        if edge is None:
            edge = edge_from_row(self._row, self._by)
            object.__setattr__(self, "_edge", edge)  # the same value every time: safe between threads
        return edge

    @property
    def relation(self) -> str:
        return self._row[4] if self._edge is None else self._edge.relation

    @property
    def confidence(self) -> float:
        return self._row[7] if self._edge is None else self._edge.confidence

    @property
    def written(self) -> int:
        """The order the store wrote it in (0 when built without a cache row): the order a
        message listed facts of one moment in."""
        return self._row[0] if self._row is not None else 0

    def _key(self) -> tuple:
        return (self.edge, self.source, self.target, self.hop, self.valid_to, self.superseded_reason)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, GraphEdge) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"GraphEdge is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"GraphEdge is immutable: cannot delete {name!r}")

    def __repr__(self) -> str:
        return (
            f"GraphEdge(edge={self.edge!r}, source={self.source!r}, target={self.target!r}, hop={self.hop!r},"
            f" valid_to={self.valid_to!r}, superseded_reason={self.superseded_reason!r})"
        )


@dataclass(frozen=True, slots=True)
class Neighborhood:
    """The edges within `hops` of `center`, nearest first, each hop newest first.

    `hidden_superseded` counts retired edges at the visited entities that were left out;
    `truncated` says `limit` (or the per-entity fan-out) cut the result.
    """

    center: Entity
    edges: tuple[GraphEdge, ...]
    entities: Mapping[str, EntityRef] = field(default_factory=lambda: MappingProxyType({}))
    hidden_superseded: int = 0
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class TimelinePage:
    """Events in the window asked for, newest first unless asked otherwise."""

    events: tuple[Event, ...]
    hidden_superseded: int = 0
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class AliasInfo:
    """One alias merge into an entity: which entity, why, how sure, and whether it was undone."""

    merge: AliasMerge
    merged: EntityRef | None  # None when the merged entity's record is missing
    active: bool
    unmerge: AliasUnmerge | None = None


@dataclass(frozen=True, slots=True)
class AppendResult:
    """How many records an append added; `skipped` were already present (same id)."""

    events: int = 0
    entities: int = 0
    edges: int = 0
    skipped: int = 0

    @property
    def added(self) -> int:
        return self.events + self.entities + self.edges


@dataclass(frozen=True, slots=True)
class MemoryStats:
    events: int
    entities: int
    edges: int
    patches: int
    aliases: int
    problems: int
