import subprocess
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.projects.registry import ProjectRegistry
from opmem_tui.cli_projects import projects


def _repo(path: Path) -> Path:
    path.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "U",
        "GIT_AUTHOR_EMAIL": "u@x",
        "GIT_COMMITTER_NAME": "U",
        "GIT_COMMITTER_EMAIL": "u@x",
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    for i in range(3):
        (path / "f.txt").write_text(f"{i}\n")
        subprocess.run(["git", "-C", str(path), "add", "f.txt"], check=True, env=env)
        msg = f"change {i}" if i != 1 else "sneaky \x1b[31mred\x1b[0m title"
        subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", msg], check=True, env=env)
    return path


def test_projects_commands(tmp_path: Path):
    home = tmp_path / "home"
    repo = _repo(tmp_path / "work")
    runner = CliRunner(env={"OPMEM_HOME": str(home)})

    result = runner.invoke(projects, ["list"])
    assert result.exit_code == 0 and "no projects bound" in result.output

    result = runner.invoke(projects, ["add", str(repo), "--name", "Work"])
    assert result.exit_code == 0, result.output
    [project] = ProjectRegistry(home).list_projects()
    assert project.name == "Work" and project.id in result.output

    result = runner.invoke(projects, ["list"])
    assert project.id in result.output and "active" in result.output

    result = runner.invoke(projects, ["log", project.id, "--limit", "2"])
    lines = result.output.splitlines()
    assert result.exit_code == 0 and len(lines) == 2
    assert "change 2" in lines[0] and "\x1b" not in result.output and "sneaky red title" in lines[1]
    result = runner.invoke(projects, ["log", project.id, "--agent-only"])
    assert result.exit_code == 0 and result.output == ""

    result = runner.invoke(projects, ["status", project.id, "paused"])
    assert result.exit_code == 0 and ProjectRegistry(home).get(project.id).status == "paused"
    result = runner.invoke(projects, ["status", project.id, "archived"])
    assert result.exit_code != 0

    result = runner.invoke(projects, ["warnings"])
    assert result.exit_code == 0 and "no warnings" in result.output

    result = runner.invoke(projects, ["unbind", project.id])
    assert result.exit_code == 0 and (repo / ".git").is_dir()
    result = runner.invoke(projects, ["unbind", project.id])
    assert result.exit_code == 1 and "no project" in result.output and "Traceback" not in result.output


def test_corrupt_registry_is_a_clear_error(tmp_path: Path):
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    (home / "projects" / "projects.json").write_text("{oops")
    result = CliRunner(env={"OPMEM_HOME": str(home)}).invoke(projects, ["list"])
    assert result.exit_code == 1
    assert "projects.json: invalid JSON" in result.output


def test_list_log_and_warnings_as_json(tmp_path: Path):
    import json

    home = tmp_path / "home"
    repo = _repo(tmp_path / "work")
    runner = CliRunner(env={"OPMEM_HOME": str(home)})
    assert json.loads(runner.invoke(projects, ["list", "--json"]).output) == {"projects": [], "known_from_sessions": []}
    registry = ProjectRegistry(home)
    project = registry.resolve_project(repo, "Work")

    [listed] = json.loads(runner.invoke(projects, ["list", "--json"]).output)["projects"]
    assert listed == project.to_json()

    result = runner.invoke(projects, ["log", project.id, "--json", "--limit", "2"])
    assert result.exit_code == 0 and "\x1b" not in result.output
    page = json.loads(result.output)
    assert [c["summary"] for c in page["commits"]] == ["change 2", "sneaky \x1b[31mred\x1b[0m title"]
    first = page["commits"][0]
    assert first["author_name"] == "U" and first["is_agent"] is False and first["link"] is None
    assert len(first["oid"]) == 40 and first["parents"] == [page["commits"][1]["oid"]]
    assert page["next"] == page["commits"][1]["oid"]
    rest = json.loads(runner.invoke(projects, ["log", project.id, "--json", "--after", page["next"]]).output)
    assert [c["summary"] for c in rest["commits"]] == ["change 0"] and rest["next"] is None

    registry.record_warning(project.id, "sess-1", 3, "a.py changed \x9b31m outside", ["a.py"])
    result = runner.invoke(projects, ["warnings", "--json"])
    assert "\x9b" not in result.output  # a C1 control would reach the terminal raw
    [warning] = json.loads(result.output)["warnings"]
    assert (warning["session_id"], warning["turn"], warning["paths"]) == ("sess-1", 3, ["a.py"])
    assert warning["message"] == "a.py changed \x9b31m outside"

    result = runner.invoke(projects, ["log", "nope", "--json"])
    assert result.exit_code == 1 and "no project" in result.output


def test_a_bound_project_whose_folder_is_gone_is_listed_as_not_on_this_machine(tmp_path: Path):
    import shutil

    home = tmp_path / "home"
    kept, gone = _repo(tmp_path / "kept"), _repo(tmp_path / "gone")
    registry = ProjectRegistry(home)
    registry.resolve_project(kept)
    removed = registry.resolve_project(gone)
    shutil.rmtree(gone)
    runner = CliRunner(env={"OPMEM_HOME": str(home)})
    lines = runner.invoke(projects, ["list"]).output.splitlines()
    assert [line for line in lines if "(not on this machine)" in line] == [
        line for line in lines if line.startswith(removed.id)
    ]
    assert len(lines) == 2
