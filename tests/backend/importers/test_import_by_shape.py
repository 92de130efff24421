"""Cline tasks as users copy them (exported, nested, partial) and `opmem import PATH...` with no
agent named: each session read by its importer, said per importer; bad input is a warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.cli import main
from opmem_tui.cli_import import register

from .agent_helpers import age, stored

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "agents"
TASK = "1767600000000"
CLINE_TASK = SAMPLES / "cline" / "store" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks" / TASK


def cli(*args: str):
    if "import" not in main.commands:
        register(main)
    return CliRunner().invoke(main, list(args))


def test_exported_and_nested_cline_tasks_are_found(tmp_path: Path) -> None:
    shutil.copytree(CLINE_TASK, tmp_path / "backup" / f"exported_task_{TASK}")
    shutil.copytree(CLINE_TASK, tmp_path / "backup" / "older" / "task copy" / "1767600099000")
    age(tmp_path)
    home = Home(tmp_path / "h")
    report = run_import(home, "cline", [tmp_path / "backup"], bind=False)
    assert report.warnings == [] and report.new_sessions == 2
    nodes = stored(home)
    assert set(nodes) == {TASK, "1767600099000"}  # the id, not the folder's name
    assert [n.role for n in nodes[TASK]] == ["user", "assistant", "tool", "assistant"]


def test_a_task_with_only_its_ui_messages_gives_its_conversation_and_tools(tmp_path: Path) -> None:
    task = tmp_path / "partial" / TASK
    task.mkdir(parents=True)
    ui = json.loads((CLINE_TASK / "ui_messages.json").read_text())
    ui += [
        {"ts": 1767600006000, "type": "say", "say": "user_feedback", "text": "now run it"},
        {"ts": 1767600007000, "type": "say", "say": "reasoning", "text": "a shell command"},
        {"ts": 1767600008000, "type": "ask", "ask": "command", "text": "python a.py"},
        {"ts": 1767600009000, "type": "ask", "ask": "command_output", "text": "1"},
        {"ts": 1767600010000, "type": "ask", "ask": "followup", "text": json.dumps({"question": "Anything else?"})},
    ]
    (task / "ui_messages.json").write_text(json.dumps(ui))
    (task / "task_metadata.json").write_text("{}")
    age(tmp_path)
    home = Home(tmp_path / "h")
    report = run_import(home, "cline", [tmp_path / "partial"], bind=False)
    assert report.warnings == [] and report.turns == 2
    [meta] = home.sessions.list_sessions(rescan=True).sessions
    assert meta.extra["source_extra"]["layout"] == "ui-messages"
    assert (meta.created_at, meta.updated_at) == (1767600000.0, 1767600010.0)
    got = [(n.role, n.name, n.content) for n in stored(home)[TASK]]
    assert got == [
        ("user", None, "fix the failing test"),
        ("assistant", None, "Reading."),
        ("tool", "readFile", "print(1)"),
        ("assistant", None, "Fixed."),
        ("user", None, "now run it"),
        ("assistant", None, ""),
        ("tool", "execute_command", "1"),
        ("assistant", None, "Anything else?"),
    ]
    assert dict(stored(home)[TASK][5].metadata)["thinking"] == "a shell command"


def test_opmem_import_dir_says_which_importer_read_what(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    for name in ("claude", "codex", "cline", "goose"):
        shutil.copytree(SAMPLES / name / "store", mixed / f"from-{name}" / "x")
    (mixed / "README.txt").write_text("my backups\n")
    age(mixed)
    out = cli("--home", str(tmp_path / "h"), "import", str(mixed))
    assert out.exit_code == 0, out.output
    said = [line for line in out.output.splitlines() if " read as " in line]
    assert said == [
        "1 session read as Claude Code (opmem import claude)",
        "1 session read as Cline (opmem import cline)",
        "1 session read as Codex (opmem import codex)",
        "1 session read as Goose (opmem import goose)",
    ]
    again = cli("--home", str(tmp_path / "h"), "import", str(mixed))
    assert again.exit_code == 0 and again.output.count("│        1 │   0 │") == 0  # nothing new the second time
    sources = sorted(m.source for m in Home(tmp_path / "h").sessions.list_sessions(rescan=True).sessions)
    assert sources == ["claude-code", "cline", "codex", "goose"]


def test_bad_files_are_warnings_naming_them_and_nothing_stored_is_lost(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(SAMPLES / "claude" / "store", mixed / "a")
    shutil.copytree(SAMPLES / "cline" / "store", mixed / "b")
    age(mixed)
    home = tmp_path / "h"
    assert cli("--home", str(home), "import", str(mixed)).exit_code == 0
    before = {
        m.id: (m.updated_at, len(stored(Home(home))[m.source_ref["native_id"]]))
        for m in Home(home).sessions.list_sessions(rescan=True).sessions
    }
    history = next(mixed.rglob("api_conversation_history.json"))
    history.write_text('[{"role": "user", "content": [')  # cut short
    claude = next(mixed.rglob("*.jsonl"))
    claude.write_text(claude.read_text() + "{not json\n")
    age(mixed, when=1_700_000_000)
    out = cli("--home", str(home), "import", str(mixed))
    assert out.exit_code == 0 and "Traceback" not in out.output
    assert f"{history}: not valid JSON" in out.output.replace("\n", "")
    after = {
        m.id: (m.updated_at, len(stored(Home(home))[m.source_ref["native_id"]]))
        for m in Home(home).sessions.list_sessions(rescan=True).sessions
    }
    assert after == before


def test_a_path_that_does_not_exist_is_named(tmp_path: Path) -> None:
    out = cli("--home", str(tmp_path / "h"), "import", str(tmp_path / "nowhere"), str(tmp_path))
    assert out.exit_code == 1 and "no such file or folder" in out.output and "Traceback" not in out.output


def test_a_path_holding_no_session_is_an_error(tmp_path: Path) -> None:
    """`opmem import FILE` on a file no importer recognises imports nothing: it says so and fails."""
    stray = tmp_path / "notes.jsonl"
    stray.write_text('{"garbage": 1}\n')
    out = cli("--home", str(tmp_path / "h"), "import", str(stray))
    assert out.exit_code == 1 and "found no agent session" in out.output and "Traceback" not in out.output
    assert "no importer recognises" in out.output
