"""Keymap overrides from config, and diff lines from hand-built commit records."""

from __future__ import annotations

from opmem_tui.backend.projects.records import CommitDetail, CommitInfo, DiffLine, FileDiff, Hunk
from opmem_tui.keymap import default_bindings, effective_bindings, load_overrides
from opmem_tui.widgets.diff_view import diff_lines, lexer_for


def test_every_binding_id_is_unique_and_known():
    table = default_bindings()
    assert {
        "replay.next_turn",
        "replay.prev_turn",
        "replay.branch",
        "replay.copy",
        "sessions.filter",
        "sessions.sort",
        "app.keys",
        "app.quit",
        "commits.open_turn",
    } <= set(table)
    assert table["replay.next_turn"].default == "right,l"


def test_overrides_are_checked():
    known = default_bindings()
    overrides, problems = load_overrides(
        {"replay.next_turn": "n, ctrl+n", "replay.copy": ["c", "y"], "nope": "x", "replay.branch": 3, "app.quit": "  "},
        known,
    )
    assert overrides == {"replay.next_turn": "n,ctrl+n", "replay.copy": "c,y"}
    assert len(problems) == 3 and any("'nope'" in p for p in problems)
    shown = {info.id: info.keys for info in effective_bindings(overrides)}
    assert shown["replay.next_turn"] == "n,ctrl+n" and shown["replay.prev_turn"] == "left,h"


def test_diff_lines_from_a_commit_detail():
    info = CommitInfo(
        oid="a" * 40,
        summary="Fix it",
        message="Fix it\n\nBody \x1b[2J text",
        author_name="Dana",
        author_email="d@e",
        time=1_700_000_000.0,
        offset=0,
    )
    hunk = Hunk(
        "@@ -1,2 +1,2 @@",
        1,
        2,
        1,
        2,
        (
            DiffLine(" ", "def f():\n", 1, 1),
            DiffLine("-", "    return 1\n", 2, -1),
            DiffLine("+", "    return 2\n", -1, 2),
        ),
    )
    detail = CommitDetail(
        info,
        (
            FileDiff("src/a.py", "src/a.py", "M", 1, 1, False, (hunk,)),
            FileDiff("img.png", "img.png", "A", 0, 0, True, ()),
        ),
    )
    lines, paths = diff_lines(detail, 80)
    styles = [(line.style, line.text) for line in lines]
    assert ("file", "M src/a.py  +1 −1") in styles
    assert ("del", "-    return 1") in styles and ("add", "+    return 2") in styles
    assert ("ctx", " def f():") in styles
    assert any(text == "binary file" for _, text in styles)
    assert all("\x1b" not in text for _, text in styles)
    assert paths == ["src/a.py", "img.png"]
    assert lexer_for("src/a.py") is not None and lexer_for("README.unknownext") is None
