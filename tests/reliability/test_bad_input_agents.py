"""Bad input for the importers of other agents' stores (SQLite databases, JSON files and folders):
a truncated database, one of a wrong schema, garbage after a valid header, a database locked by
its writer, a JSON file cut mid-way. Each one is imported into a home that already holds a
session: no exception, no "internal error", every warning names the file, the stored session is
untouched and every repo still passes git fsck. A locked database is read (from a private copy)
while the writer, which waits for no lock at all, goes on and commits."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from opmem_tui.backend.importers import run_import
from tests.backend.importers.agent_helpers import age
from tests.backend.importers.test_cline import cline_task
from tests.backend.importers.test_continue_amp import SID, continue_session, thread
from tests.backend.importers.test_crush import SCHEMA as CRUSH_SCHEMA
from tests.backend.importers.test_crush import turn as crush_turn
from tests.backend.importers.test_cursor import bubbles, global_db
from tests.backend.importers.test_opencode import make_db

from .test_bad_input import InputFigures, assert_clean, check_stored, seeded_home


def opencode_db(folder: Path) -> Path:
    return make_db(folder / "opencode.db")


def cursor_db(folder: Path) -> Path:
    return global_db(folder / "state.vscdb", {"c-1": bubbles(2)})


def crush_db(folder: Path) -> Path:
    db = folder / ".crush" / "crush.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(CRUSH_SCHEMA)
    conn.execute("INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'x', 1, 1767000000)")
    crush_turn(conn, "s1", 1, 1767000001)
    conn.commit()
    conn.close()
    return db


def goose_db(folder: Path) -> Path:
    db = folder / "sessions.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, working_dir TEXT NOT NULL);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content_json TEXT,"
        " created_timestamp INTEGER);"
        "INSERT INTO sessions VALUES ('g1', 'Goose', '/w');"
        """INSERT INTO messages VALUES (1, 'g1', 'user', '[{"type": "text", "text": "prompt"}]', 1767200000);"""
    )
    conn.commit()
    conn.close()
    return db


DATABASES: dict[str, Callable[[Path], Path]] = {
    "opencode": opencode_db,
    "cursor": cursor_db,
    "crush": crush_db,
    "goose": goose_db,
}


def _checkpointed(db: Path) -> bytes:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db.read_bytes()


def damage(kind: str, db: Path) -> None:
    data = _checkpointed(db)
    Path(f"{db}-wal").unlink(missing_ok=True)
    Path(f"{db}-shm").unlink(missing_ok=True)
    if kind == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif kind == "header-only":
        db.write_bytes(data[:100])
    elif kind == "garbage-after-header":
        db.write_bytes(data[:100] + bytes(range(256)) * 64)
    elif kind == "wrong-schema":
        db.unlink()
        conn = sqlite3.connect(db)
        conn.executescript("CREATE TABLE notes (id INTEGER, body TEXT); INSERT INTO notes VALUES (1, 'hello');")
        conn.close()
    elif kind == "empty":
        db.write_bytes(b"")


@pytest.mark.parametrize("kind", ["truncated", "header-only", "garbage-after-header", "wrong-schema", "empty"])
@pytest.mark.parametrize("source", list(DATABASES))
def test_a_damaged_database(source: str, kind: str, tmp_path: Path) -> None:
    figures = InputFigures()
    home, before = seeded_home(tmp_path)
    folder = tmp_path / "agent"
    folder.mkdir()
    db = DATABASES[source](folder)
    damage(kind, db)
    age(folder)
    given = db if kind != "empty" else folder
    try:
        report = run_import(home, source, [given], bind=False, force=True)
    except Exception as exc:
        figures.crashes.append(f"{source}/{kind}: {type(exc).__name__}: {exc}")
    else:
        assert report.warnings, f"{source}/{kind}: no warning"
        for warning in report.warnings:
            if "internal error" in warning:
                figures.crashes.append(warning)
            elif str(given) not in warning:
                figures.unclear.append(warning)
    path = home.path
    del home
    check_stored(path, before, figures)
    assert_clean(figures)


@pytest.mark.parametrize("source", list(DATABASES))
def test_a_database_locked_by_its_writer(source: str, tmp_path: Path) -> None:
    figures = InputFigures()
    home, before = seeded_home(tmp_path)
    folder = tmp_path / "agent"
    folder.mkdir()
    db = DATABASES[source](folder)
    age(folder)
    writer = sqlite3.connect(db, timeout=0)  # waits for nothing: a lock of ours would fail it
    writer.execute("PRAGMA locking_mode=EXCLUSIVE")
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("CREATE TABLE agent_scratch (x)")  # an uncommitted write under an exclusive lock
    report = run_import(home, source, [db], bind=False, force=True)
    writer.commit()
    writer.close()
    assert not any("internal error" in w for w in report.warnings)
    assert all(str(db) in w for w in report.warnings), report.warnings
    assert report.new_sessions >= 1  # what was committed before the lock is read (from a copy)
    path = home.path
    del home
    check_stored(path, before, figures)
    assert_clean(figures)


def cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


JSON_CASES: dict[str, Callable[[Path], tuple[Path, Path]]] = {
    # source -> (what to import, the file to cut)
    "cline": lambda base: (lambda t: (t, t / "api_conversation_history.json"))(cline_task(base)),
    "continue": lambda base: (lambda p: (p, p))(_write(base / "sessions" / f"{SID}.json", continue_session(2))),
    "amp": lambda base: (lambda p: (p, p))(_write(base / "threads" / "T-1.json", thread())),
    "opencode": lambda base: _opencode_storage(base),
}


def _write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def _opencode_storage(base: Path) -> tuple[Path, Path]:
    from tests.backend.importers.agent_helpers import agent_fixture

    tree = base / "storage"
    shutil.copytree(agent_fixture("opencode/jazzyalex+agent-sessions/stage0/storage_v2"), tree)
    return tree, tree / "part" / "m_assistant_large_1" / "001.json"


@pytest.mark.parametrize("source", list(JSON_CASES))
def test_a_json_file_cut_midway(source: str, tmp_path: Path) -> None:
    figures = InputFigures()
    home, before = seeded_home(tmp_path)
    given, damaged = JSON_CASES[source](tmp_path / "agent")
    cut(damaged)
    age(tmp_path / "agent")
    report = run_import(home, source, [given], bind=False, force=True)
    assert any(str(damaged) in w for w in report.warnings), report.warnings
    assert not any("internal error" in w for w in report.warnings)
    path = home.path
    del home
    check_stored(path, before, figures)
    assert_clean(figures)
