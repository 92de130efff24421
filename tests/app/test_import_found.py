"""The app on an empty store offers what it finds ("Found: Claude Code 1 session, OpenCode 2
sessions — import?"), imports it with progress on a yes; the palette does the same on any store."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.screens.confirm import ConfirmScreen
from opmem_tui.widgets.job_bar import JobBar
from opmem_tui.widgets.session_list import SessionList
from tests.backend.importers.agent_helpers import age
from tests.backend.importers.test_opencode import make_db

from .conftest import make_app, settle, wait_until
from .test_import import claude_session
from .test_palette import run_command


def agents_at_home() -> Path:
    home = Path(os.environ["HOME"])  # the suite's fake HOME
    claude_session(home / ".claude", 1)
    make_db(home / ".local" / "share" / "opencode" / "opencode.db")
    age(home)
    return home


async def test_an_empty_store_offers_the_sessions_found_and_imports_them(tmp_path: Path) -> None:
    agents_at_home()
    app = make_app(Home(tmp_path / "store", durable=False))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the offer")
        assert app.screen.question == "Found: Claude Code 1 session, OpenCode 2 sessions — import?"
        await pilot.press("y")
        await wait_until(pilot, lambda: any(n.title == "Import" for n in app.notes), "the import's report")
        await wait_until(pilot, lambda: not app.screen.query_one(JobBar).has_class("-running"), "the job ended")
        await settle(pilot)
        report = next(n for n in app.notes if n.title == "Import").message
        assert report.splitlines() == ["Claude Code: 1 new session, 1 turn", "OpenCode: 2 new sessions, 3 turns"]
        assert len(app.screen.query_one(SessionList).table.rows) == 3


async def test_no_offer_when_the_store_holds_sessions_or_nothing_is_found(app, tmp_path: Path) -> None:
    agents_at_home()
    async with app.run_test(size=(120, 30)) as pilot:  # the sample store is not empty
        await settle(pilot, 8)
        assert not isinstance(app.screen, ConfirmScreen)
    empty = make_app(Home(tmp_path / "store", durable=False))
    for item in (Path(os.environ["HOME"]) / ".claude", Path(os.environ["HOME"]) / ".local"):
        shutil.rmtree(item)
    async with empty.run_test(size=(120, 30)) as pilot:
        await settle(pilot, 8)
        assert not isinstance(empty.screen, ConfirmScreen)


async def test_the_palette_imports_every_agent_found(app) -> None:
    agents_at_home()
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        before = len(app.screen.query_one(SessionList).table.rows)
        await run_command(pilot, "import every agent")
        await wait_until(pilot, lambda: any(n.title == "Import" for n in app.notes), "the import's report")
        await wait_until(pilot, lambda: not app.screen.query_one(JobBar).has_class("-running"), "the job ended")
        await settle(pilot)
        assert len(app.screen.query_one(SessionList).table.rows) == before + 3
