"""`opmem import` and `opmem watch` through click's runner, against a real home in tmp_path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.cli import main
from opmem_tui.cli_import import register


@pytest.fixture(autouse=True)
def _registered() -> None:
    if "import" not in main.commands:
        register(main)


def write_jsonl(path: Path, lines: list[dict | str]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    os.utime(path, (1_600_000_000, 1_600_000_000))
    return path


def test_import_prints_a_summary_and_the_first_warnings(tmp_path: Path) -> None:
    good = [
        {"session": "s", "id": str(i), "role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"}
        for i in range(6)
    ]
    bad = ["{broken"] * 7
    path = write_jsonl(tmp_path / "chat.jsonl", good + bad)
    home = tmp_path / "home"
    result = CliRunner().invoke(main, ["--home", str(home), "import", "jsonl", str(path), "--warnings", "3"])
    assert result.exit_code == 0, result.output
    out = result.output
    # Piped: plain lines, no table borders; one row for the one agent, no total row.
    assert result.stdout.splitlines() == [
        "import",
        "agent  sessions  new  turns  nodes  skipped  warnings",
        "jsonl  1  1  3  6  0  7",
    ]
    assert out.count("warning: ") == 3 and "… and 4 more warning(s)" in out
    assert f"{path}:7: invalid JSON" in out
    again = CliRunner().invoke(main, ["--home", str(home), "import", "jsonl", str(path)])
    assert again.stdout == "nothing new from jsonl: 1 file(s) unchanged since the last import\n"


def test_import_of_an_unknown_source_fails_cleanly(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "h"), "import", "notepad"])
    assert result.exit_code == 1
    assert "unknown import source 'notepad'" in result.output and "Traceback" not in result.output


def test_session_text_in_warnings_cannot_drive_the_terminal(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "x.jsonl", [{"session": "s", "id": "1", "role": "\x1b[31mred", "content": "x"}])
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "h"), "import", "jsonl", str(path)])
    assert result.exit_code == 0 and "\x1b[31m" not in result.output


def test_watch_without_anything_to_watch_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["--home", str(tmp_path / "h"), "watch", "claude", "--path", str(tmp_path / "none")]
    )
    assert result.exit_code == 1 and "nothing to watch" in result.output


def test_import_of_a_path_that_does_not_exist_fails_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "import", "jsonl", str(missing)])
    assert result.exit_code == 1
    assert f"no such file or folder: {missing}" in result.output.replace("\n", "")


def test_nothing_to_import_says_which_files_were_looked_for(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "import", "codex", str(tmp_path / "sessions")])
    assert result.exit_code == 0
    assert "nothing to import: no rollout-*.jsonl found" in result.output.replace("\n", "")


def test_importing_every_agent_found_is_one_table_with_a_total_then_one_line(tmp_path: Path, monkeypatch) -> None:
    """`opmem import` over two agents: one summary for the run (a row per agent and their total),
    not a table per agent; run again with nothing new, one line."""
    from tests.backend.importers.conftest import Transcript, text
    from tests.backend.importers.test_codex import Rollout

    user = tmp_path / "user"
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    claude = Transcript()
    claude.prompt("Fix the parser")
    claude.assistant([text("Fixed.")])
    claude.write(user / ".claude/projects/-tmp-project" / "11111111-2222-3333-4444-555555555555.jsonl")
    rollout = user / ".codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
    rollout.parent.mkdir(parents=True)
    Rollout().meta().prompt("Add a test").reply("Added.").write(rollout)
    os.utime(rollout, (1_600_000_000, 1_600_000_000))
    runner = CliRunner(env={"HOME": str(user), "OPMEM_HOME": str(tmp_path / "home")})
    first = runner.invoke(main, ["import"])
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    assert lines[0].startswith("Found: Claude Code 1 session") and "Codex 1 session" in lines[0]
    assert lines[1:3] == ["import", "agent  sessions  new  turns  nodes  skipped  warnings"]
    rows = {line.split("  ")[0]: line.split("  ")[1:] for line in lines[3:]}
    assert set(rows) == {"Claude Code", "Codex", "total"}
    assert rows["total"] == [str(sum(int(rows[a][i]) for a in ("Claude Code", "Codex"))) for i in range(6)]
    assert rows["total"][:2] == ["2", "2"]
    again = runner.invoke(main, ["import"])
    assert again.stdout.splitlines()[1:] == [
        "nothing new from Claude Code, Codex: 2 file(s) unchanged since the last import"
    ]


def test_crush_outside_a_project_fails_saying_where_it_looked(tmp_path: Path, monkeypatch) -> None:
    """Crush keeps its database in the project: run elsewhere, `opmem import crush` exits 1 and
    says what it looked for and how to go on, never "nothing new"."""
    outside = tmp_path / "not-a-project"
    outside.mkdir()
    monkeypatch.chdir(outside)
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "import", "crush"])
    assert result.exit_code == 1
    said = " ".join(result.output.split())  # the console wraps long lines
    assert "found no .crush/crush.db or .opencode/opencode.db in a project folder" in said
    assert "run `opmem import crush` in the project's folder, or give the database's path" in said
    assert "Traceback" not in result.output and "nothing new" not in result.output


def test_a_warning_is_said_once_per_version_of_a_file(tmp_path: Path) -> None:
    """A live file (written to lately) is read again every run, but its warning is said once:
    again only when the file changed, or on --verbose / --warnings N."""
    import sqlite3
    import time

    db = tmp_path / "goose" / "sessions.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT)")  # not Goose's schema
    live = time.time() + 86_400  # still being written to, however slow this run is
    os.utime(db, (live, live))
    home = tmp_path / "home"
    problem = "unknown Goose schema: table 'sessions' lacks working_dir"

    def run(*extra: str):
        result = CliRunner().invoke(main, ["--home", str(home), "import", "goose", str(db), *extra])
        assert result.exit_code == 0, result.output
        return " ".join(result.stderr.split())

    assert problem in run()
    again = run()
    assert problem not in again and "1 warning(s) said by an earlier import" in again
    assert problem in run("--verbose") and problem in run("--warnings", "5")
    assert problem not in run()  # asking to see them does not make them new
    os.utime(db, (live + 60, live + 60))
    assert problem in run()  # the file changed: said again
    state = json.loads((home / "import-state.json").read_text())
    assert list(state["warned"]) == [str(db.resolve())]
