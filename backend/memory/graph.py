"""Graph queries over the cache: entity lookup (id, name, alias, "did you mean"), aliases, neighbours."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable
from types import MappingProxyType

from rapidfuzz import fuzz, process

from .aliases import AliasIndex, AliasView
from .records import Entity, entity_key
from .results import AliasInfo, AmbiguousEntity, EntityNotFound, EntityRef, GraphEdge, Neighborhood
from .temporal import EDGE_COLUMNS, Retirement, SessionFilter, View, edge_from_row
from .timeline import InvalidQuery

MAX_HOPS = 3
SUGGESTIONS = 5


# -- entities -------------------------------------------------------------------------------------


def entity_record(db: sqlite3.Connection, entity_id: str) -> Entity | None:
    row = db.execute("SELECT data FROM entities WHERE id=?", (entity_id,)).fetchone()
    return Entity.from_json(json.loads(row[0])) if row else None


def entity_refs(db: sqlite3.Connection, ids: Iterable[str]) -> dict[str, EntityRef]:
    """id -> EntityRef for every id given; an id with no entity record gets its id as its name."""
    wanted = sorted(set(ids))
    refs = {
        r[0]: EntityRef(r[0], r[1], r[2], r[3])
        for r in db.execute(
            "SELECT id, type, name, scope FROM entities WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(wanted),),
        )
    }
    for missing in wanted:
        if missing not in refs:
            refs[missing] = EntityRef(missing, missing.split(".", 1)[0] if "." in missing else "", missing, "global")
    return refs


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
    key = entity_key(query)
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
    limit: int = 500,
    fan_out: int = 50,
) -> Neighborhood:
    """Edges within `hops` of `center` (aliases folded), breadth first, each entity's newest first.

    The center gives up to `limit` edges; every entity further out at most `fan_out`, so a hub
    two hops away cannot flood the answer (`truncated` says when either cut).
    """
    if not 1 <= hops <= MAX_HOPS:
        raise InvalidQuery(f"hops must be 1..{MAX_HOPS}, got {hops}")
    if limit < 1 or fan_out < 1:
        raise InvalidQuery("limit and fan_out must be >= 1")
    start = aliases.canonical(center.id)
    visited = {start}
    frontier = [start]
    seen: set[str] = set()
    hidden_ids: set[str] = set()
    out: list[GraphEdge] = []
    truncated = False
    conds, args = view.conditions()
    current = view.current_condition()
    if current is not None and not view.include_superseded:
        conds.append(current[0])
        args.extend(current[1])
    for hop in range(1, hops + 1):
        following: set[str] = set()
        for node in frontier:
            room = min(limit - len(out), limit if hop == 1 else fan_out)
            if room <= 0:
                truncated = True
                break
            edges, cut = _edges_at(db, aliases, view, sessions, node, conds, args, room, seen, hop)
            truncated = truncated or cut
            out.extend(edges)
            following.update(e.source if e.source != node else e.target for e in edges)
            if not view.include_superseded:
                hidden_ids.update(_retired_at(db, aliases, view, sessions, node))
        frontier = sorted(following - visited)
        visited.update(frontier)
        if not frontier or len(out) >= limit:
            truncated = truncated or (bool(frontier) and hop < hops)
            break
    shown = {e.edge.id for e in out}
    refs = entity_refs(db, {start} | {e.source for e in out} | {e.target for e in out})
    return Neighborhood(center, tuple(out), MappingProxyType(refs), len(hidden_ids - shown), truncated)


def _edges_at(
    db: sqlite3.Connection,
    aliases: AliasView,
    view: View,
    sessions: SessionFilter,
    node: str,
    conds: list[str],
    args: list,
    room: int,
    seen: set[str],
    hop: int,
) -> tuple[list[GraphEdge], bool]:
    """Up to `room` new edges touching `node` or its aliases, newest first; and whether more were left."""
    found: dict[str, tuple[tuple, Retirement | None]] = {}
    for member in aliases.members(node):
        for column in ("src", "dst"):
            where = " AND ".join([f"{column} = ?", *conds])
            sql = f"SELECT {EDGE_COLUMNS} FROM edges WHERE {where} ORDER BY t DESC, seq DESC"
            kept = 0
            for row in db.execute(sql, [member, *args]):
                if row[1] in seen or row[1] in found or not sessions(row[10]):
                    continue
                retired = view.retirement(db, "edge", "edges", row[1], row[5], row[14:17])
                if retired is not None and not view.include_superseded:
                    continue
                found[row[1]] = (row, retired)
                kept += 1
                if kept > room:  # one past room tells us there was more
                    break
    ranked = sorted(found.values(), key=lambda item: (-item[0][5], -item[0][0]))
    result: list[GraphEdge] = []
    for row, retired in ranked[:room]:
        seen.add(row[1])
        edge = edge_from_row(row, retired.by if retired else None)
        result.append(
            GraphEdge(
                edge,
                aliases.canonical(edge.from_id),
                aliases.canonical(edge.to_id),
                hop,
                retired.valid_to if retired else None,
                retired.reason if retired else "",
            )
        )
    return result, len(ranked) > room


def _retired_at(db: sqlite3.Connection, aliases: AliasView, view: View, sessions: SessionFilter, node: str) -> set[str]:
    """Ids of edges at `node` (and its aliases) that are in view but retired: the hidden ones."""
    conds, args = view.conditions()
    hidden: set[str] = set()
    for member in aliases.members(node):
        for column in ("src", "dst"):
            where = " AND ".join([f"{column} = ?", "sup_t IS NOT NULL", *conds])
            sql = f"SELECT id, t, session, sup_t, sup_by, sup_reason FROM edges WHERE {where}"
            for rid, t, session, *sup in db.execute(sql, [member, *args]):
                if sessions(session) and view.retirement(db, "edge", "edges", rid, t, tuple(sup)) is not None:
                    hidden.add(rid)
    return hidden
