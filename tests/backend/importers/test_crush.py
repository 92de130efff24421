"""Crush / the old Go OpenCode: the fixture's real .opencode/opencode.db (WAL), and synthetic .crush/crush.db."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, store_contains, stored, wal_db
from .dag_helpers import assert_well_formed

crush = SOURCES["crush"]
SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  summary_message_id TEXT, updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]',
  model TEXT, provider TEXT, is_summary_message INTEGER DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  finished_at INTEGER);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
  version TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
INSERT INTO files VALUES ('f1', 's1', '/p/.env', 'API_KEY=file-snapshot-never-read', '1', 1, 1);
"""


def project_copy(tmp_path: Path) -> Path:
    source = agent_fixture("crush/kashifkhan0771+utils/.opencode")
    target = tmp_path / "utils" / ".opencode"
    target.mkdir(parents=True)
    for name in ("opencode.db", "opencode.db-wal"):
        shutil.copyfile(source / name, target / name)
    age(tmp_path)
    return target / "opencode.db"


def test_the_real_old_opencode_db(tmp_path: Path) -> None:
    db = project_copy(tmp_path)
    assert crush.discover([tmp_path / "utils"]) == [db]
    assert SOURCES["opencode"].discover([db.parent]) == []  # not the new OpenCode's database
    report = ImportReport()
    sessions = crush.parse_file(db, report, final=True)
    assert report.warnings == [] and report.unknown_records == {}
    # The main file alone holds 6 sessions and 110 messages (13 user, 54 assistant, 43 tool messages
    # holding the results of 78 calls); upstream's -wal adds a seventh session. Which -wal a copy of
    # the fixtures carries has varied, so the totals are counted from the same two files by SQL.
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as raw:
        rows = raw.execute("SELECT count(*) FROM sessions").fetchone()[0]
        roles = dict(raw.execute("SELECT role, count(*) FROM messages GROUP BY role").fetchall())
    assert len(sessions) == rows >= 6
    assert sum(1 for s in sessions for n in s.nodes if n.role == "user") == roles["user"] >= 13
    assert sum(1 for s in sessions for n in s.nodes if n.role == "assistant") == roles["assistant"] >= 54
    assert sum(1 for s in sessions for n in s.nodes if n.role == "tool" and n.content) >= 78
    first = next(s for s in sessions if s.native_id == "bd9a6907-4d8b-4f34-9c25-e18c7740e41d")
    assert (first.title, first.cwd, first.model) == (
        "OpenCode.md with Build Commands and Style Guidelines",
        str(tmp_path / "utils"),
        "gpt-4o-mini",
    )
    assert first.nodes[0].created_at == 1751991380.0  # seconds, though the schema comment says ms
    assert first.nodes[0].content.startswith("Please analyze this codebase and create a OpenCode.md")
    tool = first.nodes[2]
    assert (tool.role, tool.name, tool.input, tool.content) == (
        "tool",
        "glob",
        {"path": "/home/max/dev/utils/", "pattern": "OpenCode.md"},
        "No files found",
    )
    failed = next(n for s in sessions for n in s.nodes if n.content.startswith("File not found: /home/max"))
    assert dict(failed.metadata)["is_error"] is True
    for s in sessions:
        assert_well_formed(s)


def make(path: Path) -> Path:
    wal_db(path, SCHEMA)
    return path


def add(conn, sid, mid, role, parts, t, *, finished=True, model="claude-4-sonnet"):
    conn.execute(
        "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at, finished_at)"
        " VALUES (?, ?, ?, ?, ?, 'anthropic', ?, ?, ?)",
        (mid, sid, role, json.dumps(parts), model if role == "assistant" else "", t, t, t + 1 if finished else None),
    )


