"""build_turn_lines and helpers, fed hand-built model records (no store, no app)."""

from __future__ import annotations

from opmem_tui.backend.model import Node, Turn
from opmem_tui.widgets.turn_lines import abbreviate_path, build_turn_lines, node_text


def node(i, role, content="", **kw) -> Node:
    return Node(id=f"n{i}", seq=i, role=role, content=content, created_at=1_700_000_000 + i, **kw)


def sample_turn() -> Turn:
    return Turn(
        number=1,
        nodes=(
            node(0, "user", "Find the bug"),
            node(1, "assistant", "Looking.", name="model-x", metadata={"thinking": "hmm, the parser"}),
            node(
                2,
                "tool",
                "line 1\nline 2\nline 3",
                parent_id="n1",
                called_by="n1",
                name="grep",
                input={"pattern": "bug"},
            ),
            node(3, "assistant", "", parent_id="n1"),
        ),
    )


def texts(render) -> list[str]:
    return [line.text for line in render.lines]


def test_collapsed_tool_call_shows_name_args_and_size():
    render = build_turn_lines(sample_turn(), 80)
    text = "\n".join(texts(render))
    assert '▸ ⚙ grep  {"pattern": "bug"}' in text
    assert "result: 3 lines, 20 chars  (enter expands)" in text
    assert "line 2" not in text
    assert "∴ thinking hidden" in text and "hmm, the parser" not in text
    assert "(empty)" in text  # an assistant node with no text says so
    assert render.nodes[2].name == "grep"
    assert {line.item for line in render.lines if "grep" in line.text} == {2}


def test_expanded_result_and_thinking():
    render = build_turn_lines(sample_turn(), 80, expanded={"n2"}, show_thinking=True)
    text = texts(render)
    assert "line 2" in text and '"pattern": "bug"' in "\n".join(text)
    assert "hmm, the parser" in text
    assert all(line.item == 2 for line in render.lines if line.text in ("line 1", "line 2", "line 3"))


def test_lines_fit_the_width():
    long = Turn(number=1, nodes=(node(0, "user", "word " * 400),))
    render = build_turn_lines(long, 40)
    assert all(len(line.text) + line.indent <= 40 for line in render.lines)


def test_node_text_for_copy():
    turn = sample_turn()
    assert node_text(turn.nodes[0]) == "Find the bug"
    assert node_text(turn.nodes[2]).startswith('grep {\n  "pattern": "bug"\n}\n\nline 1')


def test_abbreviate_path(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", "/home/dana")
    assert abbreviate_path("/home/dana/src/app") == "~/src/app"
    short = abbreviate_path("/srv/a/very/deep/folder/structure/with/project/app", 24)
    assert short.endswith("project/app") and "…" in short and len(short) <= 24


def test_model_name_from_metadata_and_final_newline_not_counted():
    turn = Turn(
        number=1,
        nodes=(
            node(0, "user", "q"),
            node(1, "assistant", "a", metadata={"model": "claude-sonnet-4-5"}),
            node(2, "tool", "def parse(p):\n    return p\n", parent_id="n1", called_by="n1", name="Read"),
        ),
    )
    text = texts(build_turn_lines(turn, 80))
    assert any(line.startswith("▌ assistant · claude-sonnet-4-5 · ") for line in text)
    assert "result: 2 lines, 26 chars  (enter expands)" in text
    expanded = texts(build_turn_lines(turn, 80, expanded={"n2"}))
    assert expanded[-1] == "    return p"  # no empty line after the output


def test_labels_fit_a_narrow_pane():
    render = build_turn_lines(sample_turn(), 40)
    assert all(len(line.text) + line.indent <= 40 for line in render.lines)
    text = texts(render)
    assert "result: 3 lines, 20 chars" in text  # the hint is dropped before the size
    assert "∴ thinking hidden (t shows it)" in text
