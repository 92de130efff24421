"""Search everywhere (ctrl+f): hits as you type over every session's messages and the memory,
shown as plain text, and `enter` opening the replay at the hit's turn with its message selected."""

from __future__ import annotations

from opmem_tui.screens.search import SearchScreen
from opmem_tui.widgets.replay_view import ReplayPane

from .conftest import make_app, press, settle, wait_until
from .memory_sample import distil_sample


def hits_text(screen: SearchScreen) -> str:
    return "\n".join(line.text for line in screen.hits_view.lines)


def status(screen: SearchScreen) -> str:
    return str(screen.query_one("#search-status").render())


async def search(pilot, text: str) -> SearchScreen:
    await settle(pilot)
    await press(pilot, "ctrl+f")
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen)
    screen.input.cursor_blink = False
    await pilot.press(*text)
    await wait_until(
        pilot, lambda: screen.results is not None and screen.results.query == text, f"results for {text!r}"
    )
    await settle(pilot, 1)
    return screen


async def test_a_hit_opens_its_turn_with_the_message_selected(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await search(pilot, "regression")
        hits = screen.results.hits
        index = next(i for i, h in enumerate(hits) if h.session_id == "fix-login" and h.kind == "turn")
        hit = hits[index]
        assert hit.turn == 3
        assert "Fix the login redirect loop · turn 3" in hits_text(screen)
        assert "hit" in status(screen)
        await press(pilot, "down")  # from the box to the hits
        assert screen.hits_view.has_focus
        screen.hits_view.move_to(index)
        await press(pilot, "enter")
        await settle(pilot)
        assert not isinstance(app.screen, SearchScreen)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.turn.number == 3
        assert replay.selected_node is not None and replay.selected_node.id == hit.node_ids[0]


async def test_a_deleted_session_leaves_no_hits(sample_home):
    """A session deleted after the index was built (in the app, by `opmem sessions delete`, by
    hand: the index is not told until its next update) leaves no hit behind whose text cannot be
    shown and whose turn cannot be opened."""
    from .sample_store import fresh_home

    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await search(pilot, "regression")
        assert any(h.session_id == "fix-login" for h in screen.results.hits)
        await press(pilot, "escape")
        fresh_home(sample_home.path).sessions.delete_session("fix-login")
        screen = await search(pilot, "regression")
        assert not any(h.session_id == "fix-login" for h in screen.results.hits)
        assert "Fix the login redirect loop" not in hits_text(screen)


async def test_nothing_found_and_escape(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await search(pilot, "qqzzxxyy")
        assert "Nothing found" in status(screen)
        assert screen.results.hits == ()
        await press(pilot, "escape")
        assert not isinstance(app.screen, SearchScreen)


async def test_typing_on_replaces_the_results(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await search(pilot, "regression")
        await pilot.press(*" qqzzxxyy")
        await wait_until(pilot, lambda: screen.results.query == "regression qqzzxxyy", "the longer query")
        await pilot.press(*["backspace"] * len("regression qqzzxxyy"))
        await wait_until(pilot, lambda: screen.results.query == "", "the box emptied")
        assert screen.hits_view.lines == []


async def test_snippets_are_plain_text_and_memory_records_are_found(sample_home):
    distil_sample(sample_home)
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await search(pilot, "pwned")
        text = hits_text(screen)
        assert "[bold red]pwned[/]" in text and "\x1b" not in text
        await press(pilot, "escape")
        screen = await search(pilot, "printf")
        kinds = {h.kind for h in screen.results.hits}
        assert "entity" in kinds, kinds
        # "session ran printf" is a second key for the tool call it was drawn from, which says so
        assert any(h.kind == "tool" and h.via for h in screen.results.hits), screen.results.hits
        assert "via memory" in hits_text(screen)


async def test_slash_with_the_search_prefix_opens_search_everywhere(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "slash")  # the session filter
        await pilot.press("question_mark", *"regression")
        await settle(pilot)
        status_line = str(app.screen.query_one("#session-status").render())
        assert "enter: search every message for “regression”" in status_line
        assert not isinstance(app.screen, SearchScreen)  # handed over on enter, not per key
        await press(pilot, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
        screen = app.screen
        await wait_until(pilot, lambda: screen.results is not None and screen.results.query == "regression", "results")
        assert any(h.session_id == "fix-login" for h in screen.results.hits)
        await press(pilot, "escape")
        filter_box = app.screen.query_one("#session-filter")
        assert filter_box.value == ""  # the title filter was handed over, not left holding "?"
