"""newest_bm25 against FTS5's own bm25() on real FTS5 tables."""

from __future__ import annotations

import random
import sqlite3

import pytest

from backend.memory import ranking
from backend.memory.index import TOKENIZER
from backend.memory.newest_bm25 import _varints, newest_bm25

WORDS = [f"w{i}" for i in range(400)]


def _table(rows: list[tuple[str, str]], *, commit: bool = True) -> sqlite3.Connection:
    """A contentless two-column table like turns_fts; commit=False leaves the insert transaction open
    (FTS5 writes its averages record at commit)."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, ctx, content='', tokenize='{TOKENIZER}')")
    db.executemany("INSERT INTO t(rowid, body, ctx) VALUES(?,?,?)", [(i + 1, b, c) for i, (b, c) in enumerate(rows)])
    if commit:
        db.commit()
    return db


def _distinct_words(rng: random.Random, low: int, high: int) -> str:
    """Each word at most once in a column (tf = 1: newest_bm25's assumption), some rows over 127 tokens."""
    return " ".join(rng.sample(WORDS, rng.randint(low, high)))


def _rows(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(_distinct_words(rng, 1, 200), _distinct_words(rng, 0, 30)) for _ in range(count)]


@pytest.mark.parametrize(("seed", "commit"), [(1, True), (2, True), (3, False)])
def test_same_scores_as_fts5_bm25_when_every_match_fits(seed: int, commit: bool) -> None:
    db = _table(_rows(seed, 300), commit=commit)
    terms = ["w3", "w17", "w250"]
    expr = " OR ".join(f'"{t}"' for t in terms)
    want = dict(db.execute("SELECT rowid, bm25(t, 1.0, 0.5) FROM t WHERE t MATCH ?", (expr,)).fetchall())
    got = dict(newest_bm25(db, "t", [("body", 1.0), ("ctx", 0.5)], terms, 10_000))
    assert set(got) == set(want)
    for rowid, score in want.items():
        assert got[rowid] == pytest.approx(score, rel=1e-9, abs=1e-12)


def test_the_newest_rows_that_match_any_term() -> None:
    db = _table(_rows(7, 500))
    terms = ["w5", "w90"]
    expr = " OR ".join(f'"{t}"' for t in terms)
    for limit in (1, 7, 60):
        newest = [
            r for (r,) in db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid DESC LIMIT ?", (expr, limit))
        ]
        got = newest_bm25(db, "t", [("body", 1.0), ("ctx", 0.5)], terms, limit)
        assert [r for r, _score in got] == newest
        assert all(score < 0 for _r, score in got)  # like bm25(): lower is better


def test_a_row_holding_more_of_the_terms_ranks_first() -> None:
    filler = [(f"w{300 + i} w{301 + i}", "") for i in range(50)]
    db = _table([*filler, ("alpha beta", ""), ("alpha w1 w2 w3", ""), ("beta", ""), *filler])
    got = sorted(newest_bm25(db, "t", [("body", 1.0), ("ctx", 0.5)], ["alpha", "beta"], 100), key=lambda r: r[1])
    assert got[0][0] == 51


def test_no_match_and_unknown_terms() -> None:
    db = _table(_rows(3, 20))
    assert newest_bm25(db, "t", [("body", 1.0), ("ctx", 0.5)], ["nowhere"], 10) == []


def test_external_content_table_with_deleted_rows() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE r(id INTEGER PRIMARY KEY, body TEXT)")
    db.execute(f"CREATE VIRTUAL TABLE r_fts USING fts5(body, content='r', content_rowid='id', tokenize='{TOKENIZER}')")
    rows = _rows(11, 200)
    for i, (body, _ctx) in enumerate(rows, start=1):
        db.execute("INSERT INTO r(id, body) VALUES(?, ?)", (i, body))
        db.execute("INSERT INTO r_fts(rowid, body) VALUES(?, ?)", (i, body))
    for i in range(1, 200, 3):
        db.execute("INSERT INTO r_fts(r_fts, rowid, body) VALUES('delete', ?, ?)", (i, rows[i - 1][0]))
        db.execute("DELETE FROM r WHERE id = ?", (i,))
    terms = ["w8", "w321"]
    expr = " OR ".join(f'"{t}"' for t in terms)
    want = dict(db.execute("SELECT rowid, bm25(r_fts) FROM r_fts WHERE r_fts MATCH ?", (expr,)).fetchall())
    got = dict(newest_bm25(db, "r_fts", [("body", 1.0)], terms, 10_000))
    assert set(got) == set(want)
    for rowid, score in want.items():
        assert got[rowid] == pytest.approx(score, rel=1e-9, abs=1e-12)


def test_varints_as_sqlite_writes_them() -> None:
    assert _varints(bytes([0x05, 0x7F])) == [5, 127]
    assert _varints(bytes([0x81, 0x00])) == [128]
    assert _varints(bytes([0x87, 0xD0, 0x48, 0x01])) == [125_000, 1]
    assert _varints(bytes([0xFF] * 8 + [0x01])) == [(((1 << 56) - 1) << 8) | 1]


def test_common_words_only_page_further_back_when_the_filter_keeps_old_rows(monkeypatch) -> None:
    """A scope that holds only old rows still gets its hits: the newest window grows (x GROWTH)."""
    monkeypatch.setattr(ranking, "DF_CAP", 100)
    monkeypatch.setattr(ranking, "NEWEST_ROWS", 50)
    db = _table([(f"common w{i % 300}", "") for i in range(3000)])
    old = set(range(1, 41))
    rows = ranking.ranked(db, "t", "1.0, 0.5", ["common"], 10, lambda ids: {i: None for i in ids if i in old})
    assert len(rows) == 10 and {rid for rid, _s, _i in rows} <= old
    newest = ranking.ranked(db, "t", "1.0, 0.5", ["common"], 10, lambda ids: {i: None for i in ids})
    assert {rid for rid, _s, _i in newest} <= set(range(2951, 3001))


def test_sparse_matches_same_scores_as_fts5_bm25() -> None:
    """Matches far apart (sizes read row by row, not by one range walk), some rows over 127 tokens."""
    rng = random.Random(5)
    rows = [(_distinct_words(rng, 1, 200) + (" sparse" if i % 50 == 0 else ""), "") for i in range(1000)]
    db = _table(rows)
    want = dict(db.execute("SELECT rowid, bm25(t, 1.0, 0.5) FROM t WHERE t MATCH 'sparse'").fetchall())
    got = dict(newest_bm25(db, "t", [("body", 1.0), ("ctx", 0.5)], ["sparse"], 10_000))
    assert len(want) == 20 and set(got) == set(want)
    for rowid, score in want.items():
        assert got[rowid] == pytest.approx(score, rel=1e-9, abs=1e-12)
