"""Rules added for issue 37's second pass: commands of no known kind, progress beyond the newest
few, technologies named in log output. Synthetic sessions written for these tests, through the
real stages (history.py)."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.distill.extract.knowledge.commands import project_command

from .history import Call, Session, Turn, brief_of, distil_history


def _line(core: str, prefix: str) -> str:
    return next((line for line in core.splitlines() if line.startswith(prefix)), "")


def test_a_project_command_is_a_tools_subcommand_or_a_script_not_a_utility_or_a_question():
    assert project_command("docker compose logs bot")
    assert project_command("npx task-master list --tag=dev")
    assert project_command("python build_index.py")
    assert project_command("./scripts/seed.sh")
    assert not project_command("mkdir -p out")  # a shell utility
    assert not project_command("pip show requests")  # a question to a tool about its packages
    assert not project_command("docker ps")
    assert not project_command("node -e 'console.log(1)'")
    assert not project_command("npx prettier")  # a call with nothing after the program


def test_commands_of_no_known_kind_that_ran_and_one_only_talked_about(tmp_path: Path):
    turns = [
        Turn("list the tasks", calls=[Call("bash", command="npx task-master list --tag=dev", output="3 tasks")]),
        Turn("again", calls=[Call("bash", command="npx task-master list --tag=dev", output="3 tasks")]),
        Turn("failed?", calls=[Call("bash", command="docker compose logs -f", output="boom", exit_code=255)]),
        Turn("why", reply="The exit code from `docker compose restart worker` says it died."),
        Turn("what now", reply="Watch `docker compose logs bot` for a while."),
        Turn("and", calls=[Call("bash", command="mkdir -p build/out", output="")]),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-o", turns)]))
    other = _line(core, "· other: ")
    assert "npx task-master list --tag=dev" in other, core
    assert "docker compose logs bot" in other, core  # given with a verb that says to type it
    assert "logs -f" not in other and "restart" not in core and "mkdir" not in other, core
