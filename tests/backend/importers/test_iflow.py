"""`opmem import iflow` takes only iFlow's own files: iFlow writes Claude Code's format, so a Claude
Code transcript would otherwise be stored as an iFlow session."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from opmem_tui.backend.importers import run_import

from .conftest import Transcript, text

SAMPLE = Path(__file__).parents[2] / "fixtures" / "agents" / "iflow" / "store"
NAME = "5a1d0c3e-0000-4000-8000-000000000009.jsonl"


@pytest.fixture(autouse=True)
def _no_iflow_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IFLOW_HOME", raising=False)


def _transcript(folder: Path) -> Path:
    t = Transcript(session=NAME.removesuffix(".jsonl"))
    t.prompt("fix the build")
    t.assistant("msg_A", text("fixed"))
    path = t.write(folder / NAME)
    os.utime(path, (1_600_000_000, 1_600_000_000))
    return path


def test_a_claude_code_transcript_is_skipped_with_its_name_and_the_command_to_use(home, tmp_path: Path) -> None:
    path = _transcript(tmp_path / ".claude" / "projects" / "-work-app")
    report = run_import(home, "iflow", [tmp_path / ".claude"])
    assert report.sessions == 0 and not home.sessions.list_sessions().sessions
    assert len(report.warnings) == 1
    warning = report.warnings[0]
    assert warning.startswith(f"{path}: skipped: not in an `.iflow` folder") and "`opmem import claude`" in warning
    assert run_import(home, "claude", [path]).new_sessions == 1  # and claude's import takes it


def test_files_under_an_iflow_folder_are_iflow_sessions(home, tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "store")
    _transcript(tmp_path / "store" / ".iflow" / "projects" / "-work-other")
    report = run_import(home, "iflow", [tmp_path / "store"])
    assert report.warnings == [] and report.new_sessions == 2
    assert {m.source for m in home.sessions.list_sessions().sessions} == {"iflow"}


def test_iflow_home_elsewhere_is_its_own(home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IFLOW_HOME", str(tmp_path / "iflow-data"))
    _transcript(tmp_path / "iflow-data" / "projects" / "-work-app")
    report = run_import(home, "iflow", [tmp_path / "iflow-data"])
    assert report.warnings == [] and report.new_sessions == 1
