"""ranking.py on a table larger than DF_CAP: common words leave the expression, filters page on."""

from __future__ import annotations

import sqlite3

from backend.memory import ranking


def table(rows: int) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, content='')")
    db.executemany(
        "INSERT INTO t(rowid, body) VALUES(?, ?)",
        [
            (i, " ".join(["common", "mid" if i % 2 else "", "rare" if i % 500 == 0 else "", f"w{i}"]))
            for i in range(1, rows + 1)
        ],
    )
    return db


def test_split_terms_keeps_the_rare_ones_within_the_budget(monkeypatch) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", 3000)
    monkeypatch.setattr(ranking, "ROW_BUDGET", 2000)
    db = table(5000)
    rare, common = ranking.split_terms(db, "t", ["common", "mid", "rare", "absent"])
    assert rare == ["rare"] and common == ["mid", "common"]  # mid (2500 rows) is within DF_CAP, over the budget
    monkeypatch.setattr(ranking, "ROW_BUDGET", 3000)
    assert ranking.split_terms(db, "t", ["common", "mid", "rare"]) == (["rare", "mid"], ["common"])
    assert ranking.split_terms(db, "t", ["common"], rows=10) == (["common"], [])  # a small table: no counting
    # a budget of its own (records): the default is not used
    assert ranking.split_terms(db, "t", ["common", "mid", "rare"], budget=2000) == (["rare"], ["mid", "common"])


def test_ranked_pages_on_until_the_filter_is_satisfied(monkeypatch) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", 3000)
    db = table(5000)
    wanted = {i for i in range(1, 5001) if i % 7 == 0}
    rows = ranking.ranked(db, "t", "", ["mid"], 50, lambda ids: {i: None for i in ids if i in wanted})
    assert len(rows) == 50 and all(rid in wanted for rid, _score, _info in rows)
    scores = [score for _rid, score, _info in rows]
    assert scores == sorted(scores, reverse=True)


def test_a_query_of_common_words_takes_the_newest_matches(monkeypatch) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", 1000)
    db = table(5000)
    rows = ranking.ranked(db, "t", "", ["common"], 10, lambda ids: {i: None for i in ids})
    assert len(rows) == 10 and min(rid for rid, _s, _i in rows) > 5000 - 1000


def test_the_filter_is_asked_best_first_and_only_as_far_as_needed(monkeypatch) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", 1000)
    db = table(5000)
    asked: list[int] = []

    def keep(ids):
        asked.extend(ids)
        return {i: None for i in ids if i % 3}

    rows = ranking.ranked(db, "t", "", ["common"], 10, keep)
    # the same rows as filtering all the newest DF_CAP matches, then taking the best ten
    newest = db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH 'common' ORDER BY rowid DESC LIMIT 1000").fetchall()
    best = sorted(((rid, s) for rid, s in newest if rid % 3), key=lambda row: row[1])[:10]
    assert [rid for rid, _s, _i in rows] == [rid for rid, _s in best]
    assert len(asked) < len(newest)
