"""Graph queries over the cache: entity lookup (id, name, alias, "did you mean"), aliases, neighbours."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable
from types import MappingProxyType

from rapidfuzz import fuzz, process

from .aliases import AliasIndex, AliasView
from .cache import scrub
from .records import Entity, entity_key
from .results import AliasInfo, AmbiguousEntity, EntityNotFound, EntityRef, GraphEdge, Neighborhood
from .temporal import EDGE_COLUMNS, Retirement, SessionFilter, View, edge_from_row, newest_first_sql
from .timeline import InvalidQuery

MAX_HOPS = 3
# Defaults sized for the readers: a recall reply holds 16 KB (~100-150 edges as JSON), and a
# tree view of a neighbour's own neighbours reads well up to ~20 children. Callers may ask more.
DEFAULT_LIMIT = 200
DEFAULT_FAN_OUT = 20
SUGGESTIONS = 5


# -- entities -------------------------------------------------------------------------------------


def entity_record(db: sqlite3.Connection, entity_id: str) -> Entity | None:
    row = db.execute("SELECT data FROM entities WHERE id=?", (entity_id,)).fetchone()
    return Entity.from_json(json.loads(row[0])) if row else None


def entity_refs(db: sqlite3.Connection, ids: Iterable[str]) -> dict[str, EntityRef]:
    """id -> EntityRef for every id given; an id with no entity record gets its id as its name."""
    wanted = sorted(set(ids))
    refs = _stored_refs(db, wanted)
    for missing in wanted:
        if missing not in refs:
            refs[missing] = EntityRef(missing, missing.split(".", 1)[0] if "." in missing else "", missing, "global")
    return refs


def _stored_refs(db: sqlite3.Connection, ids: list[str]) -> dict[str, EntityRef]:
    sql = "SELECT id, type, name, scope FROM entities WHERE id IN (SELECT value FROM json_each(?))"
    return {r[0]: EntityRef(r[0], r[1], r[2], r[3]) for r in db.execute(sql, (json.dumps(ids),))}


def folded_entity(db: sqlite3.Connection, aliases: AliasView, canonical_id: str) -> Entity | None:
    """The canonical entity with its merged members' names and aliases added to its aliases."""
    entity = entity_record(db, canonical_id)
    if entity is None:
        return None
    names = list(entity.aliases)
    for member in aliases.members(canonical_id)[1:]:
        other = entity_record(db, member)
        if other is not None:
            names.extend((other.name, *other.aliases))
    own = entity_key(entity.name)
    unique = tuple(dict.fromkeys(n for n in names if entity_key(n) != own))
    return dataclasses.replace(entity, aliases=unique) if unique != entity.aliases else entity


def lookup(db: sqlite3.Connection, aliases: AliasView, query: str, scopes: frozenset[str] | None) -> Entity:
    """The canonical entity an id, name or alias stands for, visible in `scopes`.

    Raises EntityNotFound (with close names as suggestions) or AmbiguousEntity.
    """
    candidates = matches(db, aliases, query, scopes)
    if len(candidates) == 1:
        entity = folded_entity(db, aliases, candidates[0])
        if entity is not None:
            return entity
    if len(candidates) > 1:
        refs = entity_refs(db, candidates)
        raise AmbiguousEntity(query, tuple(refs[c] for c in candidates))
    raise EntityNotFound(query, suggest(db, aliases, query, scopes))


def matches(db: sqlite3.Connection, aliases: AliasView, query: str, scopes: frozenset[str] | None) -> list[str]:
    """Canonical ids of the entities `query` names exactly (by id first, then by name or alias)."""
    query = scrub(query)
    row = db.execute("SELECT id, scope FROM entities WHERE id=?", (query,)).fetchone()
    if row is not None and (scopes is None or row[1] in scopes):
        return [aliases.canonical(row[0])]
    key = entity_key(query)
    found = [r[0] for r in db.execute("SELECT entity FROM names WHERE key=? ORDER BY entity", (key,))]
    canon = sorted(aliases.canonical_many(found))
    if scopes is None:
        return canon
    refs = entity_refs(db, canon)
    return [c for c in canon if refs[c].scope in scopes]


