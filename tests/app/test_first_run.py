"""README's first commands: two of them, each creating and using a virtual environment (the
system Python may refuse `pip install`, PEP 668), and CI running the very same test command."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def try_it_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Try it", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def steps(command: str) -> list[list[str]]:
    return [shlex.split(part) for part in command.split("&&")]


def test_two_commands_each_in_a_virtual_environment() -> None:
    commands = try_it_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    for command in commands:
        first, *rest = steps(command)
        assert first[1:] == ["-m", "venv", ".venv"] and first[0].startswith("python3")
        for step in rest:  # nothing runs from outside the environment: no bare pip, python or opmem
            assert step[0].startswith(".venv/bin/"), step
        assert any(step[:2] == [".venv/bin/pip", "install"] for step in rest)
    app, tests = (steps(c) for c in commands)
    assert app[-1] == [".venv/bin/opmem", "demo"]
    assert tests[-1][:3] == [".venv/bin/python", "-m", "pytest"]


def test_ci_runs_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    _, tests = try_it_commands()
    assert tests in script.splitlines()
