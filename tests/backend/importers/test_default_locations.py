"""Every discoverable agent is found at its default location: its sample placed where the agent
keeps its sessions (in the suite's fake HOME) is listed by `find_agents` and `opmem import --list`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.discovery import find_agents
from opmem_tui.cli import main
from opmem_tui.cli_import import register

from .agent_helpers import age

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "agents"
# source -> where (under HOME) its sample's store/ goes so that it sits at the agent's default location
PLACES = {
    "claude": ".claude",
    "codex": ".codex",
    "gemini": ".gemini",
    "amp": ".local/share/amp",
    "chatgpt": "Downloads",
    "claude-ai": "Downloads",
    "cline": ".config/Code/User",
    "continue": ".continue",
    "copilot": ".copilot",
    "cursor": ".config",
    "droid": ".factory",
    "goose": ".local/share/goose",
    "gptme": ".local/share/gptme",
    "grok": ".grok",
    "iflow": "",
    "kilo": ".local/share",
    "kilo-legacy": ".config/Code/User",
    "kimi": ".kimi-code",
    "vibe": ".vibe",
    "omp": "",
    "opencode": ".local/share",
    "openhands": ".openhands",
    "openprogram": "",
    "pi": ".pi/agent",
    "qwen": ".qwen",
    "roo": ".config/Code/User",
    "copilot-chat": ".config",
    "zed": ".local/share/zed",
}
NOT_HERE = {"aider", "crush", "specstory"}  # they look in the working folder: test_discovery.py places them


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = Path(os.environ["HOME"])  # the suite's fake HOME (tests/conftest.py)
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "CLINE_DIR",
                 "GOOSE_PATH_ROOT", "OPENCODE_DB", "KIMI_CODE_HOME", "QWEN_HOME", "CONTINUE_GLOBAL_DIR", "GEMINI_CLI_HOME",
                 "PI_CODING_AGENT_DIR", "OMP_CODING_AGENT_DIR", "OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR", "GROK_HOME", "VIBE_HOME", "IFLOW_HOME", "FLATPAK_XDG_DATA_HOME"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    for name, place in PLACES.items():
        shutil.copytree(SAMPLES / name / "store", home / place, dirs_exist_ok=True)
    age(home)
    return home


def test_every_discoverable_agent_is_found_at_its_default_location(machine: Path) -> None:
    found = {f.name: f for f in find_agents(SOURCES)}
    wanted = {name for name, imp in SOURCES.items() if imp.discoverable} - NOT_HERE
    assert wanted == set(PLACES)  # a new agent gets its place here
    assert {name for name in wanted if found.get(name) is None or found[name].sessions < 1} == set()
    assert all(f.warnings == [] for f in found.values())


def test_opmem_import_list_names_them(machine: Path) -> None:
    if "import" not in main.commands:
        register(main)
    out = CliRunner().invoke(main, ["--home", str(machine / "opmem-store"), "import", "--list"])
    assert out.exit_code == 0, out.output
    said = next(line for line in out.output.splitlines() if line.startswith("Found: "))
    for name in PLACES:
        assert f"{SOURCES[name].label} " in said, name


def test_opmem_watch_follows_the_agents_not_the_exports(machine: Path) -> None:
    from opmem_tui.backend.importers.watch import default_sources

    followed = set(default_sources())
    assert {"claude", "cline", "copilot-chat", "pi", "grok", "openhands", "kilo"} <= followed
    assert not followed & {"chatgpt", "claude-ai"}  # read once from ~/Downloads, never followed
