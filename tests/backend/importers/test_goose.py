"""Goose: the fixture's real sessions.db (schema v5, one empty session), the same database with
messages added the way Goose writes them, and the older JSONL files."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, stored
from .dag_helpers import assert_well_formed

goose = SOURCES["goose"]
FIXTURE = "goose/jwp23+dotfiles/.local/share/goose/sessions/sessions.db"


def copy(tmp_path: Path) -> Path:
    target = tmp_path / "sessions" / "sessions.db"
    target.parent.mkdir()
    shutil.copyfile(agent_fixture(FIXTURE), target)
    conn = sqlite3.connect(target)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    return target


def request(cid: str, command: str) -> dict:
    return {
        "type": "toolRequest",
        "id": cid,
        "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": command}}},
    }


def response(cid: str, text: str, error: bool = False) -> dict:
    return {
        "type": "toolResponse",
        "id": cid,
        "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": text}], "isError": error}},
    }


def add(conn, role: str, content: list, t: int) -> None:
    conn.execute(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20251202_1', ?, ?, ?)",
        (role, json.dumps(content), t),
    )


def turn(conn, n: int, t: int) -> None:
    add(conn, "user", [{"type": "text", "text": f"prompt {n}"}], t)
    add(conn, "assistant", [{"type": "text", "text": "Listing."}, request(f"call_{n}", "ls")], t + 1)
    add(conn, "user", [response(f"call_{n}", "a.txt")], t + 2)
    add(conn, "assistant", [{"type": "text", "text": "One file."}], t + 3)


def test_the_real_database_holds_one_empty_session(tmp_path: Path) -> None:
    db = copy(tmp_path)
    assert goose.discover([db.parent]) == [db]
    report = ImportReport()
    [s] = goose.parse_file(db, report, final=True)
    assert report.warnings == []
    assert (s.native_id, s.title, s.cwd, s.nodes) == (
        "20251202_1",
        "CLI Session",
        "/Users/jpresley/workspace/tmp/vsl",
        (),
    )


def test_messages_tools_twice_and_growth(tmp_path: Path, home) -> None:
    db = copy(tmp_path)
    conn = sqlite3.connect(db)
    turn(conn, 1, 1764694800)
    conn.commit()
    age(tmp_path)
    report = imported(home, "goose", db.parent)
    assert report.warnings == [] and (report.new_sessions, report.turns, report.nodes) == (1, 1, 4)
    nodes = stored(home)["20251202_1"]
    assert [(n.role, n.name, n.content) for n in nodes] == [
        ("user", None, "prompt 1"),
        ("assistant", None, "Listing."),
        ("tool", "developer__shell", "a.txt"),
        ("assistant", None, "One file."),
    ]
    assert nodes[2].input == {"command": "ls"} and nodes[0].created_at == 1764694800.0
    assert imported(home, "goose", db).nodes == 0
    turn(conn, 2, 1764694900)
    conn.commit()
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "goose", db)
    conn.close()
    assert (grown.nodes, grown.turns, grown.new_sessions) == (4, 1, 0)


def test_a_call_without_its_response_waits(tmp_path: Path) -> None:
    db = copy(tmp_path)
    conn = sqlite3.connect(db)
    add(conn, "user", [{"type": "text", "text": "go"}], 1764694800)
    add(conn, "assistant", [request("c1", "sleep 9")], 1764694801)
    conn.commit()
    [s] = goose.parse_file(db, ImportReport(), final=False)
    assert [n.role for n in s.nodes] == ["user"]
    conn.close()


def test_jsonl_sessions(tmp_path: Path) -> None:
    path = tmp_path / "20250101_3.jsonl"
    lines = [
        {"working_dir": "/work/g", "description": "Shell work", "message_count": 3},
        {"role": "user", "created": 1735700000, "content": [{"type": "text", "text": "run it"}]},
        {"role": "assistant", "created": 1735700001, "content": [request("t1", "make")]},
        {"role": "user", "created": 1735700002, "content": [response("t1", "boom", error=True)]},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"role": "assistant", "cre')
    report = ImportReport()
    [s] = goose.parse_file(path, report, final=True)
    assert report.warnings == []  # the torn last line is one still being written
    assert (s.native_id, s.title, s.cwd) == ("20250101_3", "Shell work", "/work/g")
    assert [(n.role, n.content) for n in s.nodes] == [("user", "run it"), ("assistant", ""), ("tool", "boom")]
    assert dict(s.nodes[2].metadata)["is_error"] is True
    assert_well_formed(s)


def test_bad_input(tmp_path: Path, home) -> None:
    wrong = tmp_path / "w" / "sessions.db"
    wrong.parent.mkdir()
    sqlite3.connect(wrong).execute("CREATE TABLE sessions (id TEXT)").connection.close()
    cut = tmp_path / "c" / "sessions.db"
    cut.parent.mkdir()
    cut.write_bytes(agent_fixture(FIXTURE).read_bytes()[:5000])
    for bad in (wrong, cut):
        age(bad.parent)
        report = imported(home, "goose", bad)
        assert report.warnings and all(str(bad) in w for w in report.warnings), report.warnings
        assert not any("internal error" in w for w in report.warnings)


def test_a_database_whose_one_session_has_no_message_imports_no_session(tmp_path: Path, home) -> None:
    """The real database's one session has no message: the summary says 0 sessions, 0 new (it
    said "sessions 1, new 0"), and no session folder is made."""
    from opmem_tui.backend.importers import run_import

    db = copy(tmp_path)
    report = run_import(home, "goose", [db])
    assert (report.sessions, report.new_sessions, report.turns) == (0, 0, 0)
    assert home.sessions.list_sessions().sessions == ()
