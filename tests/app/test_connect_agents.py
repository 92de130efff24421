"""What `opmem connect` writes, used the way each agent uses it: the MCP entry launched as
written (command + args + env) by the real MCP client, Claude Code's SessionStart hook run
with its JSON on stdin and its stdout checked against the hook output schema; the CLI."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from opmem_tui.backend.agents import jsonc
from opmem_tui.backend.agents.connect import AGENTS, connect
from opmem_tui.backend.agents.session_start import MAX_CONTEXT_CHARS, TOOLS_LINE
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import core_path
from opmem_tui.backend.recall.registry import TOOLS
from opmem_tui.cli import main
from tests.backend.agents.configs import write_existing

# Claude Code's hook output (code.claude.com/docs/en/hooks: "JSON output", "SessionStart"):
# the common fields, and hookSpecificOutput for SessionStart with its additionalContext.
HOOK_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "continue": {"type": "boolean"},
        "stopReason": {"type": "string"},
        "suppressOutput": {"type": "boolean"},
        "systemMessage": {"type": "string"},
        "hookSpecificOutput": {
            "type": "object",
            "properties": {
                "hookEventName": {"const": "SessionStart"},
                "additionalContext": {"type": "string", "maxLength": 10000},
            },
            "required": ["hookEventName"],
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}
TOKEN = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "opmem")
    home.ensure()
    return home


def entry_of(user_home: Path, agent: str) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) of the opmem server as the agent's own config file holds it."""
    if agent == "codex":
        table = tomllib.loads((user_home / ".codex/config.toml").read_text())["mcp_servers"]["opmem"]
        return table["command"], table["args"], table.get("env", {})
    files = {
        "claude": (".claude.json", "mcpServers"),
        "gemini": (".gemini/settings.json", "mcpServers"),
        "cursor": (".cursor/mcp.json", "mcpServers"),
        "opencode": (".config/opencode/opencode.jsonc", "mcp"),
        "copilot": (".copilot/mcp-config.json", "mcpServers"),
    }
    rel, key = files[agent]
    path = user_home / rel
    entry = jsonc.parse(path.read_text(), path, comments=agent in ("opencode", "gemini")).data[key]["opmem"]
    if agent == "opencode":  # command is the whole argv; env is `environment`
        return entry["command"][0], entry["command"][1:], entry.get("environment", {})
    return entry["command"], entry.get("args", []), entry.get("env", {})


