"""Search everywhere in pages: a first page of hits, more as the list is scrolled to its end
(added below, the rows above left in place); searches one at a time, where a query typed over
before its search started is never searched and a stale answer never replaces a newer one."""

from __future__ import annotations

import threading

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.search import MAX_K
from opmem_tui.backend.model import OpmemError
from opmem_tui.newest_request import SearchRequest
from opmem_tui.screens.search import FIRST_PAGE, MORE_PAGE, SearchScreen
from opmem_tui.widgets.replay_view import ReplayPane

from .conftest import make_app, press, settle, wait_until
from .test_search_everywhere import hits_text, search, status

NEEDLES = 70  # turns whose question holds the word searched for: a few pages of hits
FILLER = " ".join(f"filler{i}" for i in range(60))  # long enough for two snippet lines a hit


@pytest.fixture
def needle_home(tmp_path):
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    at = 1_767_000_000.0
    with home.sessions.batch("needles") as batch:
        parent = None
        for turn in range(NEEDLES):
            user = batch.append(
                "user", f"question {turn}: where is the needle {turn}? {FILLER}", parent_id=parent, created_at=at
            )
            reply = batch.append("assistant", f"answer {turn} without it", parent_id=user.id, created_at=at + 5)
            parent = reply.id
            batch.commit_turn()
            at += 60
    return home


def pointers(hits) -> list[tuple[str, tuple[str, ...]]]:
    return [(h.session_id, h.node_ids) for h in hits]


async def test_more_hits_arrive_as_the_list_is_scrolled_to_its_end(needle_home):
    expected = Home(needle_home.path).search("needle", k=200)  # the backend alone, best first
    assert FIRST_PAGE + MORE_PAGE < len(expected) < MAX_K  # a few pages, not cut by the backend
    app = make_app(needle_home)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await search(pilot, "needle")
        assert pointers(screen.results.hits) == pointers(expected[:FIRST_PAGE])
        assert not screen.complete and "more as you scroll" in status(screen)
        first_lines = list(screen.hits_view.lines)

        await press(pilot, "down", "end")  # into the hits, to the last one on the first page
        assert screen.hits_view.selected_item == FIRST_PAGE - 1
        more = FIRST_PAGE + MORE_PAGE
        await wait_until(pilot, lambda: len(screen.results.hits) == more, "the second page")
        assert pointers(screen.results.hits) == pointers(expected[:more])
        assert screen.hits_view.lines[: len(first_lines)] == first_lines  # added below, rows above kept
        assert screen.hits_view.selected_item == FIRST_PAGE - 1  # the cursor stays on its hit

        while not screen.complete:
            count = len(screen.results.hits)
            await press(pilot, "end")
            await wait_until(pilot, lambda n=count: screen.complete or len(screen.results.hits) > n, "another page")
        assert pointers(screen.results.hits) == pointers(expected)
        assert status(screen).startswith(f"{len(expected)} hits")

        last = len(expected) - 3  # a hit of the last page opens its turn
        hit = screen.results.hits[last]
        screen.hits_view.move_to(last)
        await press(pilot, "enter")
        await settle(pilot)
        assert not isinstance(app.screen, SearchScreen)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "needles" and replay.turn.number == hit.turn
        assert replay.selected_node is not None and replay.selected_node.id == hit.node_ids[0]
        loop = screen._loop
        await wait_until(pilot, lambda: loop is not None and loop.is_finished, "the search thread ends with its screen")


async def test_a_page_that_does_not_fill_the_view_is_followed_by_the_next_at_once(needle_home):
    app = make_app(needle_home)
    async with app.run_test(size=(120, 120)) as pilot:
        screen = await search(pilot, "needle")
        await wait_until(pilot, lambda: len(screen.results.hits) > FIRST_PAGE, "the next page, unasked")
        assert "needle" in hits_text(screen)


async def test_a_query_typed_over_is_never_searched_and_a_stale_answer_never_shown(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+f")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        screen.input.cursor_blink = False
        memory = app.data.memory
        real_search = memory.search
        release = threading.Event()
        searched: list[str] = []
        shown: list[str] = []

        def held_search(query, limit):
            searched.append(query)
            assert release.wait(60), "the test never let the search go on"
            return real_search(query, limit)

        real_show = screen._show

        def recorded_show(results, limit):
            shown.append(results.query)
            real_show(results, limit)

        memory.search = held_search  # the real search, held until the test lets it go
        screen._show = recorded_show
        await pilot.press("r")
        await wait_until(pilot, lambda: searched == ["r"], "the first key's search under way")
        await pilot.press(*"egression")  # typed while that search still runs
        await wait_until(pilot, lambda: screen.requests.query == "regression", "the whole query handed over")
        release.set()
        await wait_until(
            pilot, lambda: screen.results is not None and screen.results.query == "regression", "the newest hits"
        )
        await settle(pilot)
        assert searched == ["r", "regression"]  # "re", "reg"... were typed over before they ran
        assert shown == ["regression"]  # the answer for "r" came back stale: never drawn
        assert "Fix the login redirect loop" in hits_text(screen)


async def test_a_page_that_fails_after_the_query_was_typed_over_leaves_the_newer_search_under_way(needle_home):
    """What the screen waits for has one record, the request slot: a failure of a request typed
    over neither claims the screen's status nor ends the newer search's wait."""
    app = make_app(needle_home)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await search(pilot, "needle")
        memory = app.data.memory
        real_search = memory.search
        page_asked = threading.Event()
        release_page = threading.Event()
        release_newer = threading.Event()
        searched: list[tuple[str, int]] = []

        def held_search(query, limit):
            searched.append((query, limit))
            if query == "needle":  # the next page of the hits on screen: held, then it fails
                page_asked.set()
                assert release_page.wait(60), "the test never let the page go on"
                raise OpmemError("index.sqlite: database is locked")
            assert release_newer.wait(60), "the test never let the newer search go on"
            return real_search(query, limit)

        memory.search = held_search
        await press(pilot, "down", "end")  # to the end of the first page: the next one is asked for
        await wait_until(pilot, page_asked.is_set, "the next page under way")
        assert screen.asking == FIRST_PAGE + MORE_PAGE
        screen.input.focus()
        await wait_until(pilot, lambda: app.focused is screen.input, "back in the search box")
        await pilot.press("end", "s")  # "needles", typed while the page's search runs
        await wait_until(pilot, lambda: screen.asking == FIRST_PAGE, "the newer search handed over")
        assert screen.requests.awaited == SearchRequest("needles", FIRST_PAGE)
        release_page.set()
        # The thread reports the failure (on the UI thread, waiting for it) before it takes the
        # newer request: once that is taken, the failure has been handled.
        await wait_until(pilot, lambda: ("needles", FIRST_PAGE) in searched, "the newer search started")
        assert screen.requests.awaited == SearchRequest("needles", FIRST_PAGE)  # still waited for
        assert status(screen) == "Searching for “needles”…"  # not "The search failed: …"
        release_newer.set()
        await wait_until(pilot, lambda: screen.results.query == "needles", "the newer hits")
        assert screen.asking == 0 and screen.requests.awaited is None
        assert "needle" in hits_text(screen)
