"""open_agent_db reads another agent's database without writing beside it: no -wal, -shm or
-journal appears in the agent's folder, whichever state its database is in."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from opmem_tui.backend.importers.agent_db import open_agent_db


def _db(path: Path, journal: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.executescript("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('one');")
    conn.commit()
    conn.close()
    return path


def _rows(path: Path) -> list[str]:
    with open_agent_db(path) as conn:
        return [x for (x,) in conn.execute("SELECT x FROM t ORDER BY rowid")]


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_wal_database_no_one_has_open_gets_no_side_files(tmp_path: Path) -> None:
    db = _db(tmp_path / "agent" / "store.db", "WAL")
    before = _listing(db.parent)
    assert sorted(before) == ["store.db"]  # the last connection checkpointed and removed -wal and -shm
    assert _rows(db) == ["one"]
    assert _listing(db.parent) == before


def test_a_live_wal_database_is_read_in_place_with_its_wal(tmp_path: Path) -> None:
    db = _db(tmp_path / "agent" / "store.db", "WAL")
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO t VALUES ('two')")
        writer.commit()
        names = sorted(p.name for p in db.parent.iterdir())
        assert names == ["store.db", "store.db-shm", "store.db-wal"]
        assert _rows(db) == ["one", "two"]  # the commit only in the -wal is seen
        assert sorted(p.name for p in db.parent.iterdir()) == names
    finally:
        writer.close()


def test_a_wal_without_its_shm_is_read_from_a_copy(tmp_path: Path) -> None:
    db = _db(tmp_path / "live" / "store.db", "WAL")
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO t VALUES ('two')")
        writer.commit()
        left = tmp_path / "left" / "store.db"
        left.parent.mkdir()
        shutil.copyfile(db, left)
        shutil.copyfile(f"{db}-wal", f"{left}-wal")  # a -wal left without its -shm
    finally:
        writer.close()
    before = _listing(left.parent)
    assert _rows(left) == ["one", "two"]
    assert _listing(left.parent) == before


def test_a_rollback_journal_database_gets_no_side_files(tmp_path: Path) -> None:
    db = _db(tmp_path / "agent" / "store.db", "DELETE")
    before = _listing(db.parent)
    assert _rows(db) == ["one"]
    assert _listing(db.parent) == before