@pytest.mark.parametrize("agent", list(AGENTS))
async def test_the_mcp_entry_starts_the_server_as_written(
    home: Home, user_home: Path, tmp_path: Path, agent: str
) -> None:
    write_existing(user_home, agent)
    connect(home, agent, user_home, {"PATH": "/nonexistent"})
    command, args, env = entry_of(user_home, agent)
    # the agent's own environment: no OPMEM_HOME, the server finds the store by its args
    launch_env = {"HOME": str(user_home), "PATH": os.environ.get("PATH", ""), **env}
    params = StdioServerParameters(command=command, args=args, env=launch_env, cwd=str(tmp_path))
    async with Client(params, mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "opmem"
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == set(TOOLS)


def _project_with_core(home: Home, tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    (repo / "src" / "api").mkdir(parents=True)
    project = home.projects.resolve_project(repo, "shop")
    core = core_path(home.memory_dir, project.id)
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text(
        "═══\nopmem memory · project: shop\n[Project · shop]\n"
        f"· stack: go 1.22, chi, pgx; deploy key {TOKEN}  ↪ session:s1\n═══\n"
    )
    glob = core_path(home.memory_dir)
    glob.write_text("═══\nopmem memory · global\n· prefers: tabs  ↪ session:s2\n═══\n")
    return repo


def _run_hook(command: str, stdin: str, user_home: Path) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(user_home), "PATH": os.environ.get("PATH", "")}  # no OPMEM_HOME: the hook names its home
    return subprocess.run(shlex.split(command), input=stdin, capture_output=True, text=True, env=env, timeout=60)


def _session_start_command(user_home: Path) -> str:
    settings = json.loads((user_home / ".claude/settings.json").read_text())
    [group] = settings["hooks"]["SessionStart"]
    [hook] = group["hooks"]
    assert hook["type"] == "command" and hook["timeout"] <= 10
    return hook["command"]


def _claude_input(cwd: Path | str) -> str:
    return json.dumps(
        {
            "session_id": "0f1e2d3c-aaaa-bbbb-cccc-1234567890ab",
            "transcript_path": str(Path(cwd) / "t.jsonl"),
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )


def test_the_session_start_hook_gives_the_projects_core_block(home: Home, user_home: Path, tmp_path: Path) -> None:
    write_existing(user_home, "claude")
    repo = _project_with_core(home, tmp_path)
    connect(home, "claude", user_home, {"PATH": "/nonexistent"})
    command = _session_start_command(user_home)

    done = _run_hook(command, _claude_input(repo / "src" / "api"), user_home)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = json.loads(done.stdout)
    jsonschema.validate(out, HOOK_OUTPUT_SCHEMA)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "[Project · shop]" in context and "stack: go 1.22, chi, pgx" in context
    assert TOKEN not in context and "[secret:" in context
    assert context.endswith(TOOLS_LINE + "\n")

    outside = _run_hook(command, _claude_input(tmp_path), user_home)  # not in a project: the global block
    context = json.loads(outside.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "prefers: tabs" in context and "shop" not in context


@pytest.mark.parametrize(
    "breakage, stdin",
    [("projects", None), ("stdin", "this is not json"), ("core", None)],
)
def test_the_hook_never_fails_the_agents_start(
    home: Home, user_home: Path, tmp_path: Path, breakage: str, stdin: str | None
) -> None:
    repo = _project_with_core(home, tmp_path)
    connect(home, "claude", user_home, {"PATH": "/nonexistent"})
    if breakage == "projects":
        (home.projects_dir / "projects.json").write_text("{broken")
    if breakage == "core":  # a core.md that is a folder: unreadable
        path = core_path(home.memory_dir, home.projects.list_projects()[0].id)
        path.unlink()
        path.mkdir()
    done = _run_hook(_session_start_command(user_home), stdin or _claude_input(repo), user_home)
    assert done.returncode == 0
    out = json.loads(done.stdout)
    jsonschema.validate(out, HOOK_OUTPUT_SCHEMA)
    assert out["hookSpecificOutput"]["additionalContext"] == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("opmem hook session-start: ")


def test_a_huge_core_is_cut_at_a_line_under_the_limit(home: Home, user_home: Path, tmp_path: Path) -> None:
    repo = _project_with_core(home, tmp_path)
    path = core_path(home.memory_dir, home.projects.list_projects()[0].id)
    path.write_text("".join(f"· line {i} of a hand-edited core  ↪ session:s{i}\n" for i in range(2000)))
    connect(home, "claude", user_home, {"PATH": "/nonexistent"})
    done = _run_hook(_session_start_command(user_home), _claude_input(repo), user_home)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 0 < len(context) <= MAX_CONTEXT_CHARS and context.endswith("\n")
    assert all(
        line.startswith("· line ") and line.endswith("↪ session:s" + line.split()[2]) for line in context.splitlines()
    )


def test_the_slow_path_answers_the_same(home: Home, user_home: Path, tmp_path: Path) -> None:
    """`opmem hook session-start` through click (as `opmem --help` lists it) prints the same JSON."""
    repo = _project_with_core(home, tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["--home", str(home.path), "hook", "session-start"], input=_claude_input(repo))
    assert result.exit_code == 0
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "stack: go 1.22" in context


def cli(user_home: Path, home: Home, *args: str):
    runner = CliRunner(env={"HOME": str(user_home), "OPMEM_HOME": str(home.path), "COLUMNS": "200"})
    return runner.invoke(main, list(args), catch_exceptions=False)


def test_cli_connect_status_and_disconnect(home: Home, user_home: Path) -> None:
    write_existing(user_home, "codex")
    before = (user_home / ".codex/config.toml").read_bytes()
    result = cli(user_home, home, "connect", "codex")
    assert result.exit_code == 0
    assert f"updated MCP server in {user_home / '.codex/config.toml'}" in result.stdout
    assert "undo: opmem disconnect codex" in result.stdout
    assert "already connected; nothing changed" in cli(user_home, home, "connect", "codex").stdout
    status = cli(user_home, home, "connect", "--status").stdout
    assert "codex     Codex CLI    found      connected" in status
    assert f"✓ MCP server   {user_home / '.codex/config.toml'}" in status
    assert "claude    Claude Code  not found  not connected" in status
    assert "usage     last 7 days, by agent" in status and "no usage index yet" in status
    result = cli(user_home, home, "disconnect", "codex")
    assert result.exit_code == 0
    # Not "removed <file>" (read as the file deleted): what was taken out of which file.
    assert f"took MCP server out of {user_home / '.codex/config.toml'}" in result.stdout
    assert (user_home / ".codex/config.toml").read_bytes() == before
    # The file is as it was before connect: its backup is spent, and goes.
    assert not list(user_home.glob(".codex/*.opmem-backup")), list(user_home.glob(".codex/*"))


def test_the_instruction_block_names_every_recall_tool(home: Home, user_home: Path) -> None:
    """The block written to AGENTS.md (and the hook's context) names the tools from the registry."""
    from opmem_tui.backend.agents.session_start import TOOLS_LINE
    from opmem_tui.backend.recall.registry import TOOLS, tools_line

    assert tools_line() == TOOLS_LINE
    cli(user_home, home, "connect", "codex")
    block = (user_home / ".codex/AGENTS.md").read_text()
    assert all(f"{name}(" in block for name in TOOLS), block


def test_cli_a_broken_config_exits_1_naming_it(home: Home, user_home: Path) -> None:
    path = user_home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": ')
    result = cli(user_home, home, "connect", "gemini")
    assert result.exit_code == 1
    assert f"{path}: invalid JSON at line 1, column 16" in result.stderr and "not changed" in result.stderr
    assert path.read_text() == '{"mcpServers": ' and not (user_home / ".gemini/GEMINI.md").exists()


def test_the_hook_answers_from_the_precomputed_context_without_loading_the_detector(
    home: Home, user_home: Path, tmp_path: Path
) -> None:
    """connect (and every core.md write after it) renders the redacted context once; while
    core.md is unchanged the hook hands it back without importing click, textual or privacy."""
    repo = _project_with_core(home, tmp_path)
    connect(home, "claude", user_home, {"PATH": "/nonexistent"})
    command = _session_start_command(user_home)
    env = {"HOME": str(user_home), "PATH": os.environ.get("PATH", ""), "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(
        shlex.split(command), input=_claude_input(repo), capture_output=True, text=True, env=env, timeout=60
    )
    imported = done.stderr
    assert "opmem_tui.backend.agents.session_start" in imported
    for heavy in ("opmem_tui.backend.privacy", "click", "textual", "rich", "opmem_tui.cli", "pygit2"):
        assert f" {heavy}\n" not in imported and f" {heavy}." not in imported, heavy
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "stack: go 1.22" in context and TOKEN not in context

    # core.md edited by hand after the cache was written: the hook renders it anew, redacted
    path = core_path(home.memory_dir, home.projects.list_projects()[0].id)
    other = "sk-ant-api03-" + "Q" * 90
    path.write_text(f"═══\n· test: make check; ANTHROPIC_API_KEY={other}  ↪ session:s9\n═══\n")
    done = _run_hook(command, _claude_input(repo), user_home)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "test: make check" in context and other not in context and "[secret:" in context


def test_an_agent_whose_sessions_import_finds_is_found(home: Home, user_home: Path) -> None:
    """OpenCode keeps its sessions in ~/.local/share/opencode, apart from its config folder:
    `opmem import --list` finds them, so `connect --status` does not say "not found"."""
    data = Path(os.environ.get("XDG_DATA_HOME") or user_home / ".local/share")
    (data / "opencode/storage/session").mkdir(parents=True)
    status = cli(user_home, home, "connect", "--status").stdout
    assert "opencode  OpenCode     found" in status


def test_cli_connect_status_shows_this_weeks_usage(home: Home, user_home: Path) -> None:
    import time

    from tests.backend.usage.helpers import claude_usage

    now = time.time()
    store = home.sessions
    user = store.append_message("s-week", "user", "go", created_at=now - 3600)
    reply = store.append_message(
        "s-week", "assistant", "ok", parent_id=user.id, created_at=now - 3590,
        metadata={"model": "gpt-5", "usage": claude_usage(1_000_000, 0)},
    )  # fmt: skip
    store.commit_turn("s-week", reply.id)
    store.update_session("s-week", source="codex")
    home.usage.update()
    status = cli(user_home, home, "connect", "--status").stdout
    assert "codex" in status and "1,000,000 tokens  $1.25" in status  # GPT-5: $1.25 / MTok input
