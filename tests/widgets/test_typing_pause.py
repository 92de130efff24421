"""Search as you type, timed by the keys' own times (widgets/typing_pause.py), driven through the
graph pane's entity finder: keys are posted with the times a test clock gives them, and the
clock, not a sleep, says when a quick run of keys has stopped."""

from __future__ import annotations

import asyncio

from textual import events
from textual.app import App, ComposeResult

from opmem_tui.widgets.graph_explorer import FIND_DEBOUNCE, GraphExplorer

HANG_GUARD = 60.0  # seconds: only a broken widget gets here; nothing is timed by it


class Clock:
    """Key times and `now`, as the test says. Starts near 0: below any real monotonic reading,
    so a Changed event's own (real) time never looks older than the key behind it."""

    def __init__(self) -> None:
        self.now = 1.0

    def __call__(self) -> float:
        return self.now


class FinderApp(App[None]):
    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self.found: list[str] = []
        self.new_find = asyncio.Event()

    def compose(self) -> ComposeResult:
        yield GraphExplorer(clock=self.clock)

    def on_graph_explorer_query_changed(self, message: GraphExplorer.QueryChanged) -> None:
        self.found.append(message.query)
        self.new_find.set()


async def type_key(pilot, explorer: GraphExplorer, char: str, at: float) -> None:
    """A key that arrived at `at` on the test clock; returns once the explorer has handled the
    edit it made (the finder's text is in, and a find ran or is due)."""
    key = events.Key(char, char)
    key.time = at
    finder = explorer.finder
    before = finder.value
    finder.post_message(key)

    async def handled() -> None:
        while finder.value == before or explorer.typing.last_key != at:
            await pilot.pause()

    await asyncio.wait_for(handled(), HANG_GUARD)


async def next_find(app: FinderApp) -> str:
    await asyncio.wait_for(app.new_find.wait(), HANG_GUARD)
    app.new_find.clear()
    return app.found[-1]


async def test_finds_count_from_the_keys_own_time_not_from_when_they_were_handled():
    clock = Clock()
    app = FinderApp(clock)
    async with app.run_test(size=(100, 20)) as pilot:
        explorer = app.query_one(GraphExplorer)
        explorer.finder.focus()

        await type_key(pilot, explorer, "p", at=1.0)  # the first key after a pause: found at once
        assert await next_find(app) == "p"

        # A quick run: each key closer to the last than the pause, handled as it comes.
        clock.now = 1.03
        await type_key(pilot, explorer, "o", at=1.03)
        clock.now = 1.06
        await type_key(pilot, explorer, "r", at=1.06)
        assert app.found == ["p"]  # nothing yet: the run has not stopped on the clock
        assert explorer.typing.due == 1.06 + FIND_DEBOUNCE  # one pause after the last key
        clock.now = 1.06 + FIND_DEBOUNCE
        assert await next_find(app) == "por"  # once, for the whole run
        assert app.found == ["p", "por"]

        # A busy UI: two keys typed 0.5 s apart (a pause between them) are handled late, both
        # at 3.0. The second is the first key after a pause, so it is found at once: counted
        # from when it was handled it would look like part of a quick run and wait a pause more.
        clock.now = 3.0
        await type_key(pilot, explorer, "t", at=2.0)
        assert await next_find(app) == "port"
        await type_key(pilot, explorer, "s", at=2.5)
        assert await next_find(app) == "ports"
        assert explorer.typing.due is None

        # Keys of a quick run handled late: the find is due a pause after the last key was
        # typed (4.14, already past at 5.0, so it runs with the clock standing still), not a
        # pause after it was handled (5.12, which this clock never reaches).
        clock.now = 5.0
        await type_key(pilot, explorer, "x", at=4.0)
        assert await next_find(app) == "portsx"
        await type_key(pilot, explorer, "y", at=4.02)
        assert await next_find(app) == "portsxy"
        assert app.found == ["p", "por", "port", "ports", "portsx", "portsxy"]
