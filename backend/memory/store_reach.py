"""What a change reaches: the entities a change to some sessions, records or alias merges
touches, and which are kept out of sight (views.py's incremental refresh, the exclusions and the
entity finder ask). A part of MemoryStore (store.py), over its folded cache."""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .aliases import AliasIndex, AliasView
from .cache import MemoryCache
from .records import AliasMerge
from .temporal import SessionExists, SessionFilter


class ReachQueries:
    """MemoryStore's queries of what a change reaches (store.py gives `_reading` and `_alias_index`)."""

    if TYPE_CHECKING:
        _session_exists: SessionExists | None

        def _reading(self) -> AbstractContextManager[MemoryCache]: ...

        def _alias_index(self) -> AliasIndex: ...

    def entity_hidden(self, entity_id: str) -> bool:
        """Whether the memory keeps this entity out of sight: it was first seen in a session it may
        not show (private, excluded, deleted) and no record from a shown session names it."""
        if self._session_exists is None:
            return False
        with self._reading() as cache:
            return entity_hidden_in(
                cache.db, self._alias_index().view(), entity_id, SessionFilter(self._session_exists)
            )

    def session_entities(self, session_ids: Iterable[str]) -> tuple[str, ...]:
        """Every entity the records of these sessions name (or that was first seen in them), with
        the canonical ids of their groups: the entity views a change to these sessions touches."""
        ids = json.dumps(sorted(set(session_ids)))
        sql = (
            "WITH s(id) AS (SELECT value FROM json_each(?))"
            " SELECT m.entity FROM mentions m JOIN events e ON e.seq = m.seq WHERE e.session IN s"
            " UNION SELECT src FROM edges WHERE session IN s UNION SELECT dst FROM edges WHERE session IN s"
            " UNION SELECT id FROM entities WHERE json_extract(data, '$.provenance.session_id') IN s"
            # what these sessions' records retired: its view says by what (and is current without them)
            " UNION SELECT o.src FROM edges b JOIN patches p ON p.kind = 'edge' AND p.by = b.id"
            " JOIN edges o ON o.id = p.id WHERE b.session IN s"
            " UNION SELECT o.dst FROM edges b JOIN patches p ON p.kind = 'edge' AND p.by = b.id"
            " JOIN edges o ON o.id = p.id WHERE b.session IN s"
            " UNION SELECT m.entity FROM events b JOIN patches p ON p.kind = 'event' AND p.by = b.id"
            " JOIN events o ON o.id = p.id JOIN mentions m ON m.seq = o.seq WHERE b.session IN s"
        )
        with self._reading() as cache:
            found = {r[0] for r in cache.db.execute(sql, (ids,))}
            aliases = self._alias_index().view()
            found |= {aliases.canonical(e) for e in found}
        return tuple(sorted(found))

    def sessions_named(self) -> set[str]:
        """Every session id a record's provenance names (the sessions whose visibility views show)."""
        sql = (
            "SELECT session FROM events UNION SELECT session FROM edges"
            " UNION SELECT json_extract(data, '$.provenance.session_id') FROM entities"
        )
        with self._reading() as cache:
            return {r[0] for r in cache.db.execute(sql) if r[0]}

    def record_entities(self, record_ids: Iterable[str]) -> set[str]:
        """The entity ids (own, unfolded) these events mention and these edges join."""
        ids = json.dumps(sorted(set(record_ids)))
        sql = (
            "WITH s(id) AS (SELECT value FROM json_each(?))"
            " SELECT m.entity FROM mentions m JOIN events e ON e.seq = m.seq WHERE e.id IN s"
            " UNION SELECT src FROM edges WHERE id IN s UNION SELECT dst FROM edges WHERE id IN s"
        )
        with self._reading() as cache:
            return {r[0] for r in cache.db.execute(sql, (ids,))}

    def supersede_links(self, record_ids: Iterable[str]) -> set[str]:
        """The records on the other side of every supersede patch that names one of `record_ids`."""
        ids = json.dumps(sorted(set(record_ids)))
        sql = (
            "WITH s(id) AS (SELECT value FROM json_each(?))"
            " SELECT by FROM patches WHERE kind = ? AND id IN s UNION SELECT id FROM patches WHERE kind = ? AND by IN s"
        )
        with self._reading() as cache:
            return {r[0] for kind in ("event", "edge") for r in cache.db.execute(sql, (ids, kind, kind))}

    def alias_component(self, entity_ids: Iterable[str]) -> set[str]:
        """`entity_ids` and every id an alias merge (active or undone) links to them, transitively:
        every entity whose group or alias history a change among them can move."""
        with self._reading():
            rows = self._alias_index().rows
        found = set(entity_ids)
        links: dict[str, set[str]] = {}
        for row in rows:
            links.setdefault(row.merge.into, set()).add(row.merge.merged)
            links.setdefault(row.merge.merged, set()).add(row.merge.into)
        todo = [e for e in found if e in links]
        while todo:
            for other in links[todo.pop()]:
                if other not in found:
                    found.add(other)
                    todo.append(other)
        return found

    def alias_merge(self, alias_id: str) -> AliasMerge | None:
        """The merge recorded under this id (undone or not), or None."""
        with self._reading():
            row = self._alias_index().merge_of(alias_id)
        return row.merge if row is not None else None

    def edge_ends(self, entity_ids: Iterable[str]) -> set[str]:
        """Both ends (own ids) of every edge, any state or session, that has an end among `entity_ids`."""
        ids = json.dumps(sorted(set(entity_ids)))
        sql = "SELECT src, dst FROM adj WHERE node IN (SELECT value FROM json_each(?))"
        with self._reading() as cache:
            return {end for row in cache.db.execute(sql, (ids,)) for end in row}

    def alias_groups(self, entity_ids: Iterable[str]) -> set[str]:
        """Every member (canonical id first among them) of the groups these ids fold into."""
        with self._reading():
            view = self._alias_index().view()
            return {m for e in set(entity_ids) for m in view.members(view.canonical(e))}

    def session_visible(self, session_id: str) -> bool:
        """Whether records pointing at this session are shown (it exists and is not excluded)."""
        return SessionFilter(self._session_exists)(session_id)


def entity_hidden_in(db: Any, aliases: AliasView, entity_id: str, visible: SessionFilter) -> bool:
    """First seen in a session not shown, and named by no event or edge of a shown one (any alias)."""
    members = aliases.members(aliases.canonical(entity_id))
    marks = ",".join("?" * len(members))
    firsts = [
        r[0]
        for r in db.execute(
            f"SELECT json_extract(data, '$.provenance.session_id') FROM entities WHERE id IN ({marks})", members
        )
    ]
    if not firsts or any(not sid or visible(sid) for sid in firsts):
        return False
    sessions = db.execute(
        f"SELECT DISTINCT e.session FROM mentions m JOIN events e ON e.seq = m.seq WHERE m.entity IN ({marks})"
        f" UNION SELECT DISTINCT session FROM adj WHERE node IN ({marks})",
        (*members, *members),
    )
    return not any(not sid or visible(sid) for (sid,) in sessions)
