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
    header = next(line for line in out.splitlines() if "sessions" in line)
    row = next(line for line in out.splitlines() if line.count("│") >= 6 and any(c.isdigit() for c in line))
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == [
        "sessions",
        "new",
        "turns",
        "nodes",
        "skipped",
        "warnings",
    ]
    assert [c.strip() for c in row.strip("│ ").split("│")] == ["1", "1", "3", "6", "0", "7"]
    assert out.count("warning: ") == 3 and "… and 4 more warning(s)" in out
    assert f"{path}:7: invalid JSON" in out
    again = CliRunner().invoke(main, ["--home", str(home), "import", "jsonl", str(path)])
    row = next(line for line in again.output.splitlines() if line.count("│") >= 6 and any(c.isdigit() for c in line))
    assert [c.strip() for c in row.strip("│ ").split("│")] == ["0", "0", "0", "0", "1", "0"]


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
