from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.memory.sqlite_files import SIDE_SUFFIXES, remove_database


def test_remove_database_takes_the_side_files_and_nothing_else(tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite"
    for suffix in ("", *SIDE_SUFFIXES):
        Path(f"{db}{suffix}").write_bytes(b"x")
    others = [tmp_path / "index.sqlite.new", tmp_path / "index.sqlite-journal.bak", tmp_path / "other.sqlite-wal"]
    for other in others:
        other.write_bytes(b"keep")
    remove_database(db)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in others)
    remove_database(db)  # nothing there: nothing to do, no error
