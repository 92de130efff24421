"""Replay polish: injected context collapsed to one line (enter opens it), a reply that only calls
tools without "(empty)", a file edit as a diff coloured by its language (J: the JSON)."""

from __future__ import annotations

from opmem_tui.backend.model import Node, Turn
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.turn_lines import build_turn_lines

AGENTS = "# AGENTS.md instructions for /repo\n\n" + "Use tabs. Run the tests.\n" * 200
EDIT = {"file_path": "src/app.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}


def turn() -> Turn:
    return Turn(
        1,
        (
            Node("s1", 0, "system", AGENTS, metadata={"injected": True}),
            Node("s2", 1, "system", "<command-name>/clear</command-name>", metadata={"kind": "command"}),
            Node("u1", 2, "user", "Bump x."),
            Node("a1", 3, "assistant", "", parent_id="u1", name="claude-sonnet-4"),
            Node("t1", 4, "tool", "ok", called_by="a1", name="Edit", input=EDIT),
        ),
    )


def texts(render) -> list[str]:
    return [line.text for line in render.lines]


def test_injected_context_is_one_line_until_opened():
    render = build_turn_lines(turn(), 100)
    lines = texts(render)
    assert lines[0] == f"▸ system · injected context · {len(AGENTS.strip()) / 1000:.1f}k chars"
    assert not any("Use tabs" in text for text in lines)
    assert "▌ system · command · <command-name>/clear</command-name>" in lines  # short: whole
    opened = texts(build_turn_lines(turn(), 100, expanded={"s1"}))
    assert opened[0].startswith("▾ system · injected context") and "Use tabs. Run the tests." in opened


def test_a_reply_that_only_calls_tools_has_no_empty_placeholder():
    lines = texts(build_turn_lines(turn(), 100))
    header = next(i for i, text in enumerate(lines) if text.startswith("▌ assistant"))
    assert "(empty)" not in lines
    assert lines[header + 1].startswith("▸ ✎ Edit  src/app.py +1 −1")


def test_an_edit_is_a_diff_and_its_json_is_one_key_away():
    render = build_turn_lines(turn(), 100, expanded={"t1"})
    lines = texts(render)
    assert "M src/app.py +1 −1" in lines and "-x = 1" in lines and "+x = 2" in lines
    added = next(line for line in render.lines if line.text == "+x = 2")
    assert added.style == "add" and render.code_paths[id(added)] == "src/app.py"
    raw = texts(build_turn_lines(turn(), 100, expanded={"t1"}, raw={"t1"}))
    assert any('"old_string": "x = 1\\n"' in text for text in raw) and "+x = 2" not in raw


async def test_enter_opens_injected_context_and_j_toggles_the_json():
    from textual.app import App, ComposeResult

    from opmem_tui.backend.model import SessionMeta

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ReplayPane()

    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        pane = app.query_one(ReplayPane)
        pane.show_session(SessionMeta(id="s", title="t"), [turn()], turn_number=1)
        await pilot.pause()
        pane.select(0)
        pane.action_toggle_item()
        assert "s1" in pane.expanded and any("Use tabs" in line.text for line in pane.view.lines)
        pane.select(4)
        pane.action_toggle_raw()
        assert "t1" in pane.raw and "t1" in pane.expanded
        assert any('"new_string"' in line.text for line in pane.view.lines)
        pane.action_toggle_raw()
        assert any(line.text == "+x = 2" for line in pane.view.lines)
        # the diff's code is coloured by the file's language (x, =, 2), once the cursor is elsewhere
        pane.select(2)
        view = pane.view
        index = next(i for i, line in enumerate(view.lines) if line.text == "+x = 2")
        view.scroll_to(y=max(0, index - 2), animate=False, immediate=True)
        await pilot.pause()
        strip = view.render_line(index - round(view.scroll_y))
        assert len({segment.style for segment in strip if segment.text.strip()}) > 1
