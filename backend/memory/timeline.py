"""Timeline queries over the cache: events in a window, by entity, kind and scope, bi-temporal."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable

from .records import EVENT_KINDS, Event
from .results import TimelinePage
from .temporal import EVENT_COLUMNS, SessionFilter, View, event_from_row, newest_first_sql


class InvalidQuery(ValueError):
    """A query argument out of range (unknown kind, negative limit, hops outside 1..3)."""


def timeline(
    db: sqlite3.Connection,
    view: View,
    sessions: SessionFilter,
    *,
    since: float | None = None,
    until: float | None = None,
    entity_ids: Iterable[str] | None = None,
    kinds: Iterable[str] | None = None,
    limit: int | None = 100,
    newest_first: bool = True,
) -> TimelinePage:
    """Events with since <= event_time <= until in `view`, newest first, at most `limit`."""
    conds: list[str] = []  # the query's own filters; the view's are added where used
    args: list[object] = []
    if since is not None:
        conds.append("t >= ?")
        args.append(since)
    if until is not None:
        conds.append("t <= ?")
        args.append(until)
    if kinds is not None:
        kinds = sorted(set(kinds))
        unknown = [k for k in kinds if k not in EVENT_KINDS]
        if unknown:
            raise InvalidQuery(f"unknown event kind {unknown[0]!r}: use one of {', '.join(EVENT_KINDS)}")
        conds.append("kind IN (SELECT value FROM json_each(?))")
        args.append(json.dumps(kinds))
    if entity_ids is not None:
        conds.append("seq IN (SELECT seq FROM mentions WHERE entity IN (SELECT value FROM json_each(?)))")
        args.append(json.dumps(sorted(set(entity_ids))))
    if limit is not None and limit < 0:
        raise InvalidQuery("limit must be >= 0")

    events = []
    truncated = False
    filters, filter_args = list(conds), list(args)
    current = view.current_condition()
    if current is not None and not view.include_superseded:
        filters.append(current[0])
        filter_args.extend(current[1])
    sql, where_args = newest_first_sql(EVENT_COLUMNS, "events", view, filters, filter_args, ascending=not newest_first)
    for row in db.execute(sql, where_args):
        if not sessions(row[10]):
            continue
        retired = view.retirement(db, "event", "events", row[1], row[2], row[14:17])
        if retired is not None and not view.include_superseded:
            continue
        if limit is not None and len(events) >= limit:
            truncated = True
            break
        events.append(event_from_row(row, retired.by if retired else None))
    view_conds, view_args = view.conditions()
    hidden = 0 if view.include_superseded else _hidden(db, view, sessions, [*view_conds, *conds], [*view_args, *args])
    return TimelinePage(tuple(events), hidden, truncated)


def ranked_events(
    db: sqlite3.Connection, view: View, sessions: SessionFilter, *, until: float, half_life: float, limit: int
) -> tuple[Event, ...]:
    """The `limit` current events with event_time <= until ranked by importance x 0.5^(age/half_life)
    (age = until - event_time), best first; ties: newer, then by id.

    SQLite sorts by the log of the score (log2(importance) + t/half_life: the same order, no
    underflow) so Python looks at the best rows only; the exact scores order the final few.
    """
    if limit <= 0 or half_life <= 0:
        raise InvalidQuery("limit and half_life must be > 0")
    _ensure_log2(db)
    filters: list[str] = ["t <= ?"]
    args: list[object] = [until]
    current = view.current_condition()
    if current is not None and not view.include_superseded:
        filters.append(current[0])
        args.extend(current[1])
    cutoff = _oldest_worth_sorting(db, view, sessions, filters, args, until, half_life, limit)
    if cutoff is not None:
        filters.append("t >= ?")
        args.append(cutoff)
    base, base_args = view.conditions()
    where = " AND ".join([*base, *filters])
    sql = (
        "SELECT seq, id, t, importance, session, sup_t, sup_by, sup_reason,"
        " CASE WHEN importance > 0 THEN log2(min(importance, 1.0)) + t / ? ELSE -1e308 END AS rank"
        f" FROM events WHERE {where} ORDER BY rank DESC, t DESC, seq"
    )
    picked: list[tuple[float, float, str, int]] = []
    last_rank = None
    for seq, rid, t, importance, session, *sup, rank in db.execute(sql, [half_life, *base_args, *args]):
        if last_rank is not None and rank < last_rank - 1e-9:
            break  # past the limit, and clearly below the last one taken (rounding cannot reorder)
        if not sessions(session):
            continue
        retired = sup[0] is not None and view.retirement(db, "event", "events", rid, t, tuple(sup)) is not None
        if retired and not view.include_superseded:
            continue
        picked.append((min(1.0, max(0.0, importance)) * 0.5 ** (max(0.0, until - t) / half_life), t, rid, seq))
        if len(picked) == limit:
            last_rank = rank
    # ties in the order the events were written, not by id (a hash of where the store is): the
    # same sessions give the same core block wherever they are distilled
    chosen = sorted(picked, key=lambda i: (-i[0], -i[1], i[3]))[:limit]
    sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE seq IN (SELECT value FROM json_each(?))"
    rows = {row[0]: row for row in db.execute(sql, (json.dumps([i[3] for i in chosen]),))}
    out = []
    for *_, seq in chosen:
        row = rows[seq]
        retired = view.retirement(db, "event", "events", row[1], row[2], row[14:17])
        out.append(event_from_row(row, retired.by if retired else None))
    return tuple(out)


def _oldest_worth_sorting(
    db: sqlite3.Connection,
    view: View,
    sessions: SessionFilter,
    filters: list[str],
    args: list[object],
    until: float,
    half_life: float,
    limit: int,
) -> float | None:
    """An event_time before which no event can rank among the best `limit`, from the newest few.

    The `limit`-th best score s among the newest 4 x limit events is a floor for the answer's
    scores; importance is at most 1, so an event older than half_life x log2(1/s) cannot reach s.
    """
    sql, where_args = newest_first_sql(
        "seq, id, t, importance, session, sup_t, sup_by, sup_reason", "events", view, filters, args
    )
    scores: list[float] = []
    for count, (_, rid, t, importance, session, *sup) in enumerate(db.execute(sql, where_args)):
        if count == 4 * limit:
            break
        if not sessions(session):
            continue
        if sup[0] is not None and view.retirement(db, "event", "events", rid, t, tuple(sup)) is not None:
            continue
        scores.append(min(1.0, max(0.0, importance)) * 0.5 ** (max(0.0, until - t) / half_life))
    if len(scores) < limit:
        return None
    floor = sorted(scores, reverse=True)[limit - 1]
    if floor <= 0:
        return None
    return until - half_life * math.log2(1 / min(1.0, floor)) - 1.0  # a second early: rounding never cuts one


def _ensure_log2(db: sqlite3.Connection) -> None:
    """SQLite built without its math functions gets log2 from Python (same results, slower)."""
    try:
        db.execute("SELECT log2(2.0)").fetchone()
    except sqlite3.OperationalError:
        db.create_function("log2", 1, lambda x: math.log2(x) if x and x > 0 else None, deterministic=True)


def _hidden(db: sqlite3.Connection, view: View, sessions: SessionFilter, conds: list[str], args: list) -> int:
    """How many events in the window the view retires (left out of the page)."""
    sql = f"SELECT id, t, session, sup_t, sup_by, sup_reason FROM events {_where([*conds, 'sup_t IS NOT NULL'])}"
    count = 0
    for rid, t, session, *sup in db.execute(sql, args):
        if sessions(session) and view.retirement(db, "event", "events", rid, t, tuple(sup)) is not None:
            count += 1
    return count


def _where(conds: list[str]) -> str:
    return "WHERE " + " AND ".join(conds) if conds else ""