def turn(conn, sid, n, t, *, finished=True):
    add(conn, sid, f"{sid}-u{n}", "user", [{"type": "text", "data": {"text": f"prompt {n}"}}], t)
    call = {
        "type": "tool_call",
        "data": {"id": f"{sid}-call{n}", "name": "bash", "input": '{"command": "go test"}', "finished": True},
    }
    add(
        conn,
        sid,
        f"{sid}-a{n}",
        "assistant",
        [{"type": "text", "data": {"text": "Testing."}}, call],
        t + 1,
        finished=finished,
    )
    if finished:
        add(
            conn,
            sid,
            f"{sid}-t{n}",
            "tool",
            [{"type": "tool_result", "data": {"tool_call_id": f"{sid}-call{n}", "content": "ok", "is_error": False}}],
            t + 2,
        )


def test_crush_db_subagent_twice_growth_and_no_file_snapshots(tmp_path: Path, home) -> None:
    db = make(tmp_path / "proj" / ".crush" / "crush.db")
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'Fix tests', 1, 1767000000)")
    turn(conn, "s1", 1, 1767000001)
    conn.execute(
        "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at)"
        " VALUES ('s1-call1', 's1', 'New Agent Session', 1, 1767000002)"
    )
    turn(conn, "s1-call1", 1, 1767000003)
    conn.commit()
    age(tmp_path)
    report = imported(home, "crush", tmp_path / "proj")
    assert report.warnings == [] and (report.new_sessions, report.turns) == (2, 2)
    metas = {m.source_ref["native_id"]: m for m in home.sessions.list_sessions().sessions}
    child = metas["s1-call1"]
    assert (child.extra["kind"], child.extra["parent_session"]) == ("subagent", metas["s1"].id)
    assert metas["s1"].extra["cwd"] == str(tmp_path / "proj")
    assert imported(home, "crush", db).nodes == 0
    turn(conn, "s1", 2, 1767000010)
    conn.commit()  # Crush keeps the database open: the change is in the WAL
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "crush", db)
    conn.close()
    assert (grown.nodes, grown.turns, grown.new_sessions) == (3, 1, 0)
    assert [n.role for n in stored(home)["s1"]] == ["user", "assistant", "tool"] * 2
    assert store_contains(home, b"file-snapshot-never-read") == []


def test_an_unfinished_reply_is_held_back(tmp_path: Path) -> None:
    db = make(tmp_path / ".crush" / "crush.db")
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'Live', 1, 1767000000)")
    turn(conn, "s1", 1, 1767000001, finished=False)
    conn.commit()
    [s] = crush.parse_file(db, ImportReport(), final=False)
    assert [n.id for n in s.nodes] == ["s1-u1"]
    [s] = crush.parse_file(db, ImportReport(), final=True)
    assert [n.role for n in s.nodes] == ["user", "assistant", "tool"]
    conn.close()


def test_bad_databases(tmp_path: Path, home) -> None:
    good = project_copy(tmp_path)
    imported(home, "crush", good)
    before = stored(home)
    wrong = wal_db(tmp_path / "w" / ".crush" / "crush.db", "CREATE TABLE sessions (id TEXT);")
    cut = tmp_path / "c" / ".crush" / "crush.db"
    cut.parent.mkdir(parents=True)
    cut.write_bytes(good.read_bytes()[:8192])
    old = wal_db(
        tmp_path / "o" / ".crush" / "crush.db",
        "CREATE TABLE sessions (id TEXT, title TEXT); "
        "CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT, parts TEXT);"
        "INSERT INTO sessions VALUES ('x', 'Old schema'); INSERT INTO messages VALUES ('m', 'x', 'user', '[{');",
    )
    said = {}
    for bad in (wrong, cut, old):
        age(bad.parent)
        report = imported(home, "crush", bad)
        assert report.warnings and all(str(bad) in w for w in report.warnings), report.warnings
        assert not any("internal error" in w for w in report.warnings)
        said[bad] = report.warnings[0]
    assert "unknown Crush schema: table 'sessions' lacks title" in said[wrong]
    assert "damaged or cut-short database" in said[cut] or "not a SQLite database" in said[cut]
    assert said[old] == f"{old}: message m: its parts are not a JSON list"
    assert {k: v for k, v in stored(home).items() if k in before} == before
