"""Masked secrets in the widgets: markers drawn in the secret style (plain text, never markup),
and the replay pane's reveal of one message at a time, fed masked turns and their originals the
way the data layer hands them over (opmem_tui/masking.py)."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult
from textual.color import Color

from opmem_tui.backend.model import Node, SessionMeta, Turn
from opmem_tui.masking import NodeMasks
from opmem_tui.widgets.line_view import Line, LineView
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.secret_marks import mark_segments, marked_content, marker_spans

NOW = 1_767_225_600.0
GITHUB = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
AWS = "AKIA" + "ZXCVBNMLKJHGFD45"
MARK = "[secret:github-token#3f9a]"


def test_marker_spans_and_segments_overlay():
    text = f"use {MARK} then [bold]x[/]"
    assert marker_spans(text) == [(4, 4 + len(MARK))]
    assert marker_spans("plain text") == []
    base, secret = Style(color="white"), Style(color="yellow", bold=True)
    # Two segments split inside the marker: both halves of it get the secret style.
    segments = [Segment(text[:10], base), Segment(text[10:], base)]
    out = mark_segments(segments, marker_spans(text), secret)
    assert "".join(s.text for s in out) == text
    styled = "".join(s.text for s in out if s.style and s.style.bold)
    assert styled == MARK
    assert all(s.style.color.name == "white" for s in out if s.text and s.text not in MARK)


def test_marked_content_is_plain_text_with_the_marker_styled():
    content = marked_content(f"title [red]{MARK}[/red]", "bold")
    assert content.plain == f"title [red]{MARK}[/red]"  # markup characters stay as typed
    spans = [(span.start, span.end, str(span.style)) for span in content.spans]
    start = content.plain.index(MARK)
    assert any(s == start and e == start + len(MARK) and "$warning" in style for s, e, style in spans)
    assert marked_content("no marker").plain == "no marker"


class Lines(App[None]):
    def compose(self) -> ComposeResult:
        yield LineView()


async def test_a_line_view_draws_markers_in_the_theme_warning_colour():
    app = Lines()
    async with app.run_test(size=(80, 5)) as pilot:
        view = app.query_one(LineView)
        view.set_lines([Line(f"token {MARK} here", "x", 0)])
        await pilot.pause()
        strip = view.render_line(0)
        marked = [s for s in strip if s.text == MARK]
        plain = [s for s in strip if s.text.startswith("token")]
        assert marked and plain
        warning = Color.parse(app.current_theme.warning)
        drawn = marked[0].style.color.triplet
        assert max(abs(a - b) for a, b in zip(drawn, warning.rgb, strict=True)) <= 2  # the theme's (blended) warning
        assert marked[0].style.bold
        assert plain[0].style.color != marked[0].style.color


def secret_turn() -> tuple[Turn, dict[str, Node]]:
    """Turn 1 as the data layer hands it over: masked, and the originals of its secret messages."""
    nodes = (
        Node(id="u1", seq=1, role="user", content=f"deploy with {GITHUB}", created_at=NOW),
        Node(id="a1", seq=2, role="assistant", content=f"key {AWS} set", created_at=NOW + 1),
        Node(id="t1", seq=3, role="tool", name="bash", called_by="a1", input={"command": f"echo {GITHUB}"}),
    )
    masked = NodeMasks().turns("s1", [Turn(number=1, nodes=nodes)])
    return masked.turns[0], masked.originals


class PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ReplayPane()


def pane_text(pane: ReplayPane) -> str:
    return "\n".join(line.text for line in pane.view.lines)


async def test_the_pane_reveals_only_the_selected_message_and_only_until_the_cursor_moves():
    masked, originals = secret_turn()
    assert set(originals) == {"u1", "a1", "t1"}
    plain = Turn(number=2, nodes=(Node(id="u2", seq=4, role="user", content="thanks", created_at=NOW + 9),))
    meta = SessionMeta(id="s1", title="t", turn_count=2)
    app = PaneApp()
    async with app.run_test(size=(100, 30)) as pilot:
        pane = app.query_one(ReplayPane)
        pane.show_session(meta, [masked, plain], turn_number=1, originals=originals)
        await pilot.pause()
        assert GITHUB not in pane_text(pane) and AWS not in pane_text(pane)
        pane.action_reveal()
        assert GITHUB in pane_text(pane) and AWS not in pane_text(pane)
        assert pane_text(pane).count(GITHUB) == 1  # the user message; the tool call stays masked
        pane.action_next_message()
        assert GITHUB not in pane_text(pane)
        pane.action_reveal()
        assert AWS in pane_text(pane) and GITHUB not in pane_text(pane)
        pane.view.select_item(2)  # a click on the tool call
        assert AWS not in pane_text(pane)
        pane.action_reveal()
        assert GITHUB in pane_text(pane)
        # The same session reloaded (it grew): the reveal stays on its message.
        pane.show_session(meta, [masked, plain], originals=originals)
        assert pane.revealed == "t1" and GITHUB in pane_text(pane)
        pane.action_next_turn()
        assert pane.revealed is None
        pane.action_reveal()
        assert pane.revealed is None
        # Another session: nothing revealed, nothing to reveal from the last one.
        pane.action_prev_turn()
        pane.action_reveal()
        pane.show_session(SessionMeta(id="s2", title="other"), [plain], originals={})
        assert pane.revealed is None and not pane.originals
