"""Flows found by using the app on the demo store: branch heads, links to other branches, broken
or vanished data, imports from a path, and what the screens say about each."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual import events
from textual.widgets import TabbedContent

from opmem_tui.screens.branch_picker import BranchPickerScreen
from opmem_tui.screens.history import HistoryScreen
from opmem_tui.screens.import_path import ImportPathScreen
from opmem_tui.screens.keys import KeysScreen
from opmem_tui.widgets.commit_log import CommitLog
from opmem_tui.widgets.diff_view import DiffView
from opmem_tui.widgets.job_bar import JobBar
from opmem_tui.widgets.messages import LinkedTurnChosen
from opmem_tui.widgets.project_list import ProjectList
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.session_list import SessionList

from .conftest import make_app, notes, press, settle, wait_until
from .sample_store import fresh_home
from .test_import import claude_session
from .test_palette import run_command
from .test_replay import header_text, open_fix_login, text_of


async def wait_job(pilot) -> None:
    for _ in range(100):
        await settle(pilot, 1)
        if not pilot.app.screen.query_one(JobBar).has_class("-running"):
            return
    raise AssertionError("the job did not finish")


# -- branches ------------------------------------------------------------------------------


async def test_picker_c_makes_the_branch_current(app, sample_path):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        replay = await open_fix_login(pilot)
        await press(pilot, "G", "b")
        picker = app.screen
        assert isinstance(picker, BranchPickerScreen)
        main = picker.choices[1]
        assert main.name == "main" and not main.current and picker.choices[0].current
        await press(pilot, "down", "c")
        await settle(pilot)
        assert not isinstance(app.screen, BranchPickerScreen)
        store = fresh_home(sample_path).sessions  # what another process now reads
        assert store.get_meta("fix-login").head_id == main.head_id
        assert "Added test_login_no_loop" in text_of(replay)
        assert "on main" not in header_text(replay)  # the live view: main is the session's branch now
        assert any("main is now the current branch" in m for m in notes(app))
        await press(pilot, "b")
        assert [c.name for c in app.screen.choices if c.current] == ["main"]


async def test_viewed_branch_becomes_current_with_B(app, sample_path):
    async with app.run_test(size=(120, 30)) as pilot:
        replay = await open_fix_login(pilot)
        screen = app.screen
        assert screen.check_action("make_head", ()) is False  # nothing to make current yet
        await press(pilot, "G", "b", "down", "enter")  # view main only
        assert "on main" in header_text(replay)
        assert fresh_home(sample_path).sessions.get_meta("fix-login").head_id != replay.turns[-1].nodes[-1].id
        assert screen.check_action("make_head", ()) is True
        await press(pilot, "B")
        await settle(pilot)
        assert fresh_home(sample_path).sessions.get_meta("fix-login").head_id == replay.turns[-1].nodes[-1].id
        assert "on main" not in header_text(replay)
        assert screen.check_action("make_head", ()) is False


async def test_linked_commit_of_another_branch_opens_that_branch(demo_home):
    app = make_app(demo_home)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "2")
        await settle(pilot)
        projects = app.screen.query_one(ProjectList)
        index = next(i for i, p in enumerate(projects.projects) if p.name == "weather-cli")
        projects.move_cursor(row=index)
        await settle(pilot)
        await press(pilot, "enter")  # enter on a project: to its commits
        log = app.screen.query_one(CommitLog)
        assert app.focused is log
        row = next(i for i, c in enumerate(log.commits) if c.is_agent and log.link_for(c).turn == 2)
        log.move_cursor(row=row)
        await settle(pilot)
        await press(pilot, "enter")
        assert app.screen.query_one(TabbedContent).active == "sessions"
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "cc-fix-forecast-parse" and replay.index == 1
        # The commit was made on the first line of turns, not on the retry that is current now.
        assert "Adding a formatter with both units." in text_of(replay)
        assert "Retry:" not in text_of(replay)
        assert "on main" in header_text(replay)


# -- broken or vanished data ----------------------------------------------------------------


async def test_unreadable_session_says_so_in_the_replay(app, sample_path):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "docs"
        (sample_path / "sessions" / "many-tools" / "meta.json").write_text("{broken")
        await press(pilot, "down")
        assert app.screen.query_one(SessionList).current.id == "many-tools"
        assert replay.meta is None  # not the previous session's turns under the new cursor
        # The path is the store's own (sessions/...), not the temp folder's: the same text anywhere.
        shown = " ".join(line.text for line in replay.view.lines)
        assert shown.startswith("This session cannot be read: sessions/many-tools/meta.json: invalid JSON")
        assert any("invalid JSON" in m for m in notes(app))
        await press(pilot, "down")  # the next session still opens
        assert replay.session_id == "hostile"


async def test_session_deleted_elsewhere_is_noted(sample_path):
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "docs"
        fresh_home(sample_path).sessions.delete_session("docs")  # another process
        app.screen.sessions.refresh_listing()
        await settle(pilot)
        assert any("“Write the README install section.” was deleted by another program" in m for m in notes(app))
        assert replay.session_id == "many-tools"
        assert app.screen.query_one(SessionList).current.id == "many-tools"


async def test_deleting_from_the_palette_is_not_called_another_program(app):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "delete session")
        await press(pilot, "y")
        await settle(pilot)
        assert any("Deleted session docs" in m for m in notes(app))
        assert not any("another program" in m for m in notes(app))


async def test_missing_project_folder_is_marked(sample_path):
    shutil.rmtree(Path.home() / "projects" / "webapp")
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down", "down")  # fix-login, bound to webapp
        replay = app.screen.query_one(ReplayPane)
        assert "◆ webapp  folder missing: ~/projects/webapp" in header_text(replay)
        await press(pilot, "2")
        await settle(pilot)
        projects = app.screen.query_one(ProjectList)
        assert projects.current.name == "webapp"
        assert str(projects.get_row_at(0)[1]) == "missing"
        assert str(projects.get_row_at(1)[1]) == "paused"  # compiler is still there
        diff = " ".join(line.text for line in app.screen.query_one(DiffView).lines)
        assert "The folder ~/projects/webapp is gone (moved or deleted)" in diff
        assert "opmem projects unbind" in diff
        assert app.screen.query_one(CommitLog).commits == []


# -- imports -------------------------------------------------------------------------------


async def test_import_from_a_path(app, tmp_path):
    folder = tmp_path / "backup"
    for index in range(2):
        claude_session(folder, index)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "import sessions from a path")
        assert isinstance(app.screen, ImportPathScreen)
        await pilot.press(*str(folder))
        await press(pilot, "enter")  # to the source list; Claude Code is the first
        assert app.screen.query_one("OptionList").has_focus
        await press(pilot, "enter")
        await wait_job(pilot)
        assert len(app.screen.query_one(SessionList).table.rows) == 7
        assert any(m.startswith("Claude Code: 2 new sessions") for m in notes(app))


async def test_import_path_screen_refuses_a_missing_path(app, tmp_path):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "import sessions from a path")
        await pilot.press(*str(tmp_path / "nowhere"))
        await press(pilot, "enter", "enter")
        assert isinstance(app.screen, ImportPathScreen)  # still asking
        assert any("no such file or folder" in m for m in notes(app))
        await press(pilot, "escape")
        assert not isinstance(app.screen, ImportPathScreen)


async def test_import_that_finds_nothing_says_where_it_looked(app, tmp_path, monkeypatch):
    # Under $HOME: the message shows it as ~/..., whatever the length of the temp folder's path.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path.home() / "no-claude-here"))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "import sessions: claude")
        await wait_job(pilot)
        message = next(n for n in app.notes if n.title == "Import")
        assert message.severity == "warning"
        assert message.message.startswith("Claude Code: no sessions found.")
        assert "no-claude-here" in message.message and "not found" in message.message
        assert "Import sessions from a path" in message.message


async def test_jsonl_import_asks_for_a_path(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.screen.palette_commands()]
        assert "Import sessions: JSONL…" in titles
        await run_command(pilot, "import sessions: jsonl")
        assert isinstance(app.screen, ImportPathScreen)
        options = app.screen.query_one("OptionList")
        assert options.get_option_at_index(options.highlighted).id == "jsonl"


# -- dialogs read well ---------------------------------------------------------------------


async def test_history_lines_do_not_repeat_the_turn(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await open_fix_login(pilot)
        await press(pilot, "H")
        assert isinstance(app.screen, HistoryScreen)
        options = app.screen.query_one("OptionList")
        lines = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert lines[0].startswith("  ")
        assert any(line.startswith("● ") for line in lines)  # the turn on screen
        turn2 = next(line for line in lines if "turn   2" in line)
        assert "Run the tests after your fix." in turn2 and "turn 2:" not in turn2


async def test_keys_screen_shows_keys_as_typed(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, KeysScreen)
        table = app.screen.query_one("DataTable")
        rows = {str(table.get_row_at(i)[3]): str(table.get_row_at(i)[1]) for i in range(table.row_count)}
        assert rows["app.keys"] == "? (question_mark)"
        assert rows["sessions.filter"] == "/ (slash)"
        assert rows["replay.prev_turn"] == "← (left), h"
        assert rows["replay.make_head"] == "B"
        assert rows["projects.commits"] == "⏎ (enter)"


async def test_keys_screen_lists_a_shared_binding_id_in_each_place(app):
    """enter recentres in the graph tree and opens the turn in the timeline, core.md and the
    search hits: one id (list.choose, one remap moves both), and `?` lists both meanings."""
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        table = app.screen.query_one("DataTable")
        rows = {tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)}
        assert ("Graph", "⏎ (enter)", "Recentre", "list.choose") in rows
        assert ("Memory lists", "⏎ (enter)", "Open", "list.choose") in rows
        assert len(rows) == table.row_count  # no row twice


async def test_a_folder_that_breaks_later_is_reported_too(app, sample_path):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        assert [m for m in notes(app) if "skipped" in m] == [
            "1 session folder skipped:\nsessions/broken-folder: no meta.json"
        ]
        (sample_path / "sessions" / "half-copied").mkdir()
        app.screen.sessions.refresh_listing()
        await settle(pilot)
        skipped = [m for m in notes(app) if "skipped" in m]
        assert skipped[1:] == ["1 session folder skipped:\nsessions/half-copied: no meta.json"]  # only the new one
        assert "5 sessions, 2 skipped" in str(app.screen.query_one("#session-status").render())


async def test_jump_to_a_turn_clears_a_filter_that_hides_its_session(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        await pilot.press(*"readme")
        await settle(pilot)
        session_list = app.screen.query_one(SessionList)
        assert [m.id for m in session_list.table.rows] == ["docs"]
        await press(pilot, "2")
        app.screen.query_one(CommitLog).focus()
        await press(pilot, "down", "enter")  # the agent commit of fix-login, turn 2
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.index == 1  # not reset to turn 1
        assert session_list.filter_text == "" and session_list.current.id == "fix-login"
        # the focus moves once the tab switch has been laid out: on a loaded machine after settle's rounds
        await wait_until(pilot, lambda: app.focused is replay.view, "the replay takes the focus")


async def test_a_jump_to_a_turn_moves_the_focus_before_the_hidden_tab_hears_of_it(app):
    """The focus moves with the tab switch, not a turn of the app's queue later: the commit list
    hidden by the jump is blurred before its Hide arrives. Focused still at its Hide, it would
    blur itself and hand the focus to a sibling in the hidden tab, which the tabs follow back."""
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "2")
        commit_log = app.screen.query_one(CommitLog)
        commit_log.focus()
        await wait_until(pilot, lambda: app.focused is commit_log, "the commit list takes the focus")
        replay = app.screen.query_one(ReplayPane)
        app.screen.on_linked_turn_chosen(LinkedTurnChosen("fix-login", 2))  # what enter on its commit posts
        assert app.focused is replay.view  # at once
        commit_log.post_message(events.Hide())  # the Hide of the layout after the switch, at its earliest
        await settle(pilot)
        assert app.screen.active_tab == "sessions"
        assert app.focused is replay.view
        assert replay.session_id == "fix-login" and replay.index == 1


async def test_a_tab_key_focuses_the_tab_before_the_hidden_one_hears_of_it(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        await wait_until(pilot, lambda: app.focused is table, "the session list has the focus")
        projects = app.screen.query_one(ProjectList)
        app.screen.action_show_tab("projects")  # key 2
        assert app.focused is projects  # at once
        table.post_message(events.Hide())
        await settle(pilot)
        assert app.screen.active_tab == "projects" and app.focused is projects
        app.screen.action_show_tab("sessions")  # key 1
        assert app.focused is table
        projects.post_message(events.Hide())
        await settle(pilot)
        assert app.screen.active_tab == "sessions" and app.focused is table


async def test_demo_subagent_session_names_its_parent(demo_home):
    app = make_app(demo_home)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "down")
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "cc-fix-forecast-parse.agent-explore"
        assert "subagent of cc-fix-forecast-parse" in header_text(replay).splitlines()[2]
