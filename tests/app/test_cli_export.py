"""`opmem export`, `opmem blame` and `opmem demo DIR --no-open` from the command line, on the demo
store built by the command itself (its projects' agent commits came through opmem's auto-commit)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main

FIX = "cc-fix-forecast-parse"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo") / "d"
    out = CliRunner().invoke(main, ["demo", str(folder), "--no-open"])
    assert out.exit_code == 0, out.output
    assert "open it again: opmem demo" in out.output  # built, said how to open it, and exited
    return folder


def _run(demo: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(demo / "home"), *args])


def test_demo_no_open_builds_and_exits(demo: Path) -> None:
    assert len(Home(demo / "home").sessions.list_sessions().sessions) == 13
    again = CliRunner().invoke(main, ["demo", str(demo), "--no-open"])  # reopened, not rebuilt, still no app
    assert again.exit_code == 0 and "building" not in again.output


def test_export_each_format_to_a_file(demo: Path, tmp_path: Path) -> None:
    for name, marker in (("s.html", "<!doctype html>"), ("s.md", "# The forecast parser"), ("s.json", '"format"')):
        out = _run(demo, "export", FIX, "-o", str(tmp_path / name))
        assert out.exit_code == 0, out.output
        assert f"wrote {tmp_path / name}" in out.output
        assert (tmp_path / name).read_text().startswith(marker) or marker in (tmp_path / name).read_text()[:200]
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["meta"]["id"] == FIX and doc["redacted"] is True


def test_a_raw_export_file_is_private_and_a_redacted_one_follows_the_umask(demo: Path, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        shared = _run(demo, "export", FIX, "-o", str(tmp_path / "s.md"))
        raw = _run(demo, "export", FIX, "--raw", "-o", str(tmp_path / "raw.md"))
    finally:
        os.umask(old)
    assert shared.exit_code == 0 and raw.exit_code == 0, (shared.output, raw.output)
    assert "raw: secrets not redacted" in raw.output
    assert stat.S_IMODE((tmp_path / "s.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "raw.md").stat().st_mode) == 0o600


def test_export_to_stdout_with_a_prefix_turns_and_branch(demo: Path) -> None:
    out = _run(demo, "export", "cc-fix-forecast-parse.", "--format", "md")  # a unique prefix
    assert out.exit_code == 0, out.output
    assert out.output.startswith("# Explore the repository")
    md = _run(demo, "export", FIX, "--format", "md", "--turns", "2..2", "--branch", "main")
    assert md.exit_code == 0, md.output
    assert "## Turn 2" in md.output and "## Turn 1" not in md.output and "branch `main`" in md.output


def test_export_errors_are_one_clear_line(demo: Path) -> None:
    for args, message in (
        (["export", "no-such-session"], "no session 'no-such-session'"),
        (["export", FIX, "--turns", "9..12"], "--turns '9..12': the session has"),
        (["export", FIX, "--branch", "nope"], "no branch 'nope'"),
        (["export", FIX, "-o", "/nonexistent-dir/x.html"], "/nonexistent-dir: no such folder"),
    ):
        out = _run(demo, *args)
        assert out.exit_code != 0 and message in out.output, (args, out.output)
        assert "Traceback" not in out.output


def test_blame_names_the_turn_and_the_users_lines(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = demo / "projects" / "weather-cli"
    monkeypatch.chdir(project)
    out = _run(demo, "blame", "weather/forecast.py")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert "Dana Developer <dana@example.com>" in lines[0] and "not from a session turn" in lines[0]
    assert f"session {FIX} · turn 1 · claude-sonnet-4-5" in lines[2]
    assert "The forecast parser crashes when the API omits `temp`." in lines[3]
    assert lines[4].endswith('│     """The temperature, or None when the API omits it."""')

    data = json.loads(_run(demo, "blame", str(project / "weather/forecast.py:1-2"), "--json").output)
    assert [item["line"] for item in data["lines"]] == [1, 2]
    user, agent = data["lines"]
    assert user["session"] is None and user["turn"] is None and user["prompt"] is None
    assert (agent["session"], agent["turn"], agent["model"]) == (FIX, 1, "claude-sonnet-4-5")
    assert agent["prompt"].startswith("The forecast parser crashes") and agent["time"].endswith("Z")


def test_blame_errors(demo: Path, tmp_path: Path) -> None:
    loose = tmp_path / "loose.py"
    loose.write_text("x = 1\n")
    out = _run(demo, "blame", str(loose))
    assert out.exit_code != 0 and "not in a bound project" in out.output
    out = _run(demo, "blame", str(demo / "projects" / "weather-cli" / "weather" / "forecast.py:50"))
    assert out.exit_code != 0 and "git blame failed" in out.output and "Traceback" not in out.output
