"""Go to a session or a project from the palette: named as the CLI and recall name them
(backend/naming: id, unique prefix, title or name); a name that fits several, or none, is a
notification naming the candidates, never a traceback."""

from __future__ import annotations

from opmem_tui.screens.ask_text import AskTextScreen
from opmem_tui.tabs.projects import ProjectsTab
from opmem_tui.widgets.session_list import SessionList

from .conftest import notes, press, settle, wait_until
from .test_palette import run_command


async def test_go_to_session_by_title_prefix_and_the_errors(app, sample_home):
    sample_home.sessions.rename_session("docs", "Sweep TODO comments")  # the title of many-tools too
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await run_command(pilot, "go to session")
        assert isinstance(app.screen, AskTextScreen)
        await pilot.press(*"fix the login redirect loop")  # its title, in another case
        await press(pilot, "enter")
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        await wait_until(pilot, lambda: table.current is not None and table.current.id == "fix-login", "fix-login")
        app.screen.go_to_session("many")  # a unique start of an id
        await settle(pilot)
        assert table.current.id == "many-tools"
        before = len(app.notes)
        app.screen.go_to_session("nothing-like-it")
        app.screen.go_to_session("sweep todo comments")
        await settle(pilot)
        said = notes(app)[before:]
        assert len(said) == 2 and "no session 'nothing-like-it'" in said[0], said
        assert "is the title of 2 sessions" in said[1] and "docs" in said[1] and "many-tools" in said[1]
        assert all(note.severity == "error" for note in app.notes[before:])
        assert table.current.id == "many-tools"  # nothing moved


async def test_go_to_project_by_name_or_prefix_and_an_unknown_one(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.screen.go_to_project("comp")  # the start of the name "compiler"
        await settle(pilot)
        assert app.screen.active_tab == "projects"
        tab = app.screen.query_one(ProjectsTab)
        await wait_until(pilot, lambda: tab.project_list.current is not None, "a project listed")
        assert tab.project_list.current.name == "compiler"
        app.screen.go_to_project("webapp")
        await settle(pilot)
        assert tab.project_list.current.name == "webapp"
        before = len(app.notes)
        app.screen.go_to_project("zzz")
        await settle(pilot)
        said = notes(app)[before:]
        assert said == ["no project 'zzz' (by id, name or prefix)"], said
        assert tab.project_list.current.name == "webapp"
