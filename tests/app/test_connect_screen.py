"""The palette's "Connect an agent…": the agents' status, enter connects the highlighted one
(its files written in the test's fake home), enter again disconnects it, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from opmem_tui.backend.agents import jsonc
from opmem_tui.screens.connect import ConnectScreen
from tests.backend.agents.configs import snapshot, write_existing

from .conftest import make_app, notes, settle, wait_until
from .test_palette import run_command


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the screen's default: Path.home(), here the fake one
    return home


def detail(app) -> str:
    return str(app.screen.query_one("#agent-detail", Static).content)


def lines(app) -> list[str]:
    options = app.screen.query_one("#agents", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_connect_and_disconnect_an_agent_from_the_palette(sample_home, user_home: Path) -> None:
    write_existing(user_home, "gemini")
    before = snapshot(user_home)
    app = make_app(sample_home)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await run_command(pilot, "connect an agent")
        assert isinstance(app.screen, ConnectScreen)
        assert app.screen.user_home == user_home
        assert lines(app)[:3] == ["○ Claude Code  not found", "○ Codex CLI    not found", "○ Gemini CLI   found"]

        await pilot.press("down", "down")
        await settle(pilot)
        assert detail(app).startswith("Gemini CLI: not connected")
        assert f"· MCP server: {user_home / '.gemini/settings.json'}" in detail(app)

        await pilot.press("enter")
        await wait_until(pilot, lambda: lines(app)[2] == "● Gemini CLI   connected", "gemini connected")
        settings = jsonc.parse((user_home / ".gemini/settings.json").read_text(), Path("s"), comments=True).data
        assert settings["mcpServers"]["opmem"]["args"][-1] == "mcp" and "playwright" in settings["mcpServers"]
        assert f"✓ memory block: {user_home / '.gemini/GEMINI.md'}" in detail(app)
        assert any(n.startswith("Gemini CLI connected: ") for n in notes(app))

        await pilot.press("enter")
        await wait_until(pilot, lambda: lines(app)[2] == "○ Gemini CLI   found", "gemini disconnected")
        after = snapshot(user_home)
        assert {k: v for k, v in after.items() if not k.endswith(".opmem-backup")} == before

        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ConnectScreen)


async def test_a_broken_config_is_reported_and_left_alone(sample_home, user_home: Path) -> None:
    path = user_home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": [}')
    app = make_app(sample_home)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.push_screen(ConnectScreen(app.home, user_home))
        await settle(pilot)
        await pilot.press("down", "down", "down", "enter")
        await settle(pilot)
        assert any(f"{path}: invalid JSON" in n for n in notes(app))
        assert lines(app)[3] == "○ Cursor       found"
    assert path.read_text() == '{"mcpServers": [}'
