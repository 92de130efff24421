"""Bi-temporal visibility (ARCHITECTURE.md §5) over cache rows, and rows turned back into records.

A record is *in view* when its event_time <= as_of (if given), its ingestion_time <= known_at
(if given), its scope is visible to the caller and its session still exists. It is *retired*
in that view when a supersede patch applies: the patch was recorded (`at`) <= known_at, its
retiring record was ingested <= known_at, and that record's event_time is >= the retired
one's (never older) and <= as_of. Without as_of and known_at, the folded columns of the cache
answer directly; otherwise the patches are read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from ..model import Provenance
from .records import Edge, Event

SessionExists = Callable[[str], bool]

# Column lists the converters below expect, in order.
EVENT_COLUMNS = (
    "seq, id, t, it, kind, importance, scope, summary, entities, project, session, nodes, turn, commit_,"
    " sup_t, sup_by, sup_reason, key"
)
EDGE_COLUMNS = (
    "seq, id, src, dst, relation, t, it, confidence, scope, project, session, nodes, turn, commit_,"
    " sup_t, sup_by, sup_reason"
)


@dataclass(frozen=True, slots=True)
class Retirement:
    by: str
    valid_to: float  # the retiring record's event_time
    reason: str


@dataclass(frozen=True, slots=True)
class View:
    """One query's point of view: world time, knowledge time, visible scopes, retired shown or not."""

    as_of: float | None = None
    known_at: float | None = None
    scopes: frozenset[str] | None = None  # None: every scope
    include_superseded: bool = False

    @property
    def folded(self) -> bool:
        """True when the cache's precomputed retirement columns answer this view."""
        return self.known_at is None

    def conditions(self, *, scope: bool = True) -> tuple[list[str], list[object]]:
        """SQL conditions (on t, it, and scope unless told not) every row in view meets; joined with AND."""
        conds: list[str] = []
        args: list[object] = []
        if self.as_of is not None:
            conds.append("t <= ?")
            args.append(self.as_of)
        if self.known_at is not None:
            conds.append("it <= ?")
            args.append(self.known_at)
        if scope and self.scopes is not None:
            conds.append("scope IN (SELECT value FROM json_each(?))")
            args.append(json.dumps(sorted(self.scopes)))
        return conds, args

    def current_condition(self) -> tuple[str, list[object]] | None:
        """SQL that keeps only rows not retired in this view, when the cache can tell alone."""
        if not self.folded:
            return None
        if self.as_of is None:
            return "sup_t IS NULL", []
        return "(sup_t IS NULL OR sup_t > ?)", [self.as_of]

    def retirement(
        self,
        db: sqlite3.Connection,
        kind: str,
        table: str,
        row_id: str,
        t: float,
        sup: tuple,
        sessions: SessionFilter | None = None,
    ) -> Retirement | None:
        """Whether a row (with folded columns `sup` = sup_t, sup_by, sup_reason) is retired in view.
        With `sessions`, a row retired only by a record of a session not shown (private, excluded,
        deleted) is not retired: that record is not there for the reader, and its reason names it."""
        sup_t, sup_by, sup_reason = sup
        if sup_t is None:
            return None
        if self.folded:
            if self.as_of is not None and sup_t > self.as_of:
                return None
            if sessions is not None and sessions.filters and not _by_shown(db, table, sup_by, sessions):
                return self._unfolded(db, kind, table, row_id, t, sessions)
            return Retirement(sup_by, sup_t, sup_reason or "")
        return self._unfolded(db, kind, table, row_id, t, sessions)

    def _unfolded(
        self, db: sqlite3.Connection, kind: str, table: str, row_id: str, t: float, sessions: SessionFilter | None
    ) -> Retirement | None:
        known_at = self.known_at
        for by, at, reason, bt, bit, session in db.execute(
            f"SELECT p.by, p.at, p.reason, b.t, b.it, b.session FROM patches p JOIN {table} b ON b.id = p.by"
            " WHERE p.kind = ? AND p.id = ? ORDER BY b.t, p.at, p.by",
            (kind, row_id),
        ):
            if bt < t or (known_at is not None and (at > known_at or bit > known_at)):
                continue
            if self.as_of is not None and bt > self.as_of:
                continue
            if sessions is not None and not sessions(session or ""):
                continue
            return Retirement(by, bt, reason or "")
        return None


