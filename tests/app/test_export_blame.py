"""The app's share and blame: the palette's "Export this session…" writes the file, `b` on a
commit's diff (or the palette's "Blame a file…") shows who wrote each line, and enter on a line a
session turn wrote opens that turn's replay."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, TabbedContent

from opmem_tui.screens.ask_text import AskTextScreen
from opmem_tui.screens.blame import BlameScreen
from opmem_tui.widgets.blame_view import BlameView
from opmem_tui.widgets.commit_log import CommitLog
from opmem_tui.widgets.diff_view import DiffView
from opmem_tui.widgets.replay_view import ReplayPane

from .conftest import notes, press, settle
from .test_palette import run_command
from .test_projects import open_projects


async def _blame_of_the_agent_commit(pilot) -> BlameScreen:
    app = pilot.app
    await open_projects(pilot)
    app.screen.query_one(CommitLog).focus()
    await press(pilot, "down")  # the agent's commit: it changed src/auth/middleware.py
    app.screen.query_one(DiffView).focus()
    await press(pilot, "b")
    screen = app.screen
    assert isinstance(screen, BlameScreen) and screen.path == "src/auth/middleware.py"
    await settle(pilot)
    return screen


async def test_b_on_a_diff_blames_its_file_and_enter_opens_the_turn(app):
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await _blame_of_the_agent_commit(pilot)
        view = screen.query_one(BlameView)
        lines = view.report.lines
        agent = [line for line in lines if line.origin is not None]
        users = [line for line in lines if line.origin is None]
        assert agent and users  # the agent's changed line among the user's own
        assert {(line.origin.session_id, line.origin.turn) for line in agent} == {("fix-login", 2)}
        assert all(line.author.startswith("agent (") for line in agent)
        assert not any(line.author.startswith("agent (") for line in users)
        # the gutter says who: the turn for the agent's line, the author for the others
        shown = {line.item: line.text for line in view.lines}
        first_agent = lines.index(agent[0])
        assert " t2 fix-login " in shown[first_agent]
        # enter on a user's line: a note, nothing opens
        app = pilot.app
        await press(pilot, "g", "enter")
        assert isinstance(app.screen, BlameScreen)
        assert any("no session turn wrote it" in n.message for n in app.notes)
        # n moves to the next change of author; on the agent's line the detail names the prompt
        while view.current.origin is None:
            await press(pilot, "n")
        detail = str(screen.query_one("#blame-detail").render())
        assert "turn 2 of fix-login" in detail and "enter opens the turn" in detail
        await press(pilot, "enter")
        assert not isinstance(app.screen, BlameScreen)
        await settle(pilot)
        assert app.screen.query_one(TabbedContent).active == "sessions"
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.index == 1  # turn 2


async def test_palette_blame_a_file(app):
    async with app.run_test(size=(140, 40)) as pilot:
        await open_projects(pilot)
        titles = [c.title for c in app.screen.palette_commands()]
        assert "Blame a file…" in titles
        await run_command(pilot, "blame a file")
        assert isinstance(app.screen, AskTextScreen)
        box = app.screen.query_one(Input)
        box.value = "src/auth/middleware.py"
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, BlameScreen)
        report = app.screen.query_one(BlameView).report
        assert report is not None and any(line.origin for line in report.lines)
        await press(pilot, "escape")
        # a path that is not in the project: the screen says so, no crash
        await run_command(pilot, "blame a file")
        app.screen.query_one(Input).value = "no/such/file.py"
        await press(pilot, "enter")
        await settle(pilot)
        assert "git blame failed" in str(app.screen.query_one("#blame-detail").render())


async def test_palette_blame_is_offered_only_on_the_projects_tab(app):
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert "Blame a file…" not in [c.title for c in app.screen.palette_commands()]


async def test_palette_exports_the_session(app, tmp_path: Path):
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        session = app.screen.sessions.session_list.current
        await run_command(pilot, "export this session")
        assert isinstance(app.screen, AskTextScreen)
        box = app.screen.query_one(Input)
        assert box.value.endswith(f"{session.id}.html")  # a default to accept or change
        target = tmp_path / "shared.html"
        box.value = str(target)
        await press(pilot, "enter")
        await settle(pilot)
        page = target.read_text()
        assert page.startswith("<!doctype html>") and "Content-Security-Policy" in page
        assert any(f"Exported to {target}" in n.message for n in app.notes)
        # .json by its suffix; a folder that does not exist is an error note, not a crash
        await run_command(pilot, "export this session")
        app.screen.query_one(Input).value = str(tmp_path / "shared.json")
        await press(pilot, "enter")
        await settle(pilot)
        assert json.loads((tmp_path / "shared.json").read_text())["meta"]["id"] == session.id
        await run_command(pilot, "export this session")
        app.screen.query_one(Input).value = str(tmp_path / "missing" / "x.html")
        await press(pilot, "enter")
        await settle(pilot)
        assert any("Export failed" in n.message and "no such folder" in n.message for n in app.notes)
        # a file the system refuses (here: a name too long): the note names the target, not a temp file
        target = tmp_path / ("x" * 300 + ".html")
        await run_command(pilot, "export this session")
        app.screen.query_one(Input).value = str(target)
        await press(pilot, "enter")
        await settle(pilot)
        assert f"Export failed: {target}: File name too long" in notes(app)
        assert not any(".tmp" in n for n in notes(app))
