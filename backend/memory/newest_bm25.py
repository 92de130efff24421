"""BM25 over the newest rows that match a query of common words only, without FTS5's bm25().

FTS5's bm25() computes each term's IDF by walking the term's whole doclist once per query: a
word found in half of a 500,000-turn index costs tens of milliseconds before a single row is
scored, whatever LIMIT says. A query made only of such words (ranking.py keeps them out when a
rarer word is there) is ranked here instead, over the newest `limit` rows that match it:

- each term's newest rows, per column, come from FTS5 newest first (`ORDER BY rowid DESC LIMIT`:
  no scoring, a walk from the end of the doclist that stops);
- the window is the rowid range in which every term's list is complete, so the presence of a
  term in a row of the window is exact;
- the IDF of a term is the one FTS5 would compute if the index were that window (the share of
  the window's rows that hold it: a sample estimate), with FTS5's formula and floor;
- the term frequency is its presence per column (tf = 1; FTS5's own bm25() counts repeats),
  weighted per column like bm25(); the row length comes from FTS5's docsize table, the average
  length from its averages record, b and k1 as in FTS5.
Scores are returned like bm25()'s: negative, lower is better.
"""

from __future__ import annotations

import json
import math
import sqlite3
from bisect import bisect_right
from collections.abc import Sequence
from operator import neg

K1 = 1.2  # FTS5's bm25() constants
B = 0.75


def newest_bm25(
    db: sqlite3.Connection, table: str, columns: Sequence[tuple[str, float]], terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """[(rowid, score)] for the newest `limit` rows matching any term, newest first; score like bm25()."""
    lists: list[tuple[str, float, list[int]]] = []
    floor = 0  # the rowid from which every list is complete
    for term in terms:
        for column, weight in columns:
            # One JSON array, not a Python row per rowid (~0.1 ms less a list of 500)
            found = db.execute(
                f"SELECT json_group_array(rowid) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? "
                "ORDER BY rowid DESC LIMIT ?)",
                (f'{{{column}}} : "{term}"', limit),
            ).fetchone()[0]
            rows = json.loads(found)
            rows.sort(reverse=True)  # the aggregate's order is not guaranteed; a sorted list costs one pass
            lists.append((term, weight, rows))
            if len(rows) == limit:
                floor = max(floor, rows[-1])
    union: set[int] = set()
    for _term, _weight, rows in lists:
        union.update(rows[: _at_or_above(rows, floor)])
    candidates = sorted(union, reverse=True)
    if not candidates:
        return []
    if len(candidates) > limit:
        candidates = candidates[:limit]
        floor = candidates[-1]  # every listed row from here up is a candidate
    rows_total, avgdl, first, last = _table_shape(db, table)
    # Rows in the window: its rowid span, scaled by the table's rowid density (deleted rows).
    span = last - max(floor, first) + 1
    window = max(1, round(span * rows_total / max(1, last - first + 1)))
    freq: dict[str, dict[int, float]] = {term: {} for term in terms}
    for term, weight, rows in lists:
        per_row = freq[term]
        kept = rows[: _at_or_above(rows, floor)]
        if per_row:
            get = per_row.get
            for r in kept:
                per_row[r] = get(r, 0.0) + weight
        else:
            per_row.update(dict.fromkeys(kept, weight))  # 0.0 + weight, as the loop above
    norm = {r: K1 * (1.0 - B + B * length / avgdl) for r, length in _lengths(db, table, candidates).items()}
    plain = K1  # a row whose size is unknown counts as of average length
    scores = dict.fromkeys(candidates, 0.0)
    for per_row in freq.values():
        factor = _idf(window, len(per_row)) * (K1 + 1.0)
        for r, f in per_row.items():
            scores[r] -= factor * f / (f + norm.get(r, plain))
    return list(scores.items())


def _at_or_above(rows: list[int], floor: int) -> int:
    """How many of `rows` (newest first) are >= floor."""
    return bisect_right(rows, -floor, key=neg) if floor else len(rows)


def _idf(rows: int, hits: int) -> float:
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows > hits else 0.0
    return value if value > 0 else 1e-6  # FTS5's floor for words in most rows


def _table_shape(db: sqlite3.Connection, table: str) -> tuple[int, float, int, int]:
    """(rows, average row length in tokens, first rowid, last rowid), from FTS5's own records."""
    row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    numbers = _varints(row[0]) if row and row[0] else []
    if not numbers:  # written at commit: inside the writing transaction, count the sizes
        sizes = [sum(_varints(blob or b"")) for (blob,) in db.execute(f"SELECT sz FROM {table}_docsize")]
        numbers = [len(sizes), sum(sizes)]
    rows = numbers[0]
    avgdl = max(1.0, sum(numbers[1:]) / rows) if rows else 1.0
    first, last = db.execute(
        f"SELECT (SELECT min(id) FROM {table}_docsize), (SELECT max(id) FROM {table}_docsize)"
    ).fetchone()
    return rows, avgdl, int(first or 0), int(last or 0)


def _varints(blob: bytes) -> list[int]:
    """SQLite varints, as FTS5 stores its sizes and averages."""
    out: list[int] = []
    value = 0
    count = 0
    for byte in blob:
        count += 1
        if count == 9:
            out.append((value << 8) | byte)
            value = count = 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            out.append((value << 7) | byte)
            value = count = 0
    return out


def _lengths(db: sqlite3.Connection, table: str, rowids: Sequence[int]) -> dict[int, float]:
    """Row sizes in tokens (all columns) of `rowids` (newest first)."""
    if rowids[0] - rowids[-1] < 4 * len(rowids):  # dense: one range walk beats a seek per row
        wanted = set(rowids)
        found = db.execute(f"SELECT id, sz FROM {table}_docsize WHERE id BETWEEN ? AND ?", (rowids[-1], rowids[0]))
        sizes = {rid: blob for rid, blob in found if rid in wanted}
    else:
        sizes = {}
        for start in range(0, len(rowids), 500):
            batch = rowids[start : start + 500]
            marks = ",".join("?" * len(batch))
            sizes.update(db.execute(f"SELECT id, sz FROM {table}_docsize WHERE id IN ({marks})", tuple(batch)))
    # Sizes under 128 tokens are one byte each: sum the bytes (most rows), else decode.
    return {
        rid: float(sum(blob) if blob and max(blob) < 0x80 else sum(_varints(blob or b"")))
        for rid, blob in sizes.items()
    }
