"""Cursor: the real workspace state.vscdb (composers inline, legacy chat tabs), cursor-agent
transcripts from the fixtures, and a global state.vscdb (cursorDiskKV) written as Cursor writes it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, store_contains, stored
from .dag_helpers import assert_well_formed

cursor = SOURCES["cursor"]
TOKEN = "eyJhbGciOi-CURSOR-ACCESS-TOKEN-NEVER-COPY"


def parse(path: Path, final: bool = True) -> tuple[list, ImportReport]:
    report = ImportReport()
    return cursor.parse_file(path, report, final=final), report


def test_workspace_db_composers_and_legacy_chat_tabs() -> None:
    sessions, report = parse(agent_fixture("cursor/slevin48+cursor-history/state.vscdb"))
    assert report.warnings == []
    assert len(sessions) == 31  # 26 composers with an inline conversation, 5 legacy chat tabs
    tabs = [s for s in sessions if s.native_id.startswith("chat-")]
    assert len(tabs) == 5 and all(s.model == "claude-3.5-sonnet" for s in tabs)
    assert sum(len(s.nodes) for s in sessions) == 126
    assert sum(1 for s in sessions for n in s.nodes if n.role == "user") == 63
    first = next(s for s in sessions if s.native_id == "090e988a-b2e3-4fcc-84e0-62a9401ae6ea")
    assert [n.role for n in first.nodes] == ["user", "assistant"]
    assert first.nodes[0].content.startswith("add the following elements to the sidebar:")
    assert first.nodes[0].created_at == 1731784818.255  # the composer's createdAt (ms)
    guide = next(s for s in tabs if s.title == "Ionic App Sidebar Customization Guide")
    assert (len(guide.nodes), sum(1 for n in guide.nodes if n.role == "user")) == (32, 16)
    assert guide.nodes[0].content.startswith("We are building an ionic app for android")
    for s in sessions:
        assert_well_formed(s)


def test_agent_transcripts_tool_results_paired_and_user_query_unwrapped() -> None:
    [large], report = parse(agent_fixture("cursor/jazzyalex+agent-sessions/stage0/large.jsonl"))
    assert report.warnings == []
    assert [(n.role, n.name, n.content) for n in large.nodes] == [
        ("user", None, "What files are here?"),
        ("assistant", None, "I will list the files."),
        ("tool", "Bash", "file1.txt\nfile2.txt"),
        ("assistant", None, "There are two files."),
        ("user", None, "Read file1.txt."),
        ("assistant", None, ""),
        ("tool", "Read", "hello world"),
        ("assistant", None, "The file contains: hello world."),
        ("user", None, "Thanks."),
        ("assistant", None, "You are welcome."),
    ]
    assert dict(large.nodes[1].metadata)["thinking"] == "Let me check the directory."
    [session], _ = parse(agent_fixture("cursor/jazzyalex+agent-sessions/AgentSessionsTests/test-session.jsonl"))
    assert [n.content for n in session.nodes if n.role == "user"] == ["run ls command", "now show me the git status"]
    assert [n.input["command"] for n in session.nodes if n.role == "tool"] == ["ls -la /tmp", "git status"]
    [drift], report = parse(agent_fixture("cursor/jazzyalex+agent-sessions/stage0/schema_drift.jsonl"))
    assert drift.model == "cursor-auto" and report.unknown_records == {"cursor:block:custom_block": 1}
    assert [(n.role, n.content) for n in drift.nodes][1:3] == [
        ("assistant", "Cursor added an unknown block with visible text."),
        ("tool", "Compile failed in Example.swift:42"),
    ]


def test_agent_transcript_subagent_names_its_parent() -> None:
    [child], _ = parse(agent_fixture("cursor/jazzyalex+agent-sessions/stage0/subagent/subagents/child.jsonl"))
    assert (child.kind, child.parent_native_id, len(child.nodes)) == ("subagent", "parent", 2)
    found = cursor.discover([agent_fixture("cursor/jazzyalex+agent-sessions/stage0/subagent")])
    assert found == []  # not under agent-transcripts/: only given files are read
    parent = agent_fixture("cursor/jazzyalex+agent-sessions/stage0/subagent/parent.jsonl")
    assert cursor.discover([child_path := parent.parent / "subagents" / "child.jsonl", parent]) == [parent, child_path]


def test_a_live_transcript_holds_back_the_turn_under_way(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    lines = agent_fixture("cursor/jazzyalex+agent-sessions/stage0/small.jsonl").read_text().splitlines(True)
    path.write_text("".join(lines[:2]) + '{"type":"turn_ended"}\n' + "".join(lines[2:4]))
    [s], _ = parse(path, final=False)
    assert [n.content for n in s.nodes] == ["List the files.", "Here are the files."]
    path.write_text("".join(lines[:2]) + '{"type":"turn_ended"}\n' + "".join(lines))
    [s], _ = parse(path, final=False)
    assert s.nodes[-1].role == "tool"


def global_db(path: Path, composers: dict[str, list[dict]], status: str = "completed") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', ?)", (TOKEN,))
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/refreshToken', ?)", (TOKEN + "-refresh",))
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/cachedEmail', 'someone@example.org')")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('cursorAuth/stripeCustomerId', 'cus_SECRETSTRIPE')")
    for cid, bubbles in composers.items():
        data = {"_v": 10, "composerId": cid, "name": f"Composer {cid}", "createdAt": 1767100000000,
                "lastUpdatedAt": 1767100900000, "status": status, "unifiedMode": "agent",
                "modelConfig": {"modelName": "claude-4.5-sonnet"},
                "fullConversationHeadersOnly": [{"bubbleId": b["bubbleId"], "type": b["type"]} for b in bubbles]}  # fmt: skip
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{cid}", json.dumps(data)))
        for b in bubbles:
            conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{cid}:{b['bubbleId']}", json.dumps(b)))
    conn.commit()
    conn.close()
    return path


def bubbles(n: int = 2) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"bubbleId": f"u{i}", "type": 1, "text": f"prompt {i}", "createdAt": f"2026-01-01T10:0{i}:00Z"})
        out.append({"bubbleId": f"a{i}", "type": 2, "text": f"answer {i}", "thinking": {"text": "hmm"},
                    "tokenCount": {"inputTokens": 10, "outputTokens": 5}})  # fmt: skip
        out.append({"bubbleId": f"t{i}", "type": 2, "text": "", "toolFormerData": {
            "tool": 15, "name": "run_terminal_cmd", "toolCallId": f"call{i}", "status": "completed",
            "rawArgs": json.dumps({"command": "make test"}), "result": json.dumps({"output": "ok"})}})  # fmt: skip
    return out


def test_global_db_composers_bubbles_and_tools(tmp_path: Path, home) -> None:
    db = global_db(tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb", {"c-1": bubbles(2)})
    age(tmp_path)
    assert cursor.discover([tmp_path / "Cursor" / "User"]) == [db]
    report = imported(home, "cursor", tmp_path / "Cursor" / "User")
    assert report.warnings == [] and (report.new_sessions, report.turns) == (1, 2)
    nodes = stored(home)["c-1"]
    assert [(n.role, n.name) for n in nodes] == [
        ("user", None), ("assistant", None), ("tool", "run_terminal_cmd"),
        ("user", None), ("assistant", None), ("tool", "run_terminal_cmd")]  # fmt: skip
    assert nodes[2].input == {"command": "make test"} and nodes[2].content == "ok"
    assert nodes[0].created_at == 1767261600.0  # the bubble's own ISO createdAt
    [meta] = home.sessions.list_sessions().sessions
    assert (meta.title, meta.extra["model"]) == ("Composer c-1", "claude-4.5-sonnet")


def test_cursor_auth_rows_leave_no_trace_in_the_store(tmp_path: Path, home) -> None:
    db = global_db(tmp_path / "state.vscdb", {"c-1": bubbles(1)})
    age(tmp_path)
    imported(home, "cursor", db)
    assert stored(home)["c-1"]
    for secret in (TOKEN.encode(), b"someone@example.org", b"cus_SECRETSTRIPE", b"cursorAuth"):
        assert store_contains(home, secret) == []


def test_twice_adds_nothing_growth_adds_only_the_new_turn(tmp_path: Path, home) -> None:
    db = global_db(tmp_path / "state.vscdb", {"c-1": bubbles(1)})
    age(tmp_path)
    first = imported(home, "cursor", db)
    assert (first.nodes, first.turns) == (3, 1)
    again = imported(home, "cursor", db)
    assert (again.nodes, again.skipped) == (0, 1)
    global_db(db, {"c-1": bubbles(2)})
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "cursor", db)
    assert (grown.nodes, grown.turns, grown.new_sessions) == (3, 1, 0)


def test_a_generating_composer_holds_its_last_reply(tmp_path: Path) -> None:
    db = global_db(tmp_path / "state.vscdb", {"c-1": bubbles(1)[:2]}, status="generating")
    [s], _ = parse(db, final=False)
    assert [n.id for n in s.nodes] == ["u0"]


def test_bad_databases_warn_naming_the_file(tmp_path: Path, home) -> None:
    good = global_db(tmp_path / "good" / "state.vscdb", {"c-1": bubbles(1)})
    age(good.parent)
    imported(home, "cursor", good)
    before = stored(home)
    cut = tmp_path / "cut" / "state.vscdb"
    cut.parent.mkdir()
    cut.write_bytes(good.read_bytes()[:4200])
    other = tmp_path / "other" / "state.vscdb"
    other.parent.mkdir()
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    half = tmp_path / "half" / "state.vscdb"
    shutil.copytree(good.parent, half.parent)
    conn = sqlite3.connect(half)
    conn.execute("UPDATE cursorDiskKV SET value = substr(value, 1, 30) WHERE key = 'composerData:c-1'")
    conn.commit()
    conn.close()
    for bad in (cut, other, half):
        age(bad.parent)
        report = imported(home, "cursor", bad)
        assert report.warnings and all(str(bad) in w for w in report.warnings), report.warnings
        assert not any("internal error" in w for w in report.warnings)
    assert stored(home) == before
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}\n{"role":"assis')
    age(transcript)
    report = imported(home, "cursor", transcript)
    assert report.warnings == [] and stored(home)["t"][0].content == "hi"  # a torn last line waits
    transcript.write_text('{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}\n{"role":"assis\n')
    report = imported(home, "cursor", transcript)
    assert report.warnings == [f"{transcript}:2: not valid JSON; line skipped"]


def test_global_composers_get_the_folder_of_the_workspace_that_lists_them(tmp_path: Path, home) -> None:
    user = tmp_path / "Cursor" / "User"
    global_db(user / "globalStorage" / "state.vscdb", {"c-1": bubbles(1), "c-2": bubbles(1)})
    workspace = user / "workspaceStorage" / "6ae6eb0531606929850a78b0a04649f1"
    workspace.mkdir(parents=True)
    (workspace / "workspace.json").write_text(json.dumps({"folder": "file:///work/my%20app"}))
    conn = sqlite3.connect(workspace / "state.vscdb")
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    listed = {"allComposers": [{"composerId": "c-1", "name": "Composer c-1", "type": "head"}]}
    conn.execute("INSERT INTO ItemTable VALUES ('composer.composerData', ?)", (json.dumps(listed),))
    conn.commit()
    conn.close()
    age(tmp_path)
    report = imported(home, "cursor", user)
    assert report.warnings == [] and report.new_sessions == 2  # the workspace list adds no session of its own
    metas = {m.source_ref["native_id"]: m for m in home.sessions.list_sessions().sessions}
    assert metas["c-1"].extra["cwd"] == "/work/my app"
    assert metas["c-2"].extra.get("cwd", "") == ""
