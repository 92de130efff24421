"""What a turn's own writes make of each file: tool calls replayed on the turn-start content."""

from __future__ import annotations

import json

from opmem_tui.backend.model import Node
from opmem_tui.backend.projects.tool_writes import Opaque, Put, Remove, node_paths, node_writes
from opmem_tui.backend.projects.write_replay import Diverged, Expected, Unknown, replay_writes

from .project_repo_helpers import TurnBuilder

START = {
    "app.py": b"def main():\n    print('hi')\n\n\nif __name__ == '__main__':\n    main()\n",
    "notes.md": b"one\ntwo\nthree\n",
    "crlf.txt": b"alpha\r\nbeta\r\n",
    "bin.dat": b"\xff\xfe\x00binary",
}


def replay(turn: TurnBuilder) -> dict:
    return replay_writes(turn.nodes, relative=lambda p: p.removeprefix("/repo/"), base=START.get)


def test_claude_write_edit_and_multiedit():
    t = TurnBuilder("x")
    t.tool("Write", {"file_path": "/repo/new.py", "content": "x = 1\n"})
    t.tool("Edit", {"file_path": "/repo/notes.md", "old_string": "two", "new_string": "2"})
    t.tool("Edit", {"file_path": "/repo/notes.md", "old_string": "e", "new_string": "E", "replace_all": True})
    t.tool(
        "MultiEdit",
        {
            "file_path": "/repo/app.py",
            "edits": [
                {"old_string": "'hi'", "new_string": "'bye'"},
                {"old_string": "main()\n", "new_string": "run()\n"},
            ],
        },
    )
    got = replay(t)
    assert got["new.py"] == Expected("x = 1\n")
    assert got["notes.md"] == Expected("onE\n2\nthrEE\n")
    assert got["app.py"] == Expected("def main():\n    print('bye')\n\n\nif __name__ == '__main__':\n    run()\n")


def test_an_edit_that_does_not_apply_means_the_file_changed_outside_the_agent():
    t = TurnBuilder("x")
    t.tool("Edit", {"file_path": "/repo/notes.md", "old_string": "four", "new_string": "4"})
    [(path, outcome)] = replay(t).items()
    assert path == "notes.md" and isinstance(outcome, Diverged) and "Edit" in outcome.reason


def test_a_failed_call_changes_nothing_and_a_later_write_is_known_again():
    t = TurnBuilder("x")
    failed = t.tool("Edit", {"file_path": "/repo/notes.md", "old_string": "one", "new_string": "1"})
    object.__setattr__(failed, "metadata", {"is_error": True})
    t.tool("NotebookEdit", {"notebook_path": "/repo/n.ipynb", "new_source": "x"})
    t.tool("Edit", {"file_path": "/repo/notes.md", "old_string": "two", "new_string": "2"})
    got = replay(t)
    assert got["notes.md"] == Expected("one\n2\nthree\n")
    assert isinstance(got["n.ipynb"], Unknown)
    t.tool("Write", {"file_path": "/repo/n.ipynb", "content": "{}"})
    assert replay(t)["n.ipynb"] == Expected("{}")


def test_line_endings_and_binary_start_content():
    t = TurnBuilder("x")
    t.tool("Edit", {"file_path": "/repo/crlf.txt", "old_string": "beta\n", "new_string": "gamma\n"})
    t.tool("Edit", {"file_path": "/repo/bin.dat", "old_string": "binary", "new_string": "text"})
    got = replay(t)
    assert got["crlf.txt"] == Expected("alpha\ngamma\n")
    assert isinstance(got["bin.dat"], Unknown)


def test_codex_apply_patch_update_add_delete_and_move():
    patch = (
        "*** Begin Patch\n"
        "*** Update File: app.py\n"
        "@@ def main():\n"
        "-    print('hi')\n"
        "+    print('patched')\n"
        "@@\n"
        " if __name__ == '__main__':\n"
        "-    main()\n"
        "+    raise SystemExit(main())\n"
        "*** Add File: docs/new.md\n"
        "+# New\n"
        "+\n"
        "+text\n"
        "*** Delete File: crlf.txt\n"
        "*** Update File: notes.md\n"
        "*** Move to: moved.md\n"
        "@@\n"
        " two\n"
        "-three\n"
        "+3\n"
        "*** End of File\n"
        "*** End Patch"
    )
    t = TurnBuilder("x")
    t.tool(
        "shell", json.dumps({"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{patch}\nEOF\n"], "workdir": "/repo"})
    )
    got = replay(t)
    assert got["app.py"] == Expected(
        "def main():\n    print('patched')\n\n\nif __name__ == '__main__':\n    raise SystemExit(main())\n"
    )
    assert got["docs/new.md"] == Expected("# New\n\ntext\n")
    assert got["crlf.txt"] == Expected(None)
    assert got["notes.md"] == Expected(None) and got["moved.md"] == Expected("one\ntwo\n3\n")


