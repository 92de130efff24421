"""OpenCode: the fixtures' JSON storage trees and a SQLite opencode.db as v1.2+ writes it (WAL)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, store_contains, stored, wal_db
from .dag_helpers import assert_well_formed

opencode = SOURCES["opencode"]

SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, time_created INTEGER, time_updated INTEGER);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT, directory TEXT NOT NULL,
  title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT, revert TEXT, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE account (id TEXT PRIMARY KEY, email TEXT, access_token TEXT, refresh_token TEXT);
INSERT INTO account VALUES ('acc_1', 'me@example.com', 'oc-ACCESS-TOKEN-DO-NOT-COPY', 'oc-REFRESH-TOKEN-DO-NOT-COPY');
"""


def add_session(conn, sid, parent=None, title="Fix the build", t=1767000000000):
    conn.execute(
        "INSERT INTO session VALUES (?, 'prj_1', ?, 'fix-build', '/work/app', ?, '1.2.4', NULL, NULL, ?, ?)",
        (sid, parent, title, t, t),
    )


def add_message(conn, sid, mid, t, data):
    conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, json.dumps(data)))


def add_part(conn, sid, mid, pid, t, data):
    conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, sid, t, t, json.dumps(data)))


def user_turn(conn, sid, n, t, text):
    mid = f"msg_{n:03d}u"
    add_message(conn, sid, mid, t, {"role": "user", "time": {"created": t}, "agent": "build",
                                    "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}})  # fmt: skip
    add_part(conn, sid, mid, f"prt_{n:03d}u1", t, {"type": "text", "text": text})
    return mid


def reply(conn, sid, n, t, user_mid, *, text, tool=None, completed=True, status="completed"):
    mid = f"msg_{n:03d}a"
    data = {"role": "assistant", "time": {"created": t, **({"completed": t + 900} if completed else {})},
            "parentID": user_mid, "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "mode": "build",
            "path": {"cwd": "/work/app", "root": "/work/app"}, "cost": 0.01,
            "tokens": {"input": 120, "output": 30, "reasoning": 0, "cache": {"read": 0, "write": 0}}}  # fmt: skip
    if completed:
        data["finish"] = "stop"
    add_message(conn, sid, mid, t, data)
    add_part(conn, sid, mid, f"prt_{n:03d}a0", t, {"type": "step-start"})
    if tool:
        add_part(conn, sid, mid, f"prt_{n:03d}a1", t + 100, {
            "type": "tool", "callID": f"call_{n}", "tool": tool,
            "state": {"status": status, "input": {"command": "make"}, "output": "ok" if status == "completed" else "",
                      "title": "make", "metadata": {"exit": 0}, "time": {"start": t + 100, "end": t + 200}}})  # fmt: skip
    add_part(conn, sid, mid, f"prt_{n:03d}a2", t + 300, {"type": "text", "text": text})
    return mid


def make_db(path: Path) -> Path:
    wal_db(path, SCHEMA)
    conn = sqlite3.connect(path)
    add_session(conn, "ses_main")
    u = user_turn(conn, "ses_main", 1, 1767000001000, "the build fails, fix it")
    reply(conn, "ses_main", 1, 1767000002000, u, text="Running make.", tool="bash")
    u = user_turn(conn, "ses_main", 2, 1767000010000, "now run the tests")
    reply(conn, "ses_main", 2, 1767000011000, u, text="Tests pass.", tool="bash")
    add_session(conn, "ses_child", parent="ses_main", title="Child session - 2026-01-01")
    u = user_turn(conn, "ses_child", 3, 1767000003000, "explore the repo")
    reply(conn, "ses_child", 3, 1767000004000, u, text="Found src/.")
    conn.commit()
    conn.close()
    return path


# -- the fixtures ----------------------------------------------------------------------------


def parse(path: Path) -> tuple[list, ImportReport]:
    report = ImportReport()
    out = []
    for file in opencode.discover([path]):
        out.extend(opencode.parse_file(file, report, final=True))
    return out, report


def shape(session) -> list[tuple]:
    return [(n.id, n.role, n.name, n.called_by, n.created_at) for n in session.nodes]


def test_codemie_storage_one_turn_two_tools() -> None:
    [s], report = parse(agent_fixture("opencode/codemie-ai+codemie-code/storage"))
    assert report.warnings == []
    assert (s.native_id, s.cwd, s.model, s.title) == ("test-session-1", "/test/project", "claude-sonnet-4-6", "")
    assert shape(s) == [
        ("msg-user-1", "user", None, None, 1737979200.0),
        ("msg-assistant-1", "assistant", "claude-sonnet-4-6", None, 1737979500.0),
        ("part-tool-read", "tool", "Read", "msg-assistant-1", 1737979500.0),
        ("part-tool-write", "tool", "Write", "msg-assistant-1", 1737979500.0),
    ]
    assert s.nodes[0].content == "Create a test file with console.log statements"
    assert s.nodes[2].input == {"filePath": "src/existing.ts"}
    assert dict(s.nodes[1].metadata)["tokens"]["cache"] == {"read": 200, "write": 100}
    assert_well_formed(s)


def test_stage0_v2_small_and_large_with_compaction_and_failed_tool() -> None:
    sessions, report = parse(agent_fixture("opencode/jazzyalex+agent-sessions/stage0/storage_v2"))
    assert report.warnings == []
    large, small = sessions
    assert (small.native_id, small.title, small.cwd, small.model) == (
        "s_stage0_small",
        "OpenCode Small",
        "/tmp/repo",
        "gpt-4o-mini",
    )
    assert [(n.role, n.content) for n in small.nodes] == [
        ("user", "Hello"), ("assistant", "Found 2 files."), ("tool", "a.txt\nb.txt\n")]  # fmt: skip
    assert small.nodes[2].input == {"command": "ls", "cwd": "/tmp/repo"} and small.nodes[2].created_at == 1730000002.5
    assert [n.role for n in large.nodes] == ["user", "assistant", "tool", "system", "user", "assistant"]
    tool = large.nodes[2]
    assert (tool.name, dict(tool.metadata)["exit"]) == ("bash", 1)
    assert dict(large.nodes[1].metadata)["thinking"] == "Investigating failing command."
    assert dict(large.nodes[1].metadata)["error"] == "MessageAbortedError"
    assert dict(large.nodes[3].metadata)["compaction"] is True
    assert [n.created_at for n in large.nodes if n.role == "user"] == [1730000101.0, 1730000105.0]
    for s in sessions:
        assert_well_formed(s)


def test_stage0_legacy_flat_parts() -> None:
    [s], report = parse(agent_fixture("opencode/jazzyalex+agent-sessions/stage0/storage_legacy"))
    assert report.warnings == []
    assert (s.native_id, s.cwd, s.title) == ("s_stage0_drift", "/tmp/drift", "OpenCode Drift")
    assert [(n.id, n.role) for n in s.nodes] == [
        ("m_user_drift", "user"), ("m_assistant_drift", "assistant"), ("prt_tool_1", "tool")]  # fmt: skip
    assert s.nodes[0].content == "Open README"  # no text part: the summary
    assert s.nodes[1].content == "Read README and extracted the title."
    assert s.nodes[2].content == "# Title\n\nBody\n"


def test_sidecar_main_and_its_subagent() -> None:
    sessions, report = parse(agent_fixture("opencode/marcus+sidecar"))
    assert report.warnings == []
    by = {s.native_id: s for s in sessions}
    main, child = by["ses_test_main"], by["ses_subagent"]
    assert (main.kind, main.title, main.cwd, main.model) == (
        "trunk",
        "Test Session Main",
        "/tmp/test-opencode-project",
        "claude-sonnet-4",
    )
    assert [(n.role, n.name) for n in main.nodes] == [
        ("user", None),
        ("assistant", "claude-sonnet-4"),
        ("tool", "bash"),
    ]
    assert dict(main.nodes[2].metadata)["exit"] == 0
    assert (child.kind, child.parent_native_id, child.nodes) == ("subagent", "ses_test_main", ())


def test_tokscale_message_without_a_session_file_is_not_a_session() -> None:
    sessions, report = parse(agent_fixture("opencode/junhoyeo+tokscale"))
    assert sessions == [] and report.warnings == []


def test_json_storage_cut_midway_warns_naming_the_file(tmp_path: Path, home) -> None:
    tree = tmp_path / "storage"
    shutil.copytree(agent_fixture("opencode/jazzyalex+agent-sessions/stage0/storage_v2"), tree)
    cut = tree / "message" / "s_stage0_large" / "msg_0003.json"
    cut.write_bytes(cut.read_bytes()[:40])
    (tree / "session" / "proj_test" / "ses_s_stage0_small.json").write_text('{"id": "s_stage0_sm')
    age(tree)
    report = imported(home, "opencode", tree)
    assert any(str(cut) in w and "not valid JSON" in w for w in report.warnings), report.warnings
    assert any("ses_s_stage0_small.json" in w for w in report.warnings)
    nodes = stored(home)["s_stage0_large"]
    assert [n.content for n in nodes if n.role == "user"] == ["Step 1"]  # the rest still read


# -- SQLite ----------------------------------------------------------------------------------


def test_sqlite_sessions_turns_tools_and_subagent(tmp_path: Path, home) -> None:
    db = make_db(tmp_path / "opencode" / "opencode.db")
    age(db.parent)
    report = imported(home, "opencode", db.parent)
    assert report.warnings == []
    assert (report.new_sessions, report.turns) == (2, 3)
    nodes = stored(home)
    main = nodes["ses_main"]
    assert [(n.role, n.name) for n in main] == [
        ("user", None), ("assistant", "claude-sonnet-4-5"), ("tool", "bash"),
        ("user", None), ("assistant", "claude-sonnet-4-5"), ("tool", "bash")]  # fmt: skip
    assert [n.created_at for n in main if n.role == "user"] == [1767000001.0, 1767000010.0]
    metas = {m.source_ref["native_id"]: m for m in home.sessions.list_sessions().sessions}
    assert metas["ses_main"].title == "Fix the build"
    assert metas["ses_main"].extra["cwd"] == "/work/app"
    assert metas["ses_child"].extra["kind"] == "subagent"
    assert metas["ses_child"].extra["parent_session"] == metas["ses_main"].id
    assert metas["ses_child"].title != "Child session - 2026-01-01"  # a placeholder is no title


def test_sqlite_account_credentials_never_reach_the_store(tmp_path: Path, home) -> None:
    db = make_db(tmp_path / "opencode.db")
    age(tmp_path)
    imported(home, "opencode", db)
    assert stored(home)
    for secret in (b"oc-ACCESS-TOKEN-DO-NOT-COPY", b"oc-REFRESH-TOKEN-DO-NOT-COPY", b"me@example.com"):
        assert store_contains(home, secret) == []


def test_sqlite_twice_adds_nothing_and_growth_adds_only_new_turns(tmp_path: Path, home) -> None:
    db = make_db(tmp_path / "opencode.db")
    age(tmp_path)
    imported(home, "opencode", db)
    again = imported(home, "opencode", db)
    assert (again.nodes, again.turns, again.skipped) == (0, 0, 1)
    conn = sqlite3.connect(db)
    u = user_turn(conn, "ses_main", 4, 1767000020000, "and deploy")
    reply(conn, "ses_main", 4, 1767000021000, u, text="Deployed.", tool="bash")
    conn.commit()  # the agent keeps it open: the WAL changed, not the database file
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "opencode", db)
    conn.close()
    assert (grown.nodes, grown.turns, grown.new_sessions) == (3, 1, 0)
    assert [n.content for n in stored(home)["ses_main"] if n.role == "user"][-1] == "and deploy"


def test_sqlite_live_reply_is_held_back_until_finished(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db")
    conn = sqlite3.connect(db)
    u = user_turn(conn, "ses_main", 5, 1767000030000, "one more")
    reply(conn, "ses_main", 5, 1767000031000, u, text="Work", tool="bash", completed=False, status="running")
    conn.commit()
    report = ImportReport()
    [main] = [s for s in opencode.parse_file(db, report, final=False) if s.native_id == "ses_main"]
    assert main.nodes[-1].content == "one more" and main.head == "msg_005u"
    conn.execute("DELETE FROM message WHERE id = 'msg_005a'")
    conn.execute("DELETE FROM part WHERE message_id = 'msg_005a'")
    reply(conn, "ses_main", 5, 1767000031000, u, text="Work done.", tool="bash")
    conn.commit()
    conn.close()
    [main] = [s for s in opencode.parse_file(db, report, final=False) if s.native_id == "ses_main"]
    assert [n.content for n in main.nodes[-2:]] == ["Work done.", "ok"]


def test_sqlite_read_only_open_failing_falls_back_to_a_copy(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db")
    agent = sqlite3.connect(db)  # the agent holds it open, its last commit in the -wal only
    agent.execute("PRAGMA wal_autocheckpoint=0")
    agent.execute("UPDATE session SET title = 'Renamed' WHERE id = 'ses_main'")
    agent.commit()
    shm = Path(f"{db}-shm")
    shm.unlink()
    shm.mkdir()  # the -shm cannot be opened (as in a read-only folder): a copy is read
    try:
        report = ImportReport()
        sessions = opencode.parse_file(db, report, final=True)
    finally:
        agent.close()
    assert report.warnings == [] and {s.native_id for s in sessions} == {"ses_main", "ses_child"}
    assert [s.title for s in sessions if s.native_id == "ses_main"] == ["Renamed"]  # the copy has the -wal
    assert shm.is_dir() and not any(tmp_path.glob("*.db.*"))  # nothing written beside it


def test_sqlite_bad_input_is_a_warning_naming_the_file(tmp_path: Path, home) -> None:
    good = make_db(tmp_path / "good" / "opencode.db")
    age(good.parent)
    imported(home, "opencode", good)
    before = stored(home)
    truncated = tmp_path / "cut" / "opencode.db"
    truncated.parent.mkdir()
    conn = sqlite3.connect(good)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    truncated.write_bytes(good.read_bytes()[: 4096 + 100])
    wrong = wal_db(tmp_path / "wrong" / "opencode.db", "CREATE TABLE session (id TEXT); CREATE TABLE other (x);")
    garbage = tmp_path / "garbage" / "opencode.db"
    garbage.parent.mkdir()
    garbage.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    for bad in (truncated, wrong, garbage):
        age(bad.parent)
        report = imported(home, "opencode", bad)
        assert report.warnings and all(str(bad) in w for w in report.warnings), report.warnings
        assert not any("internal error" in w or "Traceback" in w for w in report.warnings)
    assert stored(home) == before


def test_sqlite_locked_database_is_read_and_the_writer_never_waits(tmp_path: Path) -> None:
    db = make_db(tmp_path / "opencode.db")
    writer = sqlite3.connect(db, timeout=0)  # no busy wait: any lock of ours would fail it
    writer.execute("BEGIN IMMEDIATE")
    u = user_turn(writer, "ses_main", 6, 1767000040000, "uncommitted prompt")
    report = ImportReport()
    sessions = opencode.parse_file(db, report, final=True)
    writer.commit()  # would raise "database is locked" had the read taken a lock
    writer.execute("PRAGMA locking_mode=EXCLUSIVE")
    writer.execute("BEGIN EXCLUSIVE")
    reply(writer, "ses_main", 6, 1767000041000, u, text="Exclusive.")
    locked = opencode.parse_file(db, report, final=True)
    writer.commit()
    writer.close()
    main = next(s for s in sessions if s.native_id == "ses_main")
    assert "uncommitted prompt" not in [n.content for n in main.nodes]
    main = next(s for s in locked if s.native_id == "ses_main")
    assert [n.content for n in main.nodes if n.role == "user"][-1] == "uncommitted prompt"
    assert all(str(db) in w for w in report.warnings)


def test_the_go_opencodes_project_database_points_to_crush(tmp_path: Path, home) -> None:
    # <project>/.opencode/opencode.db is the old Go OpenCode's (Crush's schema): the sst importer
    # finds nothing there, and says which importer reads it.
    project = tmp_path / "flag-rs"
    (project / ".opencode").mkdir(parents=True)
    sqlite3.connect(project / ".opencode" / "opencode.db").close()
    report = run_import(home, "opencode", [project])
    assert len(report.warnings) == 1 and "nothing to import" in report.warnings[0]
    assert "`opmem import crush`" in report.warnings[0]
