"""Hostile session text shows literally (markup) or stripped (escapes), never interpreted."""

from __future__ import annotations

import io

from rich.console import Console

from opmem_tui.widgets.replay_view import ReplayHeader, ReplayPane
from opmem_tui.widgets.session_list import SessionList

from .conftest import press, settle


def screen_text(app) -> str:
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="truecolor", record=True
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def screen_segments_text(app) -> str:
    """The raw text of every segment the compositor would send, escape bytes included."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=app.size[0])
    return "".join(segment.text for segment in console.render(update))


async def test_hostile_content_renders_literally(app):
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down")  # the hostile session
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "hostile"
        await press(pilot, "enter", "e")  # expand the tool result too
        text = screen_text(app)
        # Markup shows as typed: no style was applied, the brackets are on screen.
        assert "[bold red]pwned[/]" in text  # the title, in the list and the header
        assert "markup [bold red]x[/] and [link=https://evil.example]click[/link]" in text
        assert "tab stays, carriage" in text  # \t expanded, \r\n is a newline
        # Escape sequences are gone from everything drawn.
        raw = screen_segments_text(app)
        for sequence in ("\x1b]52", "\x1b[2J", "\x9b31m", "\x07"):
            assert sequence not in raw
        assert "osc52  clear  bell  and  c1-csi" in text
        for line in replay.view.lines:
            assert not any(ch in line.text for ch in "\x1b\x07\x9b\r")


async def test_hostile_title_is_plain_in_list_and_header(app):
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down")
        header = str(app.screen.query_one(ReplayHeader).render())
        await press(pilot, "up")  # the hostile row is no longer the (bold) cursor row
        table = app.screen.query_one(SessionList).table
        row = table.render_line(2)
        assert "[bold red]pwned[/]" in row.text
        for segment in row:
            assert not segment.style.bold and not segment.style.link
            assert segment.style.color is None or segment.style.color.name != "red"
        assert "[bold red]pwned[/]" in header and "\x1b" not in header


async def test_copy_strips_escape_sequences(app):
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down", "enter", "y")
        assert "[bold red]x[/]" in app.clipboard
        assert "\x1b" not in app.clipboard and "\x07" not in app.clipboard


async def test_unreadable_node_files_are_named_in_a_warning(sample_path):
    from .conftest import make_app
    from .sample_store import fresh_home

    history = sample_path / "sessions" / "many-tools" / "history"
    broken = sorted(history.iterdir())[0]
    broken.write_text("{ not json")
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await press(pilot, "down")  # many-tools: its first node file is corrupt
        warnings = [n.message for n in app.notes if n.severity == "warning" and n.title == "Session"]
        assert warnings and "sessions/many-tools/history/000000-u-many-t0001.json: invalid JSON" in warnings[-1]
        assert "Find every TODO" not in "\n".join(line.text for line in app.screen.query_one(ReplayPane).view.lines)
        await press(pilot, "down")  # the app goes on
        assert app.screen.query_one(ReplayPane).session_id == "hostile"


async def test_backend_exceptions_become_error_notifications(sample_path):
    from .conftest import make_app
    from .sample_store import fresh_home

    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        # The session vanishes between the listing and opening it (another process deleted it
        # and no refresh ran yet): the store raises, the UI says so and goes on.
        fresh_home(sample_path).sessions.delete_session("many-tools")
        await press(pilot, "down")
        errors = [n.message for n in app.notes if n.severity == "error"]
        assert errors and "many-tools" in errors[-1]
        await press(pilot, "down")
        assert app.screen.query_one(ReplayPane).session_id == "hostile"
