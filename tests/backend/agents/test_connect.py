"""`opmem connect` / `disconnect` on realistic user configs in a fake home: merged into what is
there, idempotent to the byte, a backup kept, undone byte for byte, a broken file refused."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from opmem_tui.backend.agents import jsonc
from opmem_tui.backend.agents.connect import AGENTS, BACKUP_SUFFIX, ConnectError, connect, disconnect, refresh, status
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import core_path

from .configs import EXISTING, MCP_FILE, OPENCODE_JSONC, snapshot, write_existing

ALL = list(AGENTS)


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "opmem")


def env() -> dict[str, str]:
    return {"PATH": "/nonexistent"}


def mcp_entry(user_home: Path, agent: str) -> dict:
    path = user_home / MCP_FILE[agent]
    text = path.read_text()
    if agent == "codex":
        return tomllib.loads(text)["mcp_servers"]["opmem"]
    data = jsonc.parse(text, path, comments=agent in ("opencode", "gemini")).data
    return data["mcp" if agent == "opencode" else "mcpServers"]["opmem"]


def others_kept(user_home: Path, agent: str) -> None:
    """What the user had is still there, value for value."""
    if agent == "claude":
        data = json.loads((user_home / ".claude.json").read_text())
        assert data["mcpServers"]["github"]["args"] == ["-y", "@modelcontextprotocol/server-github"]
        assert data["numStartups"] == 42 and data["projects"]["/home/u/src/app"]["history"]
        settings = json.loads((user_home / ".claude/settings.json").read_text())
        assert settings["permissions"]["allow"] == ["Bash(git status)", "Bash(npm test:*)"]
        assert settings["hooks"]["PreCompact"][0]["hooks"][0]["command"] == "notify-send compacting"
        assert settings["hooks"]["PostToolUse"][0]["matcher"] == "Edit|Write"
    elif agent == "codex":
        text = (user_home / ".codex/config.toml").read_text()
        assert text.startswith(EXISTING["codex"][".codex/config.toml"])  # appended: every byte before kept
        assert tomllib.loads(text)["mcp_servers"]["context7"]["env"] == {"LOG_LEVEL": "info"}
        assert (user_home / ".codex/AGENTS.md").read_text().startswith(EXISTING["codex"][".codex/AGENTS.md"])
    elif agent == "opencode":
        text = (user_home / ".config/opencode/opencode.jsonc").read_text()
        for comment in ("// my providers", "/* the docs server */"):
            assert comment in text
        data = jsonc.parse(text, Path("x"), comments=True).data
        assert set(data["mcp"]) == {"context7", "everything", "opmem"}
    else:
        rel = MCP_FILE[agent]
        before = jsonc.parse(EXISTING[agent][rel], Path(rel), comments=True).data["mcpServers"]
        after = jsonc.parse((user_home / rel).read_text(), Path(rel), comments=True).data["mcpServers"]
        if agent == "gemini":
            assert "    // mine\n" in (user_home / rel).read_text()
        assert {k: v for k, v in after.items() if k != "opmem"} == before


@pytest.mark.parametrize("agent", ALL)
def test_connect_twice_then_disconnect_gives_back_every_byte(home: Home, user_home: Path, agent: str) -> None:
    write_existing(user_home, agent)
    before = snapshot(user_home)

    change = connect(home, agent, user_home, env())
    assert change.changed
    argv = mcp_entry(user_home, agent)
    command = argv["command"] if isinstance(argv["command"], list) else [argv["command"], *argv["args"]]
    assert command[-3:] == ["--home", str(home.path.absolute()), "mcp"]
    assert Path(command[0]).is_absolute()
    others_kept(user_home, agent)
    for rel, original in before.items():  # a backup of every file changed, as it was
        if original == b"<dir>":
            continue
        backup = user_home / (rel + BACKUP_SUFFIX)
        if (user_home / rel).read_bytes() != original:
            assert backup.read_bytes() == original

    connected = snapshot(user_home)
    state = (home.path / "agents.json").read_bytes()
    again = connect(home, agent, user_home, env())
    assert not again.changed
    assert snapshot(user_home) == connected and (home.path / "agents.json").read_bytes() == state

    disconnect(home, agent, user_home, env())
    after = snapshot(user_home)
    assert {k: v for k, v in after.items() if not k.endswith(BACKUP_SUFFIX)} == before
    assert agent not in json.loads((home.path / "agents.json").read_text())["agents"]


@pytest.mark.parametrize("agent", ALL)
def test_into_an_empty_home_and_out_leaves_nothing(home: Home, user_home: Path, agent: str) -> None:
    connect(home, agent, user_home, env())
    row = next(s for s in status(home, user_home, env()) if s.id == agent)
    assert row.connected and all(p.present for p in row.parts)
    disconnect(home, agent, user_home, env())
    assert snapshot(user_home) == {}


BROKEN = {
    "claude": (".claude.json", '{"mcpServers": {"github": {"command": "npx",}}}'),
    "codex": (".codex/config.toml", "model = \n[mcp_servers.x]\n"),
    "gemini": (".gemini/settings.json", '{\n  // comments are fine, a missing brace is not\n  "ui": {\n}\n'),
    "cursor": (".cursor/mcp.json", '{"mcpServers": []}'),
    "opencode": (".config/opencode/opencode.jsonc", '{\n  "mcp": {\n    "a": { "type": "local" \n}\n'),
    "copilot": (".copilot/mcp-config.json", "[1, 2]"),
}


@pytest.mark.parametrize("agent", ALL)
def test_a_broken_config_is_named_and_nothing_is_written(home: Home, user_home: Path, agent: str) -> None:
    write_existing(user_home, agent)
    rel, text = BROKEN[agent]
    (user_home / rel).write_text(text)
    before = snapshot(user_home)
    with pytest.raises(ConnectError) as caught:
        connect(home, agent, user_home, env())
    message = str(caught.value)
    assert str(user_home / rel) in message and "not changed" in message
    assert snapshot(user_home) == before  # not even the other files of that agent
    assert not (home.path / "agents.json").exists()


def test_a_broken_claude_settings_json_stops_the_mcp_entry_too(home: Home, user_home: Path) -> None:
    write_existing(user_home, "claude")
    (user_home / ".claude/settings.json").write_text('{"hooks": []}')
    before = snapshot(user_home)
    with pytest.raises(ConnectError, match=r"settings\.json: `hooks` is not an object"):
        connect(home, "claude", user_home, env())
    assert snapshot(user_home) == before


def test_disconnect_keeps_what_the_agent_changed_meanwhile(home: Home, user_home: Path) -> None:
    """Claude Code rewrites ~/.claude.json on its own (JSON.stringify, two spaces): the
    disconnect removes only opmem's entry and keeps the agent's changes."""
    write_existing(user_home, "claude")
    connect(home, "claude", user_home, env())
    path = user_home / ".claude.json"
    data = json.loads(path.read_text())
    data["numStartups"] = 43
    data["mcpServers"]["linear"] = {"type": "http", "url": "https://mcp.linear.app/mcp"}
    path.write_text(json.dumps(data, indent=2))
    disconnect(home, "claude", user_home, env())
    del data["mcpServers"]["opmem"]
    assert path.read_text() == json.dumps(data, indent=2)


def test_a_changed_opmem_home_updates_the_entry_in_place(tmp_path: Path, user_home: Path) -> None:
    write_existing(user_home, "codex")
    connect(Home(tmp_path / "one"), "codex", user_home, env())
    connect(Home(tmp_path / "two"), "codex", user_home, env())
    text = (user_home / ".codex/config.toml").read_text()
    assert text.count("[mcp_servers.opmem]") == 1 and str(tmp_path / "two") in text
    assert tomllib.loads(text)["mcp_servers"]["context7"]["command"] == "npx"


def test_claude_hooks_of_another_home_are_replaced_not_doubled(tmp_path: Path, user_home: Path) -> None:
    write_existing(user_home, "claude")
    connect(Home(tmp_path / "one"), "claude", user_home, env())
    connect(Home(tmp_path / "two"), "claude", user_home, env())
    hooks = json.loads((user_home / ".claude/settings.json").read_text())["hooks"]
    commands = [h["command"] for event in hooks.values() for g in event for h in g["hooks"]]
    assert not any(str(tmp_path / "one") in c for c in commands)
    assert sum(c.endswith("hook session-start") for c in commands) == 1
    assert sum(c.endswith("flush --hook claude") for c in commands) == 2  # PreCompact, SessionEnd
    assert "notify-send compacting" in commands and "ruff format ." in commands


def test_codex_reads_its_override_file_when_there_so_the_block_goes_there(home: Home, user_home: Path) -> None:
    write_existing(user_home, "codex")
    override = user_home / ".codex/AGENTS.override.md"
    override.write_text("Temporary rules.\n")
    before = (user_home / ".codex/AGENTS.md").read_bytes()
    connect(home, "codex", user_home, env())
    assert "opmem:begin" in override.read_text() and (user_home / ".codex/AGENTS.md").read_bytes() == before
    disconnect(home, "codex", user_home, env())
    assert override.read_text() == "Temporary rules.\n"


def test_opencode_json_without_c_is_strict_json_with_comments_kept_in_jsonc(home: Home, user_home: Path) -> None:
    write_existing(user_home, "opencode")
    connect(home, "opencode", user_home, env())
    text = (user_home / ".config/opencode/opencode.jsonc").read_text()
    assert text.startswith(OPENCODE_JSONC.split('    "everything"')[0])
    assert not (user_home / ".config/opencode/opencode.json").exists()
    entry = mcp_entry(user_home, "opencode")
    assert entry["type"] == "local" and entry["enabled"] is True and entry["command"][-1] == "mcp"
    assert "args" not in entry  # OpenCode's schema: additionalProperties false


def test_refresh_rewrites_the_blocks_after_core_md_changes_and_redacts(home: Home, user_home: Path) -> None:
    write_existing(user_home, "codex")
    connect(home, "codex", user_home, env())
    agents_md = user_home / ".codex/AGENTS.md"
    assert "No memory consolidated yet" in agents_md.read_text()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    core = core_path(home.memory_dir)
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text(f"═══\nopmem memory · global\n· prefers: uv over pip; token {token}  ↪ session:abc\n═══\n")
    notes = refresh(home)
    text = agents_md.read_text()
    assert notes == [f"memory block refreshed: {agents_md}"]
    assert "prefers: uv over pip" in text and token not in text and "[secret:" in text
    assert text.startswith(EXISTING["codex"][".codex/AGENTS.md"])
    assert refresh(home) == []  # nothing new: no write


def test_the_distillation_projection_refreshes_connected_agents(home: Home, user_home: Path) -> None:
    from opmem_tui.backend.distill.project import project_all

    home.ensure()
    connect(home, "gemini", user_home, env())
    notes = project_all(home)
    assert f"memory block refreshed: {user_home / '.gemini/GEMINI.md'}" in notes
    assert "No memory consolidated yet" not in (user_home / ".gemini/GEMINI.md").read_text()


def test_in_repo_writes_the_project_block_and_disconnect_takes_it_out(
    home: Home, user_home: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "AGENTS.md").write_text("# Repo rules\n\nUse make.\n")
    project = home.projects.resolve_project(repo, "shop")
    core = core_path(home.memory_dir, project.id)
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text("═══\n[Project · shop]\n· stack: go 1.22, chi  ↪ session:s1\n═══\n")
    before = (repo / "AGENTS.md").read_bytes()
    connect(home, "codex", user_home, env(), in_repo=repo)
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith("# Repo rules\n\nUse make.\n") and "stack: go 1.22, chi" in text
    assert "opmem memory · project shop" in text
    connect(home, "claude", user_home, env(), in_repo=repo)
    assert "stack: go 1.22" in (repo / "CLAUDE.md").read_text()
    core.write_text("═══\n[Project · shop]\n· stack: go 1.23, chi  ↪ session:s2\n═══\n")  # the next sleep
    assert f"memory block refreshed: {repo / 'AGENTS.md'}" in refresh(home)
    assert "go 1.23" in (repo / "AGENTS.md").read_text() and "go 1.23" in (repo / "CLAUDE.md").read_text()
    disconnect(home, "codex", user_home, env())
    disconnect(home, "claude", user_home, env())
    assert (repo / "AGENTS.md").read_bytes() == before and not (repo / "CLAUDE.md").exists()


def test_in_repo_outside_a_bound_project_is_refused(home: Home, user_home: Path, tmp_path: Path) -> None:
    with pytest.raises(ConnectError, match="not in a bound project"):
        connect(home, "codex", user_home, env(), in_repo=tmp_path)
    assert snapshot(user_home) == {}


def test_unknown_agent_and_status_of_a_fresh_home(home: Home, user_home: Path) -> None:
    with pytest.raises(ConnectError, match="unknown agent 'vim'"):
        connect(home, "vim", user_home, env())
    rows = status(home, user_home, env())
    assert [r.id for r in rows] == ALL
    assert not any(r.found or r.connected for r in rows)
    (user_home / ".gemini").mkdir()
    assert [r.id for r in status(home, user_home, env()) if r.found] == ["gemini"]
    connect(home, "cursor", user_home, env())  # the folder opmem made does not make Cursor found
    rows = {r.id: r for r in status(home, user_home, env())}
    assert rows["cursor"].connected and not rows["cursor"].found


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mode & 0o777 for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("agent", ALL)
def test_a_private_config_stays_private_and_so_does_its_backup(home: Home, user_home: Path, agent: str) -> None:
    """A 0600 config (tokens in an MCP server's env) keeps its mode through connect, refresh and
    disconnect, and the backup of it is 0600 too: replacing it by a rename must not open it up."""
    write_existing(user_home, agent)
    for path in user_home.rglob("*"):
        if path.is_file():
            path.chmod(0o600)
    connect(home, agent, user_home, env())
    core = core_path(home.memory_dir)
    core.parent.mkdir(parents=True, exist_ok=True)
    core.write_text("═══\nopmem memory · global\n· prefers: uv\n═══\n")
    refresh(home)
    changed = [rel for rel in _modes(user_home) if rel.endswith(BACKUP_SUFFIX)]
    assert changed  # every agent had a file of the user's changed
    assert set(_modes(user_home).values()) == {0o600}
    disconnect(home, agent, user_home, env())
    assert set(_modes(user_home).values()) == {0o600}


@pytest.mark.parametrize("agent", ALL)
def test_a_read_only_config_is_named_and_nothing_is_written(home: Home, user_home: Path, agent: str) -> None:
    write_existing(user_home, agent)
    target = user_home / MCP_FILE[agent]
    target.chmod(0o444)
    before = snapshot(user_home)
    with pytest.raises(ConnectError) as caught:
        connect(home, agent, user_home, env())
    assert str(caught.value) == f"{target}: the file is read-only; nothing was changed"
    assert snapshot(user_home) == before and target.stat().st_mode & 0o777 == 0o444
    assert not (home.path / "agents.json").exists()


def test_a_config_that_is_a_folder_is_named_and_nothing_is_written(home: Home, user_home: Path) -> None:
    write_existing(user_home, "gemini")
    (user_home / ".gemini/GEMINI.md").unlink(missing_ok=True)
    (user_home / ".gemini/GEMINI.md").mkdir()
    before = snapshot(user_home)
    with pytest.raises(ConnectError, match=r"GEMINI\.md: cannot read \(Is a directory\); nothing was changed"):
        connect(home, "gemini", user_home, env())
    assert snapshot(user_home) == before


def test_flush_hooks_from_hooks_install_stay_after_connect_and_disconnect(home: Home, user_home: Path) -> None:
    """`opmem hooks install claude` first: connect adds only the SessionStart hook (the flush
    hooks are the same entries), and disconnect leaves the flush hooks it did not add."""
    from opmem_tui.backend.agents.claude_hooks import flush_command, install

    write_existing(user_home, "claude")
    settings = user_home / ".claude/settings.json"
    assert install(flush_command(home.path), settings).added == ("PreCompact", "SessionEnd")
    before = settings.read_bytes()
    connect(home, "claude", user_home, env())
    text = settings.read_text()
    assert text.count("flush --hook claude") == 2 and text.count("hook session-start") == 1
    disconnect(home, "claude", user_home, env())
    assert settings.read_bytes() == before


def test_a_reconnect_still_owns_the_flush_hooks_the_first_connect_added(home: Home, user_home: Path) -> None:
    write_existing(user_home, "claude")
    settings = user_home / ".claude/settings.json"
    before = settings.read_bytes()
    connect(home, "claude", user_home, env())
    data = json.loads(settings.read_text())
    del data["hooks"]["SessionStart"]  # the user takes the SessionStart hook out by hand
    settings.write_text(json.dumps(data, indent=2))
    connect(home, "claude", user_home, env())  # and puts it back with connect
    disconnect(home, "claude", user_home, env())
    remaining = json.loads(settings.read_text())
    assert "flush --hook claude" not in settings.read_text() and "session-start" not in settings.read_text()
    assert remaining["hooks"]["PreCompact"] == json.loads(before)["hooks"]["PreCompact"]