def test_a_patch_whose_lines_are_not_in_the_file_diverges():
    t = TurnBuilder("x")
    t.tool("apply_patch", "*** Begin Patch\n*** Update File: notes.md\n@@\n-four\n+4\n*** End Patch")
    assert isinstance(replay(t)["notes.md"], Diverged)


def test_gemini_editor_and_mcp_tools():
    t = TurnBuilder("x")
    t.tool("write_file", {"file_path": "/repo/g.txt", "content": "g\n"})
    t.tool("replace", {"file_path": "/repo/notes.md", "old_string": "o", "new_string": "0", "expected_replacements": 2})
    t.tool("str_replace_based_edit_tool", {"command": "create", "path": "/repo/e.txt", "file_text": "a\nc"})
    t.tool(
        "str_replace_based_edit_tool", {"command": "insert", "path": "/repo/e.txt", "insert_line": 1, "new_str": "b"}
    )
    t.tool(
        "str_replace_based_edit_tool", {"command": "str_replace", "path": "/repo/e.txt", "old_str": "c", "new_str": "d"}
    )
    t.tool("str_replace_based_edit_tool", {"command": "view", "path": "/repo/app.py"})
    t.tool("mcp__filesystem__edit_file", {"path": "/repo/app.py", "edits": [{"oldText": "hi", "newText": "yo"}]})
    t.tool(
        "mcp__filesystem__edit_file",
        {"path": "/repo/g.txt", "edits": [{"oldText": "g", "newText": "x"}], "dryRun": True},
    )
    t.tool("mcp__filesystem__move_file", {"source": "/repo/g.txt", "destination": "/repo/h.txt"})
    got = replay(t)
    assert got["notes.md"] == Expected("0ne\ntw0\nthree\n")
    assert got["e.txt"] == Expected("a\nb\nd")
    assert got["app.py"].text.startswith("def main():\n    print('yo')")
    assert got["g.txt"] == Expected(None) and got["h.txt"] == Expected("g\n")


def test_what_each_call_did():
    tool = Node(id="t", seq=1, role="tool", name="Write", input={"file_path": "a"}, called_by="a0")
    assert [w.effect for w in node_writes(tool)] == [Opaque("the call's arguments do not say what it wrote")]
    tool = Node(id="t", seq=1, role="tool", name="Write", input={"file_path": "a", "content": "x"}, called_by="a0")
    assert [(w.path, w.effect) for w in node_writes(tool)] == [("a", Put("x"))]
    tool = Node(id="t", seq=1, role="tool", name="delete_file", input={"path": "d"}, called_by="a0")
    assert [w.effect for w in node_writes(tool)] == [Remove()]
    assert node_writes(Node(id="u", seq=1, role="user", content="*** Add File: x")) == []


def test_the_cheap_path_list_names_what_the_full_reading_names():
    t = TurnBuilder("x")
    t.tool("Write", {"file_path": "/repo/a.py", "content": "a"})
    t.tool("MultiEdit", {"file_path": "/repo/b.py", "edits": [{"old_string": "a", "new_string": "b"}]})
    t.tool("mcp__filesystem__move_file", {"source": "/repo/c.txt", "destination": "/repo/d.txt"})
    t.tool("batch_edit", {"edits": [{"path": "/repo/e.py", "old_text": "x", "new_text": "y"}]})
    t.tool("apply_patch", "*** Begin Patch\n*** Update File: f.py\n*** Move to: g.py\n@@\n-x\n+y\n*** End Patch")
    t.tool("Read", {"file_path": "/repo/r.py"})
    for node in t.nodes:
        assert node_paths(node) == [w.path for w in node_writes(node)]
    assert [p for n in t.nodes for p in node_paths(n)] == [
        "/repo/a.py",
        "/repo/b.py",
        "/repo/d.txt",
        "/repo/c.txt",
        "/repo/e.py",
        "f.py",
        "g.py",
    ]
