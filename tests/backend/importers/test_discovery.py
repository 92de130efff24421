"""`opmem import` with no source: a fake HOME holding every agent's default layout is found whole,
with the right counts, then imported agent by agent; `--list` only lists."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.discovery import find_agents
from opmem_tui.cli import main
from opmem_tui.cli_import import register
from tests.reliability.nasty_files import claude_lines, codex_lines, gemini_lines

from .agent_helpers import age, agent_fixture
from .test_cline import history
from .test_crush import SCHEMA as CRUSH_SCHEMA
from .test_crush import turn as crush_turn
from .test_cursor import bubbles, global_db
from .test_opencode import make_db

ENV = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "OPENCODE_DB",
    "COPILOT_HOME",
    "GOOSE_PATH_ROOT",
    "CLINE_DIR",
    "OPENPROGRAM_STATE_DIR",
)
EXPECTED = {
    "claude": 2,
    "codex": 1,
    "gemini": 1,
    "opencode": 2,
    "cursor": 2,
    "cline": 2,
    "roo": 1,
    "copilot": 1,
    "crush": 1,
    "goose": 1,
    "qwen": 1,
    "droid": 1,
    "kimi": 2,
    "continue": 1,
    "amp": 1,
}


def lines(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def write(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def fake_home(home: Path, alt: Path) -> Path:
    """Every agent's default layout under `home` (Linux and macOS paths, VS Code forks); returns a project folder."""
    for n, sid in enumerate(("11111111-2222-3333-4444-555555555555", "11111111-2222-3333-4444-666666666666")):
        lines(
            home / ".claude" / "projects" / f"-tmp-p{n}" / f"{sid}.jsonl",
            [r | {"sessionId": sid} for r in claude_lines(f"claude prompt {n}")],
        )
    lines(
        home / ".codex" / "sessions" / "2026" / "01" / "01" / "rollout-2026-01-01T00-00-00-0199aaaa.jsonl",
        codex_lines("codex prompt"),
    )
    lines(
        home / ".gemini" / "tmp" / "proj" / "chats" / "session-2026-04-29T21-39-5f0c2a1e.jsonl",
        gemini_lines("gemini prompt"),
    )
    make_db(home / ".local" / "share" / "opencode" / "opencode.db")
    global_db(home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb", {"c-1": bubbles(1)})
    lines(
        home / ".cursor" / "projects" / "-work-app" / "agent-transcripts" / "t-1.jsonl",
        [
            {"role": "user", "message": {"content": [{"type": "text", "text": "hi"}]}},
            {"role": "assistant", "message": {"content": [{"type": "text", "text": "hello"}]}},
        ],
    )
    for app, task in (("Code", "1767200000000"), ("Windsurf", "1767200009000")):
        ext = home / ".config" / app / "User" / "globalStorage" / "saoudrizwan.claude-dev"
        write(ext / "tasks" / task / "api_conversation_history.json", history(1))
    mac = home / "Library" / "Application Support" / "VSCodium" / "User" / "globalStorage"
    write(mac / "rooveterinaryinc.roo-cline" / "tasks" / "1767300000000" / "api_conversation_history.json", history(1))
    events = alt / "copilot" / "session-state" / "cop-1" / "events.jsonl"
    lines(
        events,
        [
            {"type": "session.start", "id": "e1", "data": {"sessionId": "cop-1"}},
            {"type": "user.message", "id": "e2", "data": {"content": "copilot prompt"}},
            {"type": "assistant.message", "id": "e3", "data": {"content": "ok"}},
        ],
    )
    goose = home / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    goose.parent.mkdir(parents=True)
    conn = sqlite3.connect(goose)
    conn.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, working_dir TEXT NOT NULL);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content_json TEXT,"
        " created_timestamp INTEGER);"
        "INSERT INTO sessions VALUES ('20260101_1', 'Goose work', '/work/g'), ('20260101_2', 'empty', '/work/g');"
        """INSERT INTO messages VALUES (1, '20260101_1', 'user', '[{"type": "text", "text": "goose prompt"}]', 1767200000);"""
    )
    conn.commit()
    conn.close()
    project = home / "work" / "app"
    db = project / ".crush" / "crush.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript(CRUSH_SCHEMA)
    conn.execute("INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'Crush work', 1, 1767000000)")
    crush_turn(conn, "s1", 1, 1767000001)
    conn.commit()
    conn.close()
    stage = "qwen-code/jazzyalex+agent-sessions/stage0/019f0000-0000-7000-8000-000000000001.jsonl"
    chats = home / ".qwen" / "projects" / "-tmp-project" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(agent_fixture(stage), chats / Path(stage).name)
    sessions = home / ".factory" / "sessions" / "-tmp"
    sessions.mkdir(parents=True)
    shutil.copy(
        agent_fixture("factory-droid/jazzyalex+agent-sessions/stage0/session_store_small.jsonl"),
        sessions / "0f0e0d0c-aaaa-bbbb-cccc-000000000001.jsonl",
    )
    kimi = home / ".kimi-code" / "sessions" / "wd_x" / "session_1"
    for agent, name in (("main", "assistant_tools.jsonl"), ("agent-0", "subagent_agent-0.jsonl")):
        (kimi / "agents" / agent).mkdir(parents=True)
        shutil.copy(
            agent_fixture(f"kimi-cli/jazzyalex+agent-sessions/stage0/{name}"), kimi / "agents" / agent / "wire.jsonl"
        )
    write(
        home / ".continue" / "sessions" / "c-1.json",
        {
            "sessionId": "c-1",
            "title": "t",
            "history": [
                {"message": {"role": "user", "content": "continue prompt"}},
                {"message": {"role": "assistant", "content": "ok"}},
            ],
        },
    )
    write(
        home / ".local" / "share" / "amp" / "threads" / "T-1.json",
        {"id": "T-1", "messages": [{"role": "user", "content": [{"type": "text", "text": "amp prompt"}]}]},
    )
    age(home)
    age(alt)
    return project


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = Path(os.environ["HOME"])  # the suite's fake HOME (tests/conftest.py), XDG_* inside it
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "alt" / "copilot"))  # an override is honoured
    project = fake_home(home, tmp_path / "alt")
    monkeypatch.chdir(project)
    return home


