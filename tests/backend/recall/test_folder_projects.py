"""Sessions in a folder no project is bound to (a session from another machine, a folder that is
not a repository here): their memory is that folder's project's, with its own core block."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.projects.folders import folder_project
from opmem_tui.backend.projects.known import project_of_folder
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.core_block import core_block
from opmem_tui.backend.recall.errors import RecallError

ELSEWHERE = "/nowhere-on-this-machine/spotter"


def _session(home: Home, sid: str, cwd: str, said: str, command: str, output: str) -> None:
    user = home.sessions.append_message(sid, "user", said, created_at=1_700_000_000.0, session_meta={"cwd": cwd})
    reply = home.sessions.append_message(sid, "assistant", "", parent_id=user.id, name="m", created_at=1_700_000_001.0)
    home.sessions.append_message(
        sid, "tool", output, parent_id=reply.id, called_by=reply.id, name="Bash",
        input={"command": command}, metadata={"exit_code": 0}, created_at=1_700_000_002.0,
    )  # fmt: skip
    home.sessions.commit_turn(sid)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home")
    _session(home, "s-a", ELSEWHERE, "We're on Phoenix with Ecto and Postgres.", "mix test", "5 tests, 0 failures")
    _session(home, "s-b", "/nowhere-on-this-machine/other", "The CLI is written in Rust.", "cargo build", "Finished")
    run(home, RunOptions())
    return home


def test_a_folder_project_has_its_own_brief_by_name_id_and_folder(home: Home):
    project_id = folder_project(ELSEWHERE)[0]
    by_name = core_block(recall_for(home, project="spotter"))
    assert "[Project · spotter]" in by_name and "↪ session:s-a" in by_name
    assert "Phoenix" in by_name and "mix test" in by_name
    assert "Rust" not in by_name and "s-b" not in by_name  # the other folder's is its own
    assert core_block(recall_for(home, project=project_id)) == by_name
    assert project_of_folder(home, ELSEWHERE + "/lib") == project_id  # a folder in it
    assert project_of_folder(home, "/nowhere-on-this-machine") == ""
    glob = core_block(recall_for(home, cwd="/"))
    assert "Phoenix" not in glob  # a project's facts are not the global block's


def test_an_unknown_project_suggests_folder_projects_too(home: Home):
    with pytest.raises(RecallError) as raised:
        core_block(recall_for(home, project="spoter"))
    assert raised.value.code == "unknown_project"
    assert any("spotter" in s for s in raised.value.suggestions)


def test_excluding_a_folder_project_by_name_keeps_its_sessions_out(tmp_path: Path):
    home = Home(tmp_path / "home")
    home.path.mkdir(parents=True, exist_ok=True)
    (home.path / "config.toml").write_text('[memory]\nexclude_projects = ["spotter"]\n', encoding="utf-8")
    home = Home(home.path)
    _session(home, "s-a", ELSEWHERE, "We're on Phoenix with Ecto and Postgres.", "mix test", "5 tests, 0 failures")
    report = run(home, RunOptions())
    assert report.sessions == 0
    assert not [p for p in home.memory_dir.rglob("*") if p.is_file() and b"Phoenix" in p.read_bytes()]


def test_a_session_started_in_a_home_folder_belongs_to_no_project(tmp_path: Path):
    home = Home(tmp_path / "home")
    _session(home, "s-h", "/home/someone", "We're on Phoenix with Ecto.", "mix test", "5 tests, 0 failures")
    run(home, RunOptions())
    assert not list(home.memory_dir.glob("projects/*/core.md"))  # quick questions from ~ are nobody's project
    assert project_of_folder(home, "/home/someone/code/other") == ""
