"""`opmem resume` and `opmem handoff` from the command line; `--to` starts a stand-in agent
executable (a small script first on PATH) that records what it was given."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main

from ..backend.resume.sessions import SECRET, worked_session

STAND_IN = """#!{python}
import json, os, sys
with open({log!r}, "a") as out:
    out.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd()}}) + "\\n")
sys.exit({code})
"""


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    worked_session(home.sessions)
    return home


def stand_in(folder: Path, name: str, log: Path, code: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(STAND_IN.format(python=sys.executable, log=str(log), code=code))
    script.chmod(0o755)


def run(home: Home, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["--home", str(home.path), *args], env=env)


def test_resume_prints_the_agents_command(home: Home, tmp_path: Path) -> None:
    env = {"CODEX_HOME": str(tmp_path / "codex")}
    out = run(home, "resume", "work", "--in", "codex", "--cwd", str(tmp_path), env=env)
    assert out.exit_code == 0, out.output
    command = shlex.split(out.stdout.strip())
    assert command[:3] == ["cd", str(tmp_path), "&&"] and command[3:5] == ["codex", "resume"]
    (rollout,) = (tmp_path / "codex" / "sessions").rglob("rollout-*.jsonl")
    assert command[5] in rollout.name and SECRET.encode() not in rollout.read_bytes()
    assert "wrote" in out.stderr


def test_resume_refuses_a_bad_turn(home: Home, tmp_path: Path) -> None:
    out = run(home, "resume", "worked", "--in", "claude", "--turn", "0", env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert out.exit_code != 0 and "--turn 0" in out.output and "Traceback" not in out.output
    unknown = run(home, "resume", "nope", "--in", "claude", env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert unknown.exit_code != 0 and "no session" in unknown.output


def test_resume_refuses_a_private_session(home: Home, tmp_path: Path) -> None:
    """Its copy in the agent's store would come back through that agent's importer unmarked."""
    sid = home.sessions.list_sessions().sessions[0].id
    home.sessions.update_session(sid, private=True)
    out = run(home, "resume", sid, "--in", "codex", env={"CODEX_HOME": str(tmp_path / "codex")})
    assert out.exit_code != 0 and "private" in out.output and "Traceback" not in out.output
    assert not (tmp_path / "codex").exists()


def test_handoff_prints_the_brief_within_budget(home: Home) -> None:
    out = run(home, "handoff", "worked", "--budget", "300")
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("# Handoff:") and "↪ session:worked#turn 1" in out.stdout
    assert SECRET not in out.stdout and "of 300 tokens" in out.stderr


FIRST_PROMPT = {"claude": [], "codex": [], "gemini": ["--prompt-interactive"], "opencode": ["--prompt"]}


@pytest.mark.parametrize("agent", sorted(FIRST_PROMPT))
def test_handoff_to_an_agent_runs_it_with_the_brief(home: Home, tmp_path: Path, agent: str) -> None:
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.jsonl"
    stand_in(bin_dir, agent, log, code=3)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = run(home, "handoff", "worked", "--to", agent, env=env)
    assert out.exit_code == 3  # the agent's own exit status
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    flags = FIRST_PROMPT[agent]
    assert call["argv"][: len(flags)] == flags and len(call["argv"]) == len(flags) + 1
    assert call["argv"][-1].startswith("# Handoff:") and SECRET not in call["argv"][-1]


def test_handoff_dry_run_and_a_missing_agent(home: Home, tmp_path: Path) -> None:
    dry = run(home, "handoff", "worked", "--to", "claude", "--dry-run", "--budget", "200")
    assert dry.exit_code == 0 and shlex.split(dry.stdout)[3] == "claude"
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = run(home, "handoff", "worked", "--to", "opencode", env={"PATH": str(empty)})
    assert missing.exit_code != 0 and "opencode is not installed" in missing.output