def suggest(db: sqlite3.Connection, aliases: AliasView, query: str, scopes: frozenset[str] | None) -> tuple:
    """Up to five entities whose names or aliases are close to `query` (rapidfuzz WRatio >= 60)."""
    key = entity_key(scrub(query))
    if not key:
        return ()
    sql = "SELECT n.key, n.entity, e.scope FROM names n JOIN entities e ON e.id = n.entity"
    choices: dict[int, str] = {}
    owners: list[str] = []
    for name_key, owner, scope in db.execute(sql):
        if scopes is None or scope in scopes:
            choices[len(owners)] = name_key
            owners.append(owner)
    ranked = process.extract(key, choices, scorer=fuzz.WRatio, limit=SUGGESTIONS * 4, score_cutoff=60)
    seen: list[str] = []
    for _, _, index in sorted(ranked, key=lambda r: (-r[1], r[0], owners[r[2]])):
        canonical = aliases.canonical(owners[index])
        if canonical not in seen:
            seen.append(canonical)
        if len(seen) == SUGGESTIONS:
            break
    refs = entity_refs(db, seen)
    return tuple(refs[c] for c in seen)


def alias_infos(db: sqlite3.Connection, index: AliasIndex, canonical_id: str) -> tuple[AliasInfo, ...]:
    """Every merge into this entity's group (active or undone), oldest first, with its reason."""
    view = index.view()
    group = set(view.members(canonical_id))
    rows = [row for row in index.rows if row.merge.into in group or row.merge.merged in group]
    rows = [row for row in rows if row.merge.merged != canonical_id or row.merge.into in group]
    refs = entity_refs(db, [row.merge.merged for row in rows])
    infos = []
    for row in rows:
        undo = index.unmerges.get(row.merge.id)
        active = undo is None and view.canonical(row.merge.merged) == view.canonical(row.merge.into)
        infos.append(AliasInfo(row.merge, refs.get(row.merge.merged), active, undo))
    return tuple(infos)


# -- neighbourhoods ---------------------------------------------------------------------------------


def neighbors(
    db: sqlite3.Connection,
    aliases: AliasView,
    center: Entity,
    view: View,
    sessions: SessionFilter,
    *,
    hops: int = 1,
    limit: int = DEFAULT_LIMIT,
    fan_out: int = DEFAULT_FAN_OUT,
    refs: dict[str, EntityRef] | None = None,
) -> Neighborhood:
    """Edges within `hops` of `center` (aliases folded), breadth first, each entity's newest first.

    The center gives up to `limit` edges; every entity further out at most `fan_out`, so a hub
    two hops away cannot flood the answer (`truncated` says when either cut). `refs` is a
    cache of entity names the caller keeps (entity records never change once written).
    """
    if not 1 <= hops <= MAX_HOPS:
        raise InvalidQuery(f"hops must be 1..{MAX_HOPS}, got {hops}")
    if limit < 1 or fan_out < 1:
        raise InvalidQuery("limit and fan_out must be >= 1")
    walk = _Walk(db, aliases, view, sessions)
    start = aliases.canonical(center.id)
    visited = {start}
    frontier = [start]
    truncated = False
    for hop in range(1, hops + 1):
        following: set[str] = set()
        for node in frontier:
            room = min(limit - len(walk.out), limit if hop == 1 else fan_out)
            if room <= 0:
                truncated = True
                break
            edges = walk.expand(node, room, hop)
            following.update(e.source if e.source != node else e.target for e in edges)
        truncated = truncated or walk.cut
        frontier = sorted(following - visited)
        visited.update(frontier)
        if not frontier or len(walk.out) >= limit:
            truncated = truncated or (bool(frontier) and hop < hops)
            break
    ends = {start} | {e.source for e in walk.out} | {e.target for e in walk.out}
    names = cached_refs(db, ends, refs) if refs is not None else entity_refs(db, ends)
    hidden = len(walk.hidden - walk.seen)
    return Neighborhood(center, tuple(walk.out), MappingProxyType(names), hidden, truncated)


def cached_refs(db: sqlite3.Connection, ids: Iterable[str], cache: dict[str, EntityRef]) -> dict[str, EntityRef]:
    """entity_refs through a cache the caller keeps: entity records never change once written."""
    wanted = set(ids)
    missing = sorted(i for i in wanted if i not in cache)
    if missing:
        cache.update(_stored_refs(db, missing))
    if len(cache) > 200_000:
        cache.clear()  # bounded: a refill costs one query
    found = {i: cache[i] for i in wanted if i in cache}
    return found if len(found) == len(wanted) else {**entity_refs(db, wanted - found.keys()), **found}


