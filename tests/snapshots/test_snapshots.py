"""SVG snapshots of every pane and dialog, in the dark and the light theme.

Fixed terminal size, a pinned clock (ages) and a UTC zone (times), a store built with pinned
commit times: the pictures are the same on every run. `pytest --snapshot-update` re-records.
"""

from __future__ import annotations

import pytest

from tests.app.conftest import make_app, settle

SIZE = (120, 32)
THEMES = ["opmem-dark", "opmem-light"]


def scenario(*keys: str, clear_notes: bool = True, filter_text: str | None = None):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        if filter_text is not None:
            await pilot.press("slash")
            app.screen.query_one("#session-filter").cursor_blink = False
            await pilot.press(*filter_text)
            await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot, 2)
        if clear_notes:
            app.clear_notifications()
        await settle(pilot, 1)

    return run_before


def themed(sample_home, theme: str):
    app = make_app(sample_home)
    app.theme = theme
    return app


@pytest.mark.parametrize("theme", THEMES)
def test_sessions_pane(snap_compare, sample_home, theme):
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario(clear_notes=False))


@pytest.mark.parametrize("theme", THEMES)
def test_session_filter(snap_compare, sample_home, theme):
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario(filter_text="login"))


@pytest.mark.parametrize("theme", THEMES)
def test_replay_tool_output_expanded(snap_compare, sample_home, theme):
    keys = ("down", "down", "down", "g", "right", "enter", "j", "j", "j", "enter")
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario(*keys))


@pytest.mark.parametrize("theme", THEMES)
def test_replay_thinking_shown(snap_compare, sample_home, theme):
    keys = ("down", "down", "down", "g", "enter", "t")
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario(*keys))


@pytest.mark.parametrize("theme", THEMES)
def test_branch_picker(snap_compare, sample_home, theme):
    keys = ("down", "down", "down", "G", "b")
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario(*keys))


@pytest.mark.parametrize("theme", THEMES)
def test_history(snap_compare, sample_home, theme):
    keys = ("down", "down", "down", "G", "H")
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario(*keys))


@pytest.mark.parametrize("theme", THEMES)
def test_projects_pane(snap_compare, sample_home, theme):
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario("2"))


@pytest.mark.parametrize("theme", THEMES)
def test_keys_screen(snap_compare, sample_home, theme):
    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=scenario("question_mark"))


@pytest.mark.parametrize("theme", THEMES)
def test_confirm_delete(snap_compare, sample_home, theme):
    async def run_before(pilot) -> None:
        await scenario()(pilot)
        pilot.app.screen.sessions.delete_current()
        await settle(pilot, 2)

    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=run_before)


def test_hostile_content(snap_compare, sample_home):
    keys = ("down", "down", "enter", "e")
    assert snap_compare(themed(sample_home, "opmem-dark"), terminal_size=SIZE, run_before=scenario(*keys))


@pytest.mark.parametrize("theme", THEMES)
def test_command_palette(snap_compare, sample_home, theme):
    async def run_before(pilot) -> None:
        await scenario("ctrl+p")(pilot)
        pilot.app.screen.query_one("Input").cursor_blink = False
        await settle(pilot, 1)

    assert snap_compare(themed(sample_home, theme), terminal_size=SIZE, run_before=run_before)
