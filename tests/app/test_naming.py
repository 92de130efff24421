"""One way to name a session or a project everywhere (backend/naming): by id, name or a unique
prefix, the current folder's project by default, and errors that name the candidates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend import naming
from opmem_tui.backend.model import SessionNotFound
from opmem_tui.backend.projects.registry import ProjectNotFound
from opmem_tui.cli import main
from tests.backend.recall.stores import Built, build_store


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build_store(tmp_path)


def run(built: Built, *args: str):
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "120"})
    return runner.invoke(main, list(args), catch_exceptions=False)


def test_sessions_by_id_prefix_title_or_pointer(built: Built) -> None:
    home = built.home
    assert naming.session_id(home, built.session_id) == built.session_id
    assert naming.session_id(home, "cc-shop") == built.session_id
    assert naming.session_id(home, "add a greeting to the shop") == built.session_id
    assert naming.session_id(home, f"session:{built.session_id}") == built.session_id
    with pytest.raises(naming.AmbiguousName) as many:
        naming.session_id(home, "c")
    assert set(many.value.candidates) == {built.session_id, built.other_id}
    with pytest.raises(SessionNotFound, match="did you mean"):
        naming.session_id(home, "cc-shop-sesion")


def test_projects_by_id_name_prefix_or_the_current_folder(built: Built) -> None:
    home = built.home
    assert naming.project(home, built.project_id).id == built.project_id
    assert naming.project(home, "shop").id == built.project_id
    assert naming.project(home, "SHO").id == built.project_id
    assert naming.project(home, None, cwd=built.workdir).id == built.project_id
    with pytest.raises(naming.NoProjectHere, match="shop"):  # names the projects there are
        naming.project(home, None, cwd=built.workdir.parent)
    with pytest.raises(ProjectNotFound):
        naming.project(home, "nothing-like-it")


def test_every_command_takes_the_same_names(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    # `opmem show` takes the prefix `opmem sessions show` and `opmem export` take
    shown = run(built, "show", "cc-shop")
    assert shown.exit_code == 0, shown.output
    assert "Add a greeting to the shop" in shown.output
    assert run(built, "sessions", "show", "cc-shop").exit_code == 0
    # `projects log` takes the name `core --project` takes, and defaults to the current folder's
    by_name = run(built, "projects", "log", "shop", "--json")
    assert by_name.exit_code == 0, by_name.output
    assert json.loads(by_name.output)["project_id"] == built.project_id
    monkeypatch.chdir(built.workdir)
    here = run(built, "projects", "log", "--json")
    assert here.exit_code == 0, here.output
    assert json.loads(here.output)["commits"] == json.loads(by_name.output)["commits"]
    # `sessions list --project` finds what `core --project` names, by name or prefix
    listed = json.loads(run(built, "sessions", "list", "--project", "sho", "--json").output)
    assert [s["id"] for s in listed["sessions"]] == [built.session_id]
    # errors name the candidates
    unknown = run(built, "projects", "log", "shap")
    assert unknown.exit_code == 1 and "did you mean" in unknown.output and built.project_id in unknown.output
