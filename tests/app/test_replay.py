"""Replay pane: turn stepping, scrolling, tool results, thinking, branches, history, copy."""

from __future__ import annotations

from opmem_tui.screens.branch_picker import BranchPickerScreen
from opmem_tui.screens.history import HistoryScreen
from opmem_tui.widgets.replay_view import ReplayHeader, ReplayPane

from .conftest import press, settle


def text_of(replay: ReplayPane) -> str:
    return "\n".join(line.text for line in replay.view.lines)


def header_text(replay: ReplayPane) -> str:
    return str(replay.query_one(ReplayHeader).render())


async def open_fix_login(pilot) -> ReplayPane:
    """fix-login in the replay, on its first turn (a session opens on its last: g goes back)."""
    await settle(pilot)
    await press(pilot, "down", "down", "down")
    replay = pilot.app.screen.query_one(ReplayPane)
    assert replay.session_id == "fix-login" and replay.index == 2
    await press(pilot, "g")
    return replay


async def test_a_session_opens_on_its_latest_turn(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down", "down")
        replay = pilot.app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.turn.number == 3
        assert header_text(replay).startswith("[← prev turn]  Turn 3 / 3  [next turn →]")


async def test_header_and_turn_stepping_keys(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        first, title, details = header_text(replay).splitlines()
        assert first == "[← prev turn]  Turn 1 / 3  [next turn →]"
        assert title == "Fix the login redirect loop"  # on its own line: never run into the source
        assert details == "claude-code · ◆ webapp  ~/projects/webapp · 2025-12-30 00:00"
        await press(pilot, "right")
        assert replay.index == 1 and "Turn 2 / 3" in header_text(replay)
        await press(pilot, "l")
        assert replay.index == 2
        await press(pilot, "l")  # stays on the last turn
        assert replay.index == 2
        await press(pilot, "h")
        assert replay.index == 1
        await press(pilot, "left")
        assert replay.index == 0
        await press(pilot, "G")
        assert replay.index == 2
        await press(pilot, "g")
        assert replay.index == 0
        assert "Login redirects forever" in text_of(replay)


async def test_header_buttons_step_turns_on_click(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        header = replay.query_one(ReplayHeader)
        next_x = header._next_span[0] + 2
        await pilot.click(header, offset=(next_x, 0))
        await settle(pilot)
        assert replay.index == 1
        await pilot.click(header, offset=(3, 0))
        await settle(pilot)
        assert replay.index == 0


async def test_tool_calls_collapse_and_expand(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        await press(pilot, "right", "enter")  # turn 2, focus the replay
        text = text_of(replay)
        assert "▸ ⚙ bash" in text and '"command": "pytest -q tests/test_auth.py"' in text
        assert "result: 400 lines" in text
        assert "test_case_17 PASSED" not in text
        await press(pilot, "j", "j", "j")  # user, assistant, edit, bash
        assert replay.selected_node is not None and replay.selected_node.name == "bash"
        await press(pilot, "enter")
        assert "test_case_17 PASSED" in text_of(replay)
        assert "▾ ⚙ bash" in text_of(replay)
        await press(pilot, "enter")
        assert "test_case_17 PASSED" not in text_of(replay)
        await press(pilot, "e")  # expand every tool result
        assert "test_case_399 PASSED" in text_of(replay)


async def test_up_down_scroll_the_turn(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        await press(pilot, "right", "enter", "e")
        view = replay.view
        assert view.scroll_y == 0
        await press(pilot, "down", "down", "down")
        assert view.scroll_y == 3
        await press(pilot, "up")
        assert view.scroll_y == 2
        await press(pilot, "end")
        assert view.scroll_y == view.max_scroll_y > 100


async def test_thinking_hidden_until_toggled(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        assert "thinking hidden" in text_of(replay)
        assert "probably the login page itself" not in text_of(replay)
        await press(pilot, "t")
        assert "probably the login page itself" in text_of(replay)
        await press(pilot, "t")
        assert "probably the login page itself" not in text_of(replay)


async def test_branch_picker_follows_the_other_branch(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        await press(pilot, "G")
        assert replay.turn.fork_heads
        assert "↳ 1 other branch (b)" in header_text(replay)
        assert "Retry: wrote tests/test_redirects.py" in text_of(replay)
        await press(pilot, "b")
        picker = app.screen
        assert isinstance(picker, BranchPickerScreen)
        assert [c.name for c in picker.choices] == ["retry-fix-lo0010", "main"]
        assert picker.choices[0].current
        await press(pilot, "down", "enter")
        assert not isinstance(app.screen, BranchPickerScreen)
        assert replay.index == 2
        assert "Added test_login_no_loop" in text_of(replay)
        assert "on main" in header_text(replay)
        await press(pilot, "escape")  # back to the live head
        assert "Retry: wrote tests/test_redirects.py" in text_of(replay)
        assert "on main" not in header_text(replay)


async def test_branch_key_on_a_turn_without_forks_only_notifies(app):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await open_fix_login(pilot)
        await press(pilot, "b")
        assert not isinstance(app.screen, BranchPickerScreen)
        assert any("no other branch" in n.message for n in app.notes)


async def test_history_lists_commits_and_jumps_to_one(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        await press(pilot, "G", "H")
        history = app.screen
        assert isinstance(history, HistoryScreen)
        assert [c.turn for c in history.commits] == [3, 3, 2, 1]
        assert history.commits[0].branches == ("retry-fix-lo0010",)
        option_list = history.query_one("OptionList")
        assert option_list.highlighted == 0  # the commit of the turn on screen
        await press(pilot, "down", "down", "enter")  # the turn-2 commit
        assert not isinstance(app.screen, HistoryScreen)
        assert len(replay.turns) == 2 and replay.index == 1
        assert "read-only" in header_text(replay)
        assert "Run the tests after your fix." in text_of(replay)
        await press(pilot, "escape")
        assert len(replay.turns) == 3 and "read-only" not in header_text(replay)


async def test_y_copies_the_selected_message(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await open_fix_login(pilot)
        await press(pilot, "enter")  # focus the replay; the user message is selected
        await press(pilot, "y")
        assert app.clipboard == "Login redirects forever after the session expires. Can you look?"
        await press(pilot, "j", "j", "y")  # the read tool call: name, arguments, result
        assert app.clipboard.startswith('read {\n  "file_path": "src/auth/middleware.py"\n}')
        assert "def require_login" in app.clipboard


async def test_click_selects_a_message(app):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        first, _ = replay.view.item_lines(1)
        await pilot.click(replay.view, offset=(4, first))
        await settle(pilot)
        assert replay.view.selected_item == 1


async def test_a_system_preface_alone_counts_no_turns_on_the_list_and_in_the_replay(tmp_path):
    from opmem_tui.backend.home import Home
    from opmem_tui.widgets.session_list import SessionList

    from .conftest import NOW, make_app

    home = Home(tmp_path / "h", durable=False)
    home.sessions.append_message("preface", "system", "You are a careful agent.", created_at=NOW - 60)
    home.sessions.commit_turn("preface")
    app = make_app(Home(home.path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        assert table.rows[0].turn_count == 0 and table.render_line(0).text.rstrip().endswith(" 0")
        replay = app.screen.query_one(ReplayPane)
        assert header_text(replay).splitlines()[0].startswith("[← prev turn]  no turns  [next turn →]")
        assert "You are a careful agent." in text_of(replay)  # the preface is still shown