class _Walk:
    """The state of one breadth-first walk: edges taken, edges seen, retired edges left out.

    Each entity's edges come from the adjacency table (cache.py), newest first, one b-tree
    range per entity that is read only as far as the answer needs.
    """

    def __init__(self, db: sqlite3.Connection, aliases: AliasView, view: View, sessions: SessionFilter) -> None:
        self.db = db
        self.aliases = aliases
        self.view = view
        self.sessions = sessions
        self.out: list[GraphEdge] = []
        self.seen: set[str] = set()
        self.hidden: set[str] = set()
        self.cut = False
        conds, args = view.conditions()
        self.where = "".join(f" AND {c}" for c in conds)
        self.sql = f"SELECT {EDGE_COLUMNS} FROM adj WHERE node = ?{self.where} ORDER BY t DESC, seq DESC"
        self.args = args

    def expand(self, node: str, room: int, hop: int) -> list[GraphEdge]:
        """Up to `room` new edges touching `node` or its aliases, newest first."""
        view, seen, hidden, sessions, db = self.view, self.seen, self.hidden, self.sessions, self.db
        show_retired = view.include_superseded
        found: dict[str, tuple[tuple, Retirement | None]] = {}
        members = self.aliases.members(node)
        for member in members:
            kept = 0
            for row in db.execute(self.sql, (member, *self.args)):
                rid = row[1]
                if rid in seen or rid in found or rid in hidden or not sessions(row[10]):
                    continue
                retired = (
                    None if row[14] is None else view.retirement(db, "edge", "edges", rid, row[5], row[14:17], sessions)
                )
                if retired is not None and not show_retired:
                    hidden.add(rid)
                    continue
                found[rid] = (row, retired)
                kept += 1
                if kept > room:  # one past room tells us there was more
                    if not show_retired:
                        hidden.update(self._retired_beyond(member, row))
                    break
        ranked = list(found.values())
        if len(members) > 1:  # each member's rows came newest first; merge them
            ranked.sort(key=lambda item: (-item[0][5], -item[0][0]))
        self.cut = self.cut or len(ranked) > room
        canonical = self.aliases.canonical
        taken = []
        for row, retired in ranked[:room]:
            seen.add(row[1])
            taken.append(
                GraphEdge(
                    None,
                    canonical(row[2]),
                    canonical(row[3]),
                    hop,
                    retired.valid_to if retired else None,
                    retired.reason if retired else "",
                    row=row,
                    superseded_by=retired.by if retired else None,
                )
            )
        self.out.extend(taken)
        return taken

    def _retired_beyond(self, member: str, last: tuple) -> set[str]:
        """Retired edges older than where a cut walk stopped (for the hidden count)."""
        sql = (
            f"SELECT id, t, session, sup_t, sup_by, sup_reason FROM adj WHERE node = ?{self.where}"
            " AND (t < ? OR (t = ? AND seq < ?)) AND sup_t IS NOT NULL"
        )
        hidden: set[str] = set()
        for rid, t, session, *sup in self.db.execute(sql, [member, *self.args, last[5], last[5], last[0]]):
            retired = self.view.retirement(self.db, "edge", "edges", rid, t, tuple(sup), self.sessions)
            if retired is not None and self.sessions(session):
                hidden.add(rid)
        return hidden


def list_edges(
    db: sqlite3.Connection,
    aliases: AliasView,
    view: View,
    sessions: SessionFilter,
    *,
    relations: Iterable[str] | None = None,
    exclude_relations: Iterable[str] | None = None,
    min_confidence: float = 0.0,
    since: float | None = None,
    until: float | None = None,
    limit: int | None = 100,
) -> tuple[GraphEdge, ...]:
    """Edges in `view` (any entity), newest first, filtered by relation, confidence and time."""
    conds: list[str] = []
    args: list[object] = []
    current = view.current_condition()
    if current is not None and not view.include_superseded:
        conds.append(current[0])
        args.extend(current[1])
    if relations is not None:
        conds.append("relation IN (SELECT value FROM json_each(?))")
        args.append(json.dumps(sorted(set(relations))))
    if exclude_relations is not None:
        conds.append("relation NOT IN (SELECT value FROM json_each(?))")
        args.append(json.dumps(sorted(set(exclude_relations))))
    if min_confidence > 0:
        conds.append("confidence >= ?")
        args.append(min_confidence)
    if since is not None:
        conds.append("t >= ?")
        args.append(since)
    if until is not None:
        conds.append("t <= ?")
        args.append(until)
    out: list[GraphEdge] = []
    sql, sql_args = newest_first_sql(EDGE_COLUMNS, "edges", view, conds, args)
    for row in db.execute(sql, sql_args):
        if not sessions(row[10]):
            continue
        retired = view.retirement(db, "edge", "edges", row[1], row[5], row[14:17], sessions)
        if retired is not None and not view.include_superseded:
            continue
        if limit is not None and len(out) >= limit:
            break
        edge = edge_from_row(row, retired.by if retired else None)
        out.append(
            GraphEdge(
                edge,
                aliases.canonical(edge.from_id),
                aliases.canonical(edge.to_id),
                0,
                retired.valid_to if retired else None,
                retired.reason if retired else "",
                row=row,
            )
        )
    return tuple(out)