def test_every_agent_is_found_with_its_counts(machine: Path) -> None:
    found = {f.name: f for f in find_agents(SOURCES)}
    assert {name: f.sessions for name, f in found.items()} == EXPECTED
    assert all(f.warnings == [] for f in found.values())
    assert found["cline"].roots == [
        machine / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev",
        machine / ".config" / "Windsurf" / "User" / "globalStorage" / "saoudrizwan.claude-dev",
    ]
    assert found["copilot"].roots == [Path(os.environ["COPILOT_HOME"]) / "session-state"]
    assert found["crush"].roots == [Path.cwd() / ".crush" / "crush.db"]  # walked up from the working folder


def test_opmem_import_list_only_lists(machine: Path) -> None:
    if "import" not in main.commands:
        register(main)
    store = machine / "store"
    out = CliRunner().invoke(main, ["--home", str(store), "import", "--list"])
    assert out.exit_code == 0, out.output
    said = next(line for line in out.output.splitlines() if line.startswith("Found: "))
    assert said == (
        "Found: Claude Code 2 sessions, Codex 1 session, Gemini CLI 1 session, Amp 1 session, Cline 2 sessions, "
        "Continue 1 session, Copilot CLI 1 session, Crush 1 session, Cursor 2 sessions, Factory droid 1 session, "
        "Goose 1 session, Kimi 2 sessions, OpenCode 2 sessions, Qwen Code 1 session, Roo Code 1 session"
    )
    assert not (store / "sessions").exists() or not any((store / "sessions").iterdir())


def test_opmem_import_without_source_imports_every_agent(machine: Path) -> None:
    if "import" not in main.commands:
        register(main)
    store = machine / "store"
    out = CliRunner().invoke(main, ["--home", str(store), "import", "--no-bind"])
    assert out.exit_code == 0, out.output
    assert "Found: Claude Code 2 sessions" in out.output
    for label in (
        "Claude Code",
        "Codex",
        "OpenCode",
        "Cursor",
        "Cline",
        "Roo Code",
        "Copilot CLI",
        "Crush",
        "Goose",
        "Qwen Code",
        "Factory droid",
        "Kimi",
        "Continue",
        "Amp",
    ):
        assert any(line.startswith(f"{label}  ") for line in out.output.splitlines()), label  # its row
    metas = Home(store).sessions.list_sessions(rescan=True).sessions
    counts: dict[str, int] = {}
    for meta in metas:
        counts[meta.source] = counts.get(meta.source, 0) + 1
    assert counts == {
        "claude-code": 2,
        "codex": 1,
        "gemini": 1,
        "opencode": 2,
        "cursor": 2,
        "cline": 2,
        "roo-code": 1,
        "copilot": 1,
        "crush": 1,
        "goose": 1,
        "qwen": 1,
        "droid": 1,
        "kimi": 2,
        "continue": 1,
        "amp": 1,
    }
    again = CliRunner().invoke(main, ["--home", str(store), "import", "--no-bind"])
    assert again.exit_code == 0 and len(Home(store).sessions.list_sessions(rescan=True).sessions) == len(metas)
