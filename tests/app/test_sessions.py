"""Session list: rows, skipped count, filter, sort, cursor-driven replay, empty states."""

from __future__ import annotations

from opmem_tui.backend.home import Home
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.session_list import EMPTY_STORE, SessionList

from .conftest import make_app, press, settle


def ids(app) -> list[str]:
    return [m.id for m in app.screen.query_one(SessionList).table.rows]


async def test_lists_sessions_newest_first_with_skipped_count(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert ids(app) == ["docs", "many-tools", "hostile", "fix-login", "parser-refactor"]
        status = str(app.screen.query_one("#session-status").render())
        assert "5 sessions, 1 skipped" in status
        table = app.screen.query_one(SessionList).table
        row = table.render_line(0).text
        assert "Write the READ" in row and "aider" in row and "39m" in row


async def test_rows_show_the_bound_project_by_name(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        header = str(app.screen.query_one("#session-columns").render())
        assert header.split() == ["Title", "Source", "Project", "Age", "Turns"]
        table = app.screen.query_one(SessionList).table
        rows = {meta.id: table.render_line(i).text for i, meta in enumerate(table.rows)}
        assert "claude-code webapp " in rows["fix-login"]  # the registry name, not the project id
        assert "gemini      compiler" in rows["parser-refactor"]
        assert "webapp" not in rows["docs"] and "compiler" not in rows["docs"]  # not bound


async def test_skipped_folder_is_reported_with_a_relative_path(app):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        messages = [n.message for n in app.notes]
        assert any("sessions/broken-folder: no meta.json" in m for m in messages)


async def test_cursor_moves_update_the_replay(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "docs"
        await press(pilot, "down")
        assert replay.session_id == "many-tools"
        await press(pilot, "down", "down")
        assert replay.session_id == "fix-login"
        assert replay.index == 2 and len(replay.turns) == 3  # on its latest turn
        await press(pilot, "up")
        assert replay.session_id == "hostile"


async def test_filter_narrows_and_escape_restores(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        for ch in "login":
            await pilot.press(ch)
        await settle(pilot)
        assert ids(app) == ["fix-login"]
        assert app.screen.query_one(ReplayPane).session_id == "fix-login"
        status = str(app.screen.query_one("#session-status").render())
        assert "1 of 5 sessions" in status
        await press(pilot, "enter")  # back to the table, filter kept
        assert app.focused is app.screen.query_one(SessionList).table
        assert ids(app) == ["fix-login"]
        await press(pilot, "escape")
        assert len(ids(app)) == 5
        assert app.screen.query_one(ReplayPane).session_id == "fix-login"  # cursor kept


async def test_filter_words_must_all_match_and_no_match_says_so(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        for ch in "todo claude":
            await pilot.press(ch)
        await settle(pilot)
        assert ids(app) == ["many-tools"]
        for ch in " zzzq":
            await pilot.press(ch)
        await settle(pilot)
        assert ids(app) == []
        table = app.screen.query_one(SessionList).table
        assert "No session matches" in table.render_line(1).text


async def test_sort_keys_cycle_and_reverse(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "s")  # created
        assert ids(app)[0] == "docs"
        await press(pilot, "s")  # title
        assert ids(app)[:2] == ["hostile", "fix-login"]  # "[bold..." sorts before letters
        await press(pilot, "S")
        assert ids(app)[0] == "docs"  # "Write the README..." last alphabetically
        await press(pilot, "s")  # turns
        assert ids(app)[0] == "fix-login"
        assert "sort: turns" in str(app.screen.query_one("#session-status").render())


async def test_enter_focuses_the_replay(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "enter")
        assert app.focused is app.screen.query_one(ReplayPane).view


async def test_empty_store_says_what_to_do(tmp_path):
    home = Home(tmp_path / "empty", durable=False)
    app = make_app(home)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        shown = " ".join(table.render_line(y).text.strip() for y in range(1, 4))
        assert EMPTY_STORE in shown
        replay = app.screen.query_one(ReplayPane)
        help_text = " ".join(line.text.strip() for line in replay.view.lines)
        assert help_text.startswith("No sessions yet.")
        for hint in ("ctrl+p", "Import sessions: Claude Code", "opmem import claude", "opmem demo"):
            assert hint in help_text
        assert not replay.header.display  # no "[← prev turn] no turns" chrome over nothing
        status = str(app.screen.query_one("#session-status").render())
        assert status.startswith("0 sessions")
