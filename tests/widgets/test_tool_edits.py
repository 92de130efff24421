"""tool_edits: Edit/MultiEdit/Write and apply_patch (own tool or inside a shell command) as diffs."""

from __future__ import annotations

from opmem_tui.backend.model import Node
from opmem_tui.widgets.tool_edits import MAX_DIFF_LINES, parse_patch, tool_edits

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print("hi")
+    print("hello")
 return 0
*** Add File: docs/new.md
+# New
*** Delete File: old.txt
*** End Patch"""


def tool(name: str, args, **extra) -> Node:
    return Node("t1", 1, "tool", "ok", called_by="a1", name=name, input=args, **extra)


def test_edit_is_a_diff_of_old_and_new():
    (edit,) = tool_edits(
        tool("Edit", {"file_path": "src/a.py", "old_string": "x = 1\ny = 2", "new_string": "x = 1\ny = 3"})
    )
    assert edit.path == "src/a.py" and edit.status == "M"
    assert ("-", "y = 2") in edit.lines and ("+", "y = 3") in edit.lines and (" ", "x = 1") in edit.lines
    assert edit.lines[0][0] == "@" and (edit.additions, edit.deletions) == (1, 1)


def test_multiedit_write_and_unknown_tools():
    multi = tool_edits(
        tool(
            "MultiEdit",
            {
                "file_path": "a.py",
                "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}],
            },
        )
    )
    assert multi[0].additions == 2 and multi[0].deletions == 2
    (write,) = tool_edits(tool("Write", {"file_path": "n.py", "content": "one\ntwo"}))
    assert write.status == "A" and write.lines == (("+", "one"), ("+", "two"))
    assert tool_edits(tool("Read", {"file_path": "a.py"})) == []
    assert tool_edits(tool("Edit", {"file_path": "a.py"})) == []  # nothing to show: not an edit
    assert tool_edits(tool("Edit", "not a mapping")) == []


def test_apply_patch_as_a_tool_and_inside_a_shell_command():
    files = tool_edits(tool("apply_patch", {"input": PATCH}))
    assert [(f.path, f.status) for f in files] == [("src/app.py", "M"), ("docs/new.md", "A"), ("old.txt", "D")]
    assert files[0].lines == (
        ("@", "@@ def main():"),
        ("-", '    print("hi")'),
        ("+", '    print("hello")'),
        (" ", "return 0"),
    )
    shell = tool_edits(tool("shell", {"command": ["bash", "-lc", f"apply_patch <<'PATCH'\n{PATCH}\nPATCH"]}))
    assert [f.path for f in shell] == ["src/app.py", "docs/new.md", "old.txt"]
    assert tool_edits(tool("shell", {"command": ["ls"]})) == []


def test_a_huge_edit_is_cut():
    (write,) = tool_edits(tool("Write", {"file_path": "big.txt", "content": "x\n" * (MAX_DIFF_LINES + 10)}))
    assert len(write.lines) == MAX_DIFF_LINES + 1 and "10 more lines" in write.lines[-1][1]
    assert parse_patch("no patch here") == []
