"""MemoryStore: the virtual memory's timeline and knowledge graph (ARCHITECTURE.md §5), as `Home.memory`.

On disk, under <home>/memory/ (the logs are the truth; the rest is derived and rebuildable):
    timeline/YYYY-MM.jsonl    Events (by UTC month of event_time) and supersede patches on them
    graph/entities.jsonl      Entities, alias merges and unmerges
    graph/edges.jsonl         Edges and supersede patches on them
    .cache.sqlite             folded, indexed state (see cache.py); delete it and it is rebuilt
    .lock                     the memory lock every write holds

Writing. Each call holds the memory lock (waits up to `lock_timeout` s, then MemoryLocked) and
returns only when what it appended is durable (fsynced), so a caller may move its cursor after.
A record whose id is already held appends nothing (re-running a stage is harmless).
    append(records) -> AppendResult            Events, Entities and Edges in any mix
    append_events(...), append_entities(...), append_edges(...)   the same, typed
    supersede(old_id, new_id, reason="", at=None) -> Patch | None
        Two events or two edges. The one with the later event_time retires the other whatever
        the argument order (a late import of an older fact lands in history and never retires
        a current one); the Patch returned says which way. None: that patch is already held.
    merge(into_id, merged_id, reason, score=1.0, at=None) -> AliasMerge | None
        Folds merged's group into into's group (recorded between the two groups' canonical
        ids). None when they are already one entity, or when that pair was merged and undone
        before: an unmerge is sticky, re-merging the pair appends nothing.
    unmerge(alias_id, reason="", at=None) -> AliasUnmerge | None   None: already undone
    with store.batch() as w: w.append(...); w.supersede(...); w.merge(...)
        One lock hold for many writes, durable when the block exits. Keep it short (it blocks
        other writers). Not a transaction: records written before an error stay, each whole.
    `at` (ingestion time of a patch) defaults to time.time(); records carry their own times.

Reading only. ReadOnlyMemoryStore(root, session_exists=None) (readonly.py; Home.memory_readonly()) gives
a store with the same queries that creates or changes nothing on disk; writes raise
MemoryReadOnly (readonly.py says how it stays correct beside a running writer).

Reading. Never takes the lock. Each query first folds in what other writers appended (seen at
once); edits to the logs by anything else are noticed within a second, or at refresh().
`scope` is the caller's: None sees everything, "project:P" sees global + P, "agent:A" global + A,
a set of scopes ({"project:P", "agent:A"}: a caller in a project and an agent) global + each.
`as_of=T`: what was true at T; `known_at=T`: what the memory held at T (ARCHITECTURE.md §5).
Records whose provenance points into a deleted session are left out (never an error).
    timeline(since=None, until=None, entity=None, kinds=None, scope=None, limit=100, as_of=None,
             known_at=None, include_superseded=False, newest_first=True) -> TimelinePage
        `entity`: an id, name or alias (its merged aliases' mentions count too).
    ranked_events(until, scope=None, half_life=..., limit=40) -> tuple[Event, ...]
        the current events up to `until` with the highest importance x 0.5^(age/half_life)
    neighbors(entity, hops=1, as_of=None, known_at=None, scope=None, include_superseded=False,
              limit=200, fan_out=20) -> Neighborhood
        Edges within 1..3 hops, with relation, confidence, times, provenance, canonical ends,
        the ends' names, and how many superseded edges were hidden. The center gives up to
        `limit` edges, each entity further out up to `fan_out` (newest first); `truncated` says
        when either cut.
    entity(query, scope=None) -> Entity         by id, name or alias; the canonical entity, its
        merged members' names among its aliases. Misses raise EntityNotFound (`.suggestions`,
        close names by rapidfuzz); a name shared by several entities raises AmbiguousEntity.
    find_entities(query, scope=None) -> tuple[Entity, ...]   exact matches, no error
    aliases(entity) -> tuple[AliasInfo, ...]   merges into the entity: who, why, score, undone?
    event(id) / edge(id) / entity_by_id(id) -> record or None (folded: superseded_by set)
    events_with_key(key) -> tuple[Event, ...]   the copies of one slot (Event.key), oldest first
    edges(scope=None, relations=None, exclude_relations=None, min_confidence=0.0, since=None,
          until=None, limit=100, as_of=None, known_at=None, include_superseded=False)
        -> tuple[GraphEdge, ...]   any entity's edges, newest first (hop 0)
    entity_refs(ids) -> Mapping[id, EntityRef];  entity_ids();  scopes();  canonical_id(id)
    entity_records(types=None) -> tuple[Entity, ...]   as stored, unfolded (for the distiller's link)
    current_edges(src=None, relation=None) -> tuple[Edge, ...]   not retired, by own src id
    problems() -> tuple[MemoryProblem, ...]   bad lines (file:line), torn tails, ignored patches
    stats() -> MemoryStats;  refresh() -> bool;  rebuild_cache();  close()

Projections (core.md, entity views) live in core.py and views.py and read through this API.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

from filelock import FileLock, Timeout

from . import graph
from .aliases import AliasIndex, AliasView
from .cache import MemoryCache, MemoryRecord
from .graph import DEFAULT_FAN_OUT, DEFAULT_LIMIT
from .logs import LogAppender
from .records import AliasMerge, AliasUnmerge, Edge, Entity, Event, Patch, visible_scopes
from .results import (
    AliasInfo,
    AmbiguousEntity,
    AppendResult,
    EntityNotFound,
    EntityRef,
    GraphEdge,
    MemoryLocked,
    MemoryProblem,
    MemoryStats,
    Neighborhood,
)
from .results import TimelinePage as TimelinePage
from .store_reach import ReachQueries, entity_hidden_in
from .temporal import EDGE_COLUMNS, EVENT_COLUMNS, SessionExists, SessionFilter, View, edge_from_row, event_from_row
from .timeline import ranked_events as _ranked_events
from .timeline import timeline as _timeline
from .writer import InvalidRecord as InvalidRecord
from .writer import MemoryWriter

LOCK_NAME = ".lock"
DEFAULT_LOCK_TIMEOUT = 30.0


class MemoryStore(ReachQueries):
    """The memory under one folder (<home>/memory). Thread-safe; several processes may share it."""

    def __init__(
        self,
        root: Path | str,
        *,
        session_exists: SessionExists | None = None,
        durable: bool = True,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ) -> None:
        self.root = Path(root)
        self.durable = durable
        self.lock_timeout = lock_timeout
        self._session_exists = session_exists
        self._cache: MemoryCache | None = None
        self._aliases: AliasIndex | None = None
        self._refs: dict[str, EntityRef] = {}  # names of entities, by id: records never change
        self._open_lock = threading.Lock()
        # one lock object: re-entrant within a thread (a batch may call append), other threads and
        # processes wait (each thread holds its own descriptor, and flock excludes between them)
        self._lock = FileLock(str(self.root / LOCK_NAME), timeout=lock_timeout)

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def cache(self) -> MemoryCache:
        if self._cache is None:
            with self._open_lock:
                if self._cache is None:
                    self._cache = MemoryCache(self.root)
        return self._cache

    def _changed(self) -> None:
        self._aliases = None
        self._refs = {}

    def _alias_index(self) -> AliasIndex:
        index = self._aliases
        if index is None:
            index = self._aliases = AliasIndex.load(self.cache.db)
        return index

    @contextmanager
    def _reading(self) -> Iterator[MemoryCache]:
        cache = self.cache
        with cache.lock:
            if cache.sync():
                self._changed()
            yield cache

    def refresh(self) -> bool:
        """Look at the logs now (queries see other writers at once, other edits within a second)."""
        with self.cache.lock:
            changed = self.cache.sync(force=True)
            if changed:
                self._changed()
            return changed

    def rebuild_cache(self) -> None:
        self.cache.rebuild()
        self._changed()

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    # -- writing ----------------------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[MemoryWriter]:
        """Hold the memory lock for several writes; all of them are durable when the block exits."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock = self._lock
        try:
            lock.acquire()
        except Timeout:
            raise MemoryLocked(
                f"the memory is busy: another opmem process holds {self.root / LOCK_NAME}"
                f" (waited {self.lock_timeout:g} s); try again when it has finished"
            ) from None
        appender = LogAppender(self.root, durable=self.durable)
        try:
            yield MemoryWriter(self, appender)
            appender.sync()
        finally:
            appender.close()
            lock.release()

    def append(self, records: Iterable[MemoryRecord]) -> AppendResult:
        with self.batch() as writer:
            return writer.append(records)

    def append_events(self, events: Iterable[Event]) -> AppendResult:
        return self.append(events)

    def append_entities(self, entities: Iterable[Entity]) -> AppendResult:
        return self.append(entities)

    def append_edges(self, edges: Iterable[Edge]) -> AppendResult:
        return self.append(edges)

    def supersede(self, old: str, new: str, reason: str = "", *, at: float | None = None) -> Patch | None:
        with self.batch() as writer:
            return writer.supersede(old, new, reason, at=at)

    def merge(
        self, into: str, merged: str, reason: str, score: float = 1.0, *, at: float | None = None
    ) -> AliasMerge | None:
        with self.batch() as writer:
            return writer.merge(into, merged, reason, score, at=at)

    def unmerge(self, alias_id: str, reason: str = "", *, at: float | None = None) -> AliasUnmerge | None:
        with self.batch() as writer:
            return writer.unmerge(alias_id, reason, at=at)

    # -- reading ----------------------------------------------------------------------------------

    def timeline(
        self,
        since: float | None = None,
        until: float | None = None,
        entity: str | Entity | None = None,
        kinds: Iterable[str] | None = None,
        scope: str | Iterable[str] | None = None,
        limit: int | None = 100,
        *,
        as_of: float | None = None,
        known_at: float | None = None,
        include_superseded: bool = False,
        newest_first: bool = True,
    ) -> TimelinePage:
        view = View(as_of, known_at, visible_scopes(scope), include_superseded)
        with self._reading() as cache:
            members = None
            if entity is not None:
                aliases = self._alias_index().view(known_at)
                found = self._resolve(cache, aliases, entity, scope)
                members = aliases.members(aliases.canonical(found.id))
            return _timeline(
                cache.db,
                view,
                SessionFilter(self._session_exists),
                since=since,
                until=until,
                entity_ids=members,
                kinds=kinds,
                limit=limit,
                newest_first=newest_first,
            )

    def ranked_events(
        self,
        until: float,
        scope: str | Iterable[str] | None = None,
        *,
        half_life: float,
        limit: int = 40,
        own_only: bool = False,
    ) -> tuple[Event, ...]:
        """The `limit` current events up to `until` ranked by importance x recency (see timeline.py);
        `own_only`: those of `scope` itself, not the global ones a caller in it also sees."""
        view = View(None, None, _scopes(scope, own_only), False)
        with self._reading() as cache:
            return _ranked_events(
                cache.db, view, SessionFilter(self._session_exists), until=until, half_life=half_life, limit=limit
            )

    def neighbors(
        self,
        entity: str | Entity,
        hops: int = 1,
        *,
        as_of: float | None = None,
        known_at: float | None = None,
        scope: str | Iterable[str] | None = None,
        include_superseded: bool = False,
        limit: int = DEFAULT_LIMIT,
        fan_out: int = DEFAULT_FAN_OUT,
    ) -> Neighborhood:
        view = View(as_of, known_at, visible_scopes(scope), include_superseded)
        with self._reading() as cache:
            aliases = self._alias_index().view(known_at)
            center = self._resolve(cache, aliases, entity, scope)
            return graph.neighbors(
                cache.db,
                aliases,
                center,
                view,
                SessionFilter(self._session_exists),
                hops=hops,
                limit=limit,
                fan_out=fan_out,
                refs=self._refs,
            )

    def edges(
        self,
        scope: str | Iterable[str] | None = None,
        *,
        relations: Iterable[str] | None = None,
        exclude_relations: Iterable[str] | None = None,
        min_confidence: float = 0.0,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = 100,
        as_of: float | None = None,
        known_at: float | None = None,
        include_superseded: bool = False,
        own_only: bool = False,
    ) -> tuple[GraphEdge, ...]:
        """Edges seen from `scope` (global too, unless `own_only`), best first."""
        view = View(as_of, known_at, _scopes(scope, own_only), include_superseded)
        with self._reading() as cache:
            return graph.list_edges(
                cache.db,
                self._alias_index().view(known_at),
                view,
                SessionFilter(self._session_exists),
                relations=relations,
                exclude_relations=exclude_relations,
                min_confidence=min_confidence,
                since=since,
                until=until,
                limit=limit,
            )

    def _resolve(
        self, cache: MemoryCache, aliases: AliasView, entity: str | Entity, scope: str | Iterable[str] | None
    ) -> Entity:
        query = entity.id if isinstance(entity, Entity) else entity
        if self._session_exists is None:
            return graph.lookup(cache.db, aliases, query, visible_scopes(scope))
        visible = SessionFilter(self._session_exists)
        try:
            found = graph.lookup(cache.db, aliases, query, visible_scopes(scope))
        except EntityNotFound as exc:  # no names learnt only from a private session among the suggestions
            kept = tuple(s for s in exc.suggestions if not entity_hidden_in(cache.db, aliases, s.id, visible))
            raise EntityNotFound(exc.query, kept) from None
        except AmbiguousEntity as exc:
            kept = tuple(c for c in exc.candidates if not entity_hidden_in(cache.db, aliases, c.id, visible))
            if len(kept) != 1:
                if not kept:
                    raise EntityNotFound(query) from None
                raise AmbiguousEntity(exc.query, kept) from None
            found = graph.lookup(cache.db, aliases, kept[0].id, visible_scopes(scope))
        if entity_hidden_in(cache.db, aliases, found.id, visible):
            raise EntityNotFound(query)
        return found

    def entity(self, query: str, scope: str | Iterable[str] | None = None) -> Entity:
        with self._reading() as cache:
            return self._resolve(cache, self._alias_index().view(), query, scope)

    def find_entities(self, query: str, scope: str | Iterable[str] | None = None) -> tuple[Entity, ...]:
        with self._reading() as cache:
            aliases = self._alias_index().view()
            found = (
                graph.folded_entity(cache.db, aliases, c)
                for c in graph.matches(cache.db, aliases, query, visible_scopes(scope))
            )
            return tuple(e for e in found if e is not None)

    def entity_by_id(self, entity_id: str) -> Entity | None:
        """The entity record as stored (not folded), or None."""
        with self._reading() as cache:
            return graph.entity_record(cache.db, entity_id)

    def entity_records(self, types: Iterable[str] | None = None) -> tuple[Entity, ...]:
        """Every entity record as stored (merged ones too, not folded), of `types` if given; by id."""
        wanted = None if types is None else json.dumps(sorted(set(types)))
        sql = "SELECT data FROM entities" + (
            "" if wanted is None else " WHERE type IN (SELECT value FROM json_each(?))"
        )
        with self._reading() as cache:
            rows = cache.db.execute(sql + " ORDER BY id", () if wanted is None else (wanted,))
            return tuple(Entity.from_json(json.loads(r[0])) for r in rows)

    def current_edges(self, src: str | None = None, relation: str | None = None) -> tuple[Edge, ...]:
        """Edges no patch retires, as stored: by their own `src` id (aliases not folded), any scope
        or session, of one `relation` if given; by id. For the distiller's reconcile step."""
        conds, args = ["sup_t IS NULL"], []
        if src is not None:
            conds.append("src = ?")
            args.append(src)
        if relation is not None:
            conds.append("relation = ?")
            args.append(relation)
        sql = f"SELECT {EDGE_COLUMNS} FROM edges WHERE {' AND '.join(conds)} ORDER BY id"
        with self._reading() as cache:
            return tuple(edge_from_row(row) for row in cache.db.execute(sql, args))

    def entity_refs(self, ids: Iterable[str]) -> Mapping[str, EntityRef]:
        """id -> (id, type, name, scope) for each id; an id without a record is named by itself."""
        with self._reading() as cache:
            return MappingProxyType(graph.entity_refs(cache.db, ids))

    def entity_ids(self) -> tuple[str, ...]:
        with self._reading() as cache:
            return tuple(r[0] for r in cache.db.execute("SELECT id FROM entities ORDER BY id"))

    def scopes(self) -> tuple[str, ...]:
        """Every scope some event or edge is in, sorted."""
        with self._reading() as cache:
            sql = "SELECT DISTINCT scope FROM events UNION SELECT DISTINCT scope FROM edges ORDER BY 1"
            return tuple(r[0] for r in cache.db.execute(sql))

    def canonical_id(self, entity_id: str, known_at: float | None = None) -> str:
        with self._reading():
            return self._alias_index().view(known_at).canonical(entity_id)

    def aliases(self, entity: str | Entity) -> tuple[AliasInfo, ...]:
        with self._reading() as cache:
            index = self._alias_index()
            found = self._resolve(cache, index.view(), entity, None)
            return graph.alias_infos(cache.db, index, found.id)

    def event(self, event_id: str) -> Event | None:
        with self._reading() as cache:
            row = cache.db.execute(f"SELECT {EVENT_COLUMNS} FROM events WHERE id=?", (event_id,)).fetchone()
            return event_from_row(row, row[15]) if row else None

    def events_with_key(self, key: str) -> tuple[Event, ...]:
        """Every event filling slot `key` (Event.key), retired ones too, in the order they were ingested."""
        if not key:
            return ()
        with self._reading() as cache:
            sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE key=? ORDER BY it, seq"
            return tuple(event_from_row(row, row[15]) for row in cache.db.execute(sql, (key,)))

    def edge(self, edge_id: str) -> Edge | None:
        with self._reading() as cache:
            row = cache.db.execute(f"SELECT {EDGE_COLUMNS} FROM edges WHERE id=?", (edge_id,)).fetchone()
            return edge_from_row(row, row[15]) if row else None

    def problems(self) -> tuple[MemoryProblem, ...]:
        with self._reading() as cache:
            db = cache.db
            found = [MemoryProblem(*r) for r in db.execute("SELECT path, line, message FROM problems ORDER BY rowid")]
            for name, lines in db.execute("SELECT name, lines FROM files WHERE torn ORDER BY name"):
                found.append(
                    MemoryProblem(
                        str(self.root / name), lines + 1, "incomplete last line (an interrupted write); skipped"
                    )
                )
            found.extend(_patch_problems(cache))
            found.extend(self._alias_index().view().problems)
            return tuple(found)

    def stats(self) -> MemoryStats:
        with self._reading() as cache:
            db = cache.db

            def count(table: str) -> int:
                return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

            return MemoryStats(
                count("events"),
                count("entities"),
                count("edges"),
                count("patches"),
                count("aliases"),
                len(self.problems()),
            )


def _patch_problems(cache: MemoryCache) -> list[MemoryProblem]:
    problems = []
    for kind, table in (("event", "events"), ("edge", "edges")):
        sql = (
            f"SELECT p.path, p.line, p.id, p.by, o.t, b.t FROM patches p"
            f" LEFT JOIN {table} o ON o.id = p.id LEFT JOIN {table} b ON b.id = p.by"
            f" WHERE p.kind = ? AND (o.id IS NULL OR b.id IS NULL OR b.t < o.t) ORDER BY p.seq"
        )
        for path, line, old, new, t_old, t_new in cache.db.execute(sql, (kind,)):
            if t_old is None or t_new is None:
                missing = old if t_old is None else new
                message = f"supersede patch names {kind} {missing}, which the memory does not hold; ignored"
            else:
                message = f"supersede patch: {new} is older than {old} it would retire; ignored"
            problems.append(MemoryProblem(path, line, message))
    return problems


def _scopes(scope: str | Iterable[str] | None, own_only: bool) -> frozenset[str] | None:
    """What a caller in `scope` sees; with `own_only`, that scope alone (a project's core.md)."""
    if own_only and isinstance(scope, str):
        return frozenset({scope})
    return visible_scopes(scope)
