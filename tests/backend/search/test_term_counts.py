"""Term counts kept while the index is unchanged, dropped as soon as it changes (either writer)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from backend.memory import ranking
from backend.memory.index import SearchIndex
from backend.memory.term_counts import TermCounts


def _db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS t USING fts5(body, content='')")
    return db


def _add(db: sqlite3.Connection, start: int, count: int, text: str) -> None:
    db.execute("BEGIN")
    db.executemany("INSERT INTO t(rowid, body) VALUES(?, ?)", [(i, text) for i in range(start, start + count)])
    db.execute("COMMIT")


def _counting(db: sqlite3.Connection) -> list[str]:
    seen: list[str] = []
    db.set_trace_callback(lambda sql: seen.append(sql) if "count(*)" in sql else None)
    return seen


def test_counts_are_reused_until_this_connection_writes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", 10)
    db = _db(tmp_path / "i.sqlite")
    _add(db, 1, 8, "mid other")
    _add(db, 100, 30, "other")
    counts = TermCounts(db)
    asked = _counting(db)
    assert ranking.split_terms(db, "t", ["mid", "other"], counts=counts) == (["mid"], ["other"])
    assert len(asked) == 2
    assert ranking.split_terms(db, "t", ["mid", "other"], counts=counts) == (["mid"], ["other"])
    assert len(asked) == 2  # kept
    _add(db, 200, 5, "mid")  # now in 13 rows: over DF_CAP
    assert ranking.split_terms(db, "t", ["mid", "other"], counts=counts) == ([], ["mid", "other"])
    assert len(asked) == 4


def test_counts_are_dropped_when_another_connection_commits(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", 10)
    path = tmp_path / "i.sqlite"
    reader = _db(path)
    writer = _db(path)
    _add(writer, 1, 8, "mid")
    _add(writer, 100, 30, "other")
    counts = TermCounts(reader)
    assert ranking.split_terms(reader, "t", ["mid", "other"], counts=counts) == (["mid"], ["other"])
    _add(writer, 200, 5, "mid")
    assert ranking.split_terms(reader, "t", ["mid", "other"], counts=counts) == ([], ["mid", "other"])


def test_one_cache_per_thread_connection(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "index.sqlite")
    first = index.term_counts()
    assert index.term_counts() is first and first.db is index.db
    index.close()
    assert index.term_counts() is not first  # a new connection, a new cache
