"""The replay pane alone, fed hand-built records: a session shown from its last turn first, then
filled in behind it (what the app does on a cold open)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from opmem_tui.backend.model import Node, SessionMeta, Turn
from opmem_tui.widgets.replay_view import ReplayHeader, ReplayPane

NOW = 1_767_225_600.0
META = SessionMeta(id="s1", title="Three turns", source="codex", created_at=NOW, updated_at=NOW, turn_count=3)


def turn(number: int) -> Turn:
    at = NOW + number * 10
    return Turn(
        number=number,
        nodes=(
            Node(id=f"u{number}", seq=2 * number, role="user", content=f"Question {number}", created_at=at),
            Node(id=f"a{number}", seq=2 * number + 1, role="assistant", content=f"Answer {number}", created_at=at),
        ),
    )


class PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ReplayPane()


def shown(pane: ReplayPane) -> tuple[str, str]:
    header = str(pane.query_one(ReplayHeader).render()).splitlines()[0]
    return header, "\n".join(line.text for line in pane.view.lines)


async def test_last_turn_first_then_the_rest_keeps_the_readers_place():
    app = PaneApp()
    async with app.run_test(size=(100, 24)) as pilot:
        pane = app.query_one(ReplayPane)
        pane.show_session(META, [turn(3)], turn_number=3, total=3)
        await pilot.pause()
        header, text = shown(pane)
        assert "Turn 3 / 3" in header and "Question 3" in text
        assert not pane.complete

        pane.action_prev_turn()  # turn 2 is not loaded yet: the pane says so
        await pilot.pause()
        header, text = shown(pane)
        assert "Turn 2 / 3" in header and text.strip() == "Loading turn 2…"
        assert pane.turn is None

        pane.show_session(META, [turn(1), turn(2), turn(3)])  # the whole session arrives
        await pilot.pause()
        header, text = shown(pane)
        assert pane.complete and pane.index == 1
        assert "Turn 2 / 3" in header and "Question 2" in text
