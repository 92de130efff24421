"""BM25 top-N over an FTS5 table that stays fast on a large index, and filters applied after it.

FTS5 computes bm25() for every row an expression matches before it sorts, so an OR with a
word found in half the index costs half the index. Terms found in more than DF_CAP rows (their
IDF is small: the rarer words decide the ranking) are left out of the expression when rarer
ones are there, and the rarer ones are taken rarest first while their rows fit ROW_BUDGET; a
query of common words only ranks its newest NEWEST_ROWS matches (newest_bm25.py: FTS5's bm25()
would walk each common word's whole doclist for its IDF), best first.
Filters (scope, dates, dead sessions) run on the rows returned; when they leave too few, the
page grows (x8) until enough pass or the matches run out.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .newest_bm25 import newest_bm25
from .term_counts import TermCounts

# bm25() costs ~2.3 us a matched row (counting the matches: 0.07 us), so DF_CAP bounds
# the query of one mid-frequency word: 4000 -> 2000 took the CPU p95 of the bench's 50,000- and
# 200,000-turn indexes from 10.7 / 12.1 to 8.4 / 9.6 ms for 0.004 / 0.007 of the plain FTS5 top-10
# share (1000: 7.6 ms, -0.019). The two bounds below are 2.5x and 15x the turn list's pool (200):
# halved from 1000 and 6000 on the same indexes for a CPU p95 fall at the same share (to 0.002).
# LoCoMo-sized tables (<= DF_CAP rows) take none of these bounds.
DF_CAP = 2000
NEWEST_ROWS = 500  # rows a query of common words only ranks (newest first; newest_bm25.py)
ROW_BUDGET = 3000  # rows bm25() may score for one query: rarer terms first, the rarest always
GROWTH = 8

Keep = Callable[[Sequence[int]], Mapping[int, Any]]


def split_terms(
    db: sqlite3.Connection,
    table: str,
    terms: Sequence[str],
    rows: int | None = None,
    counts: TermCounts | None = None,
    budget: int | None = None,
) -> tuple[list[str], list[str]]:
    """(rare, common): terms in at most DF_CAP rows, and the others; terms in no row are dropped.

    `rows`: an upper bound of the table's rows; at most DF_CAP means every term is rare.
    `counts`: the connection's counts kept while the index is unchanged (term_counts.py).
    `budget`: the rows the rare terms may match together (ROW_BUDGET when None).
    """
    if rows is not None and rows <= DF_CAP:
        return list(terms), []
    known = counts.current() if counts is not None else {}
    counted: list[tuple[int, int, str]] = []
    for position, term in enumerate(terms):
        count = known.get((table, term))
        if count is None:
            count = known[(table, term)] = db.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT {DF_CAP + 1})",
                (f'"{term}"',),
            ).fetchone()[0]
        if count:
            counted.append((count, position, term))
    rare: list[str] = []
    common: list[str] = []
    spent = 0
    budget = ROW_BUDGET if budget is None else budget
    for count, _position, term in sorted(counted):
        if count <= DF_CAP and (not rare or spent + count <= budget):
            rare.append(term)
            spent += count
        else:
            common.append(term)
    return rare, common


def ranked(
    db: sqlite3.Connection,
    table: str,
    weights: str,
    terms: Sequence[str],
    want: int,
    keep: Keep,
    rows: int | None = None,
    counts: TermCounts | None = None,
    budget: int | None = None,
):
    """[(rowid, score, kept info)] best first (score = -bm25), at most `want`, filtered by `keep`."""
    rare, common = split_terms(db, table, terms, rows, counts, budget)
    if not rare and not common:
        return []
    if not rare:
        return _newest_kept(db, table, _columns(db, table, weights), common, want, keep)
    expr = " OR ".join(f'"{t}"' for t in rare)
    order = "2"
    # ORDER BY bm25 scores every match whatever LIMIT is: a second, larger page would score them
    # all again, so the first already holds GROWTH pages (filters often drop many: entity records)
    limit = want * GROWTH
    bm25 = f"bm25({table}{', ' + weights if weights else ''})"
    while True:
        found = db.execute(
            f"SELECT rowid, {bm25} FROM {table} WHERE {table} MATCH ? ORDER BY {order} LIMIT ?", (expr, limit)
        ).fetchall()
        out = _best_kept(found, want, keep, ordered=True)
        if len(out) >= want or len(found) < limit:
            break
        limit *= GROWTH
    return out


def _newest_kept(
    db: sqlite3.Connection, table: str, columns: list[tuple[str, float]], terms: Sequence[str], want: int, keep: Keep
) -> list[tuple[int, float, Any]]:
    limit = NEWEST_ROWS
    while True:
        found = newest_bm25(db, table, columns, terms, limit)
        out = _best_kept(found, want, keep)
        if len(out) >= want or len(found) < limit:
            return out
        limit *= GROWTH


def _columns(db: sqlite3.Connection, table: str, weights: str) -> list[tuple[str, float]]:
    """The table's columns with their bm25() weights (1.0 where none is given)."""
    names = [r[0] for r in db.execute("SELECT name FROM pragma_table_info(?) ORDER BY cid", (table,))]
    given = [float(w) for w in weights.split(",") if w.strip()]
    return [(name, given[i] if i < len(given) else 1.0) for i, name in enumerate(names)]


def _best_kept(
    found: Sequence[tuple[int, float]], want: int, keep: Keep, *, ordered: bool = False
) -> list[tuple[int, float, Any]]:
    """The `want` best rows that pass `keep`, asked best first a page at a time (a page of the
    newest matches can hold thousands of rows: filtering them all cost more than scoring them).
    ordered=True: `found` is best first already (ORDER BY bm25: a stable sort would keep it)."""
    if not ordered:
        found = sorted(found, key=lambda row: row[1])  # bm25() is lower for better matches
    out: list[tuple[int, float, Any]] = []
    page = max(want, 64)
    for start in range(0, len(found), page):
        chunk = found[start : start + page]
        kept = keep([rid for rid, _score in chunk])
        out += [(rid, -score, kept[rid]) for rid, score in chunk if rid in kept]
        if len(out) >= want:
            break
    return out[:want]


def chunks(ids: Sequence[Any], size: int = 500):
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