def _by_shown(db: sqlite3.Connection, table: str, record_id: str, sessions: SessionFilter) -> bool:
    row = db.execute(f"SELECT session FROM {table} WHERE id = ?", (record_id,)).fetchone()
    return row is None or sessions(row[0] or "")


def newest_first_sql(
    columns: str, table: str, view: View, conds: list[str], args: list[object], *, ascending: bool = False
) -> tuple[str, list[object]]:
    """SELECT rows in view meeting `conds`, ordered by (t, seq), newest first unless `ascending`.

    With scopes, one index scan per scope (scope, t), merged by SQLite as it goes: a query in
    a small project never sorts the whole memory, nor scans other projects' rows.
    """
    order = "ASC" if ascending else "DESC"
    base, base_args = view.conditions(scope=False)
    conds, args = [*base, *conds], [*base_args, *args]
    if view.scopes is None:
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return f"SELECT {columns} FROM {table}{where} ORDER BY t {order}, seq {order}", args
    where = "".join(f" AND {c}" for c in conds)
    parts = [f"SELECT {columns} FROM {table} WHERE scope = ?{where}" for _ in sorted(view.scopes)]
    all_args = [a for scope in sorted(view.scopes) for a in (scope, *args)]
    return " UNION ALL ".join(parts) + f" ORDER BY t {order}, seq {order}", all_args


class SessionFilter:
    """Whether a record's session still exists, asked once per session per query."""

    def __init__(self, exists: SessionExists | None) -> None:
        self._exists = exists
        self._known: dict[str, bool] = {}

    @property
    def filters(self) -> bool:
        """Whether any session may be left out (else every record is shown)."""
        return self._exists is not None

    def __call__(self, session_id: str) -> bool:
        if not session_id or self._exists is None:
            return True  # a record with no session (a project commit) has nothing to lose
        ok = self._known.get(session_id)
        if ok is None:
            try:
                ok = bool(self._exists(session_id))
            except Exception:  # a broken session store must not break memory queries
                ok = False
            self._known[session_id] = ok
        return ok


_SEP = "\x1f"


def pack_ids(ids: tuple[str, ...] | list[str]) -> str:
    """A list of ids as one column: joined by US (cheap to split), JSON when an id could confuse that."""
    if not ids:
        return ""
    packed = _SEP.join(ids)
    # the separator is one character: it occurs more often than between the ids when one holds it
    if packed.count(_SEP) != len(ids) - 1 or ids[0].startswith("["):
        return json.dumps(list(ids), ensure_ascii=False)
    return packed


def unpack_ids(packed: str) -> tuple[str, ...]:
    if not packed:
        return ()
    return tuple(json.loads(packed)) if packed[0] == "[" else tuple(packed.split(_SEP))


def _provenance(project: str, session: str, nodes: str, turn: int | None, commit: str | None, t: float, it: float):
    return Provenance(project, session, unpack_ids(nodes), commit, t, it, turn)


def event_from_row(row: tuple, superseded_by: str | None = None) -> Event:
    (_, rid, t, it, kind, importance, scope, summary, entities, project, session, nodes, turn, commit, *_) = row
    return Event(
        rid,
        summary,
        kind,
        importance,
        _provenance(project, session, nodes, turn, commit, t, it),
        unpack_ids(entities),
        scope,
        superseded_by,
        row[17] or "",
    )


def edge_from_row(row: tuple, superseded_by: str | None = None) -> Edge:
    (_, rid, src, dst, relation, t, it, confidence, scope, project, session, nodes, turn, commit, *_) = row
    return Edge(
        rid,
        src,
        dst,
        relation,
        _provenance(project, session, nodes, turn, commit, t, it),
        confidence,
        scope,
        superseded_by,
    )
