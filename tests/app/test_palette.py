"""Command palette: rename, delete (with confirmation), verify, repair, switch theme, keys."""

from __future__ import annotations

from textual.command import CommandPalette

from opmem_tui.screens.confirm import ConfirmScreen
from opmem_tui.screens.keys import KeysScreen
from opmem_tui.screens.rename import RenameScreen
from opmem_tui.widgets.session_list import SessionList

from .conftest import press, settle, wait_until
from .sample_store import fresh_home


async def run_command(pilot, query: str) -> None:
    await pilot.press("ctrl+p")
    await settle(pilot, 1)
    assert isinstance(pilot.app.screen, CommandPalette)
    await pilot.press(*query)
    await palette_hits(pilot, query)
    await pilot.press("enter")
    await settle(pilot)


async def palette_hits(pilot, query: str) -> None:
    """The palette's search (a worker per keystroke) has finished and listed its hits."""
    await settle(pilot, 2)

    def listed() -> bool:
        commands = pilot.app.screen.query_one("CommandList")
        return commands.option_count > 0 and commands.get_option_at_index(0).id != "--no-matches"

    await wait_until(pilot, listed, f"palette hits for {query!r}")


def current_ids(app) -> list[str]:
    return [m.id for m in app.screen.query_one(SessionList).table.rows]


async def test_palette_lists_opmem_commands(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.screen.palette_commands()]
        for title in (
            "Rename session…",
            "Delete session…",
            "Verify store",
            "Repair store",
            "Switch theme…",
            "Show keys",
        ):
            assert title in titles


async def test_rename_session(app, sample_path):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await run_command(pilot, "rename session")
        assert isinstance(app.screen, RenameScreen)
        box = app.screen.query_one("Input")
        assert box.value == "Write the README install section."
        box.value = ""
        await pilot.press(*"Install docs")
        await press(pilot, "enter")
        await settle(pilot)
        assert fresh_home(sample_path).sessions.get_meta("docs").title == "Install docs"
        table = app.screen.query_one(SessionList).table
        assert table.current.id == "docs" and table.current.title == "Install docs"


def test_rename_answers_a_changed_title_with_its_spaces_collapsed():
    from opmem_tui.screens.ask_text import AskTextScreen

    rename = RenameScreen("Install docs")
    assert rename.answer("  Install   the\tdocs ") == "Install the docs"
    assert rename.answer(" Install  docs ") is None and rename.answer("   ") is None  # unchanged, empty
    ask = AskTextScreen("Export")
    assert ask.answer("  ~/out.html ") == "~/out.html" and ask.answer("  ") is None


async def test_rename_cancel_changes_nothing(app, sample_path):
    before = fresh_home(sample_path).sessions.get_meta("docs")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await run_command(pilot, "rename session")
        await press(pilot, "escape")
        assert not isinstance(app.screen, RenameScreen)
        after = fresh_home(sample_path).sessions.get_meta("docs")
        assert (after.title, after.title_source) == (before.title, before.title_source) != (before.title, "user")


async def test_delete_session_asks_first(app, sample_path):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "down")  # many-tools
        await run_command(pilot, "delete session")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "escape")  # no
        assert fresh_home(sample_path).sessions.exists("many-tools")
        await run_command(pilot, "delete session")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        await settle(pilot)
        assert not fresh_home(sample_path).sessions.exists("many-tools")
        assert "many-tools" not in current_ids(app)
        assert len(current_ids(app)) == 4


async def test_verify_and_repair_report(app):
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "verify store")
        await settle(pilot)
        notes = [n for n in app.notes if "sessions checked" in n.message]
        assert notes and "6 sessions checked" in notes[-1].message  # 5 readable and the broken folder
        assert notes[-1].title == "Store problems"  # the broken folder is a problem
        assert "broken-folder" in notes[-1].message
        await run_command(pilot, "repair store")
        await settle(pilot)
        notes = [n for n in app.notes if "sessions checked" in n.message]
        assert len(notes) == 2


async def test_switch_theme_saves_the_choice(app, sample_path):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "opmem-dark"
        await run_command(pilot, "switch theme")
        assert isinstance(app.screen, CommandPalette)  # now the theme picker
        await pilot.press(*"opmem-light")
        await palette_hits(pilot, "opmem-light")
        await press(pilot, "enter")
        await settle(pilot)
        assert app.theme == "opmem-light"
    assert fresh_home(sample_path).config.ui.theme == "opmem-light"


async def test_show_keys_from_palette_and_question_mark(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await run_command(pilot, "show keys")
        assert isinstance(app.screen, KeysScreen)
        await press(pilot, "escape")
        await press(pilot, "question_mark")
        assert isinstance(app.screen, KeysScreen)
        ids = {info.id for info in app.screen.keys}
        assert {"replay.next_turn", "replay.branch", "sessions.filter", "app.quit"} <= ids
