"""Projects tab: list, commit log (paged), agent marks and turn links, diff, jump to the turn."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import TabbedContent

from opmem_tui import data
from opmem_tui.backend.home import Home
from opmem_tui.widgets.commit_log import CommitLog
from opmem_tui.widgets.diff_view import DiffView
from opmem_tui.widgets.messages import MoreCommitsWanted
from opmem_tui.widgets.project_list import ProjectList
from opmem_tui.widgets.projects_pane import NO_PROJECTS
from opmem_tui.widgets.replay_view import ReplayHeader, ReplayPane

from .conftest import make_app, press, settle
from .sample_store import build_sample_store


def diff_text(app) -> str:
    return "\n".join(line.text for line in app.screen.query_one(DiffView).lines)


async def open_projects(pilot) -> None:
    await settle(pilot)
    await press(pilot, "2")
    await settle(pilot)


async def test_projects_with_status_counts_and_commits(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await open_projects(pilot)
        projects = app.screen.query_one(ProjectList)
        assert [(p.name, p.status, len(p.sessions)) for p in projects.projects] == [
            ("webapp", "active", 2),
            ("compiler", "paused", 1),
        ]
        log = app.screen.query_one(CommitLog)
        assert [c.summary for c in log.commits] == [
            "Changelog for the login fix",
            "[agent fix-login] turn 2: Run the tests after your fix.",
            "Write a README",
            "Add login middleware",
        ]
        agent = log.commits[1]
        assert agent.is_agent and not log.commits[0].is_agent
        link = log.link_for(agent)
        assert (link.session_id, link.turn) == ("fix-login", 2)
        row = [str(cell) for cell in log.get_row_at(1)]
        assert row[2].startswith("● claude-so") and "turn 2 · Fix the lo" in row[3]
        assert "A CHANGELOG.md  +1 −0" in diff_text(app)


async def test_cursor_updates_the_diff(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await open_projects(pilot)
        log = app.screen.query_one(CommitLog)
        log.focus()
        await press(pilot, "down")
        text = diff_text(app)
        assert "M src/auth/middleware.py  +1 −1" in text
        assert "+    if request.path != '/login' and not request.session.get('user'):" in text
        assert "-    if not request.session.get('user'):" in text
        lines = app.screen.query_one(DiffView).lines
        assert {line.style for line in lines} >= {"file", "hunk", "add", "del", "ctx", "commit"}


async def test_diff_code_is_highlighted_by_language(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await open_projects(pilot)
        app.screen.query_one(CommitLog).focus()
        await press(pilot, "down")
        view = app.screen.query_one(DiffView)
        line = next(line for line in view.lines if line.style == "add" and "def" not in line.text and "if" in line.text)
        segments = view.line_segments(line, view._style("add"), Style())
        keyword = [s for s in segments if s.text == "if"]
        plain = [s for s in segments if s.text.strip() == "request"]
        assert keyword and plain and keyword[0].style.color != plain[0].style.color


async def test_enter_on_a_linked_commit_opens_the_turn(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await open_projects(pilot)
        app.screen.query_one(CommitLog).focus()
        await press(pilot, "down", "enter")
        assert app.screen.query_one(TabbedContent).active == "sessions"
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.index == 1
        header = str(replay.query_one(ReplayHeader).render())
        assert "claude-code · ◆ webapp  ~/projects/webapp · 2025-12-30 00:10" in header.splitlines()[2]


async def test_enter_on_an_unlinked_commit_only_notifies(app):
    async with app.run_test(size=(140, 36), notifications=True) as pilot:
        await open_projects(pilot)
        app.screen.query_one(CommitLog).focus()
        await press(pilot, "enter")
        assert app.screen.query_one(TabbedContent).active == "projects"
        assert any("not linked" in n.message for n in app.notes)


async def test_commit_log_loads_pages_until_the_view_is_full(app, monkeypatch):
    monkeypatch.setattr(data, "COMMIT_PAGE", 2)
    wanted: dict[int, int] = {}  # the hook sees each bubbling hop; keep one entry per message
    hook = lambda m: wanted.setdefault(id(m), m.loaded) if isinstance(m, MoreCommitsWanted) else None  # noqa: E731
    async with app.run_test(size=(140, 36), message_hook=hook) as pilot:
        await open_projects(pilot)
        log = app.screen.query_one(CommitLog)
        # Two rows do not fill the pane, so the next pages were asked for, one at a time.
        assert list(wanted.values())[:2] == [2, 4]
        assert [c.summary for c in log.commits][2:] == ["Write a README", "Add login middleware"]
        assert log.complete
        assert "4 commits loaded" in str(app.screen.query_one("#commit-status").render())


async def test_switching_project_shows_its_log(app):
    async with app.run_test(size=(140, 36)) as pilot:
        await open_projects(pilot)
        await press(pilot, "down")  # the project list has the focus
        log = app.screen.query_one(CommitLog)
        assert [c.summary for c in log.commits] == ["Tokenizer in its own module"]
        assert "A tokenizer.py" in diff_text(app)


async def test_no_projects_says_so(tmp_path):
    build_sample_store(tmp_path / "plain")  # sessions, no bound project
    app = make_app(Home(tmp_path / "plain", durable=False))
    async with app.run_test(size=(140, 36)) as pilot:
        await open_projects(pilot)
        empty = app.screen.query_one("#project-empty")
        assert empty.display and NO_PROJECTS in str(empty.render())


async def test_a_listing_that_arrives_before_the_projects_tab_is_composed_waits_for_it(app):
    from opmem_tui.tabs.projects import ProjectsTab

    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        view = app.screen.sessions.listing_view
        await app.screen.query_one(ProjectsTab).remove()
        tab = ProjectsTab(now=app.now)
        app.screen.query_one("TabPane#projects").mount(tab)  # not awaited: no children yet
        tab.set_listing(view)
        await settle(pilot)
        assert [p.name for p in tab.project_list.projects] == ["webapp", "compiler"]
