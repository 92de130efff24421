import json

from opmem_tui.backend.model import Node
from opmem_tui.backend.projects.tool_paths import (
    git_commit_texts,
    is_git_commit_call,
    patch_paths,
    tool_written_paths,
)

from .project_repo_helpers import TurnBuilder

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@
-old
+new
*** Add File: docs/new.md
+hello
*** Delete File: old.txt
*** Update File: lib/a.py
*** Move to: lib/b.py
@@
-x
+y
*** End Patch"""


def test_claude_code_writers_and_readers():
    t = TurnBuilder("change things")
    t.tool("Write", {"file_path": "/p/a.py", "content": "x"})
    t.tool("Edit", {"file_path": "/p/b.py", "old_string": "a", "new_string": "b"})
    t.tool("MultiEdit", {"file_path": "/p/c.py", "edits": [{"old_string": "a", "new_string": "b"}]})
    t.tool("NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "print(1)"})
    t.tool("Read", {"file_path": "/p/read-only.py"})
    t.tool("Grep", {"pattern": "x", "path": "/p"})
    t.tool("Glob", {"pattern": "*.py", "path": "/p"})
    t.tool("TodoWrite", {"todos": [{"content": "x", "status": "pending"}]})
    t.tool("Bash", {"command": "echo hi > /p/shell.txt"})
    assert tool_written_paths(t.nodes) == ("/p/a.py", "/p/b.py", "/p/c.py", "/p/n.ipynb")


def test_codex_apply_patch_forms():
    t = TurnBuilder("patch it")
    t.tool("apply_patch", PATCH)  # freeform custom tool call: the input is the patch text
    assert tool_written_paths(t.nodes) == ("src/app.py", "docs/new.md", "old.txt", "lib/a.py", "lib/b.py")

    t = TurnBuilder("patch via shell")
    cmd = {"command": ["bash", "-lc", f"apply_patch <<'PATCH'\n{PATCH}\nPATCH"], "workdir": "/repo"}
    t.tool("shell", json.dumps(cmd))  # function_call arguments arrive as a JSON string
    assert tool_written_paths(t.nodes)[:2] == ("/repo/src/app.py", "/repo/docs/new.md")

    assert patch_paths("*** Add File: a b.txt  \n") == ["a b.txt"]


def test_generic_writers_and_editor_commands():
    t = TurnBuilder("misc")
    t.tool("write_file", {"path": "out/x.txt", "content": "x"})
    t.tool("mcp__filesystem__edit_file", {"path": "/abs/y.txt", "edits": []})
    t.tool("replace", {"file_path": "z.txt", "old_string": "a", "new_string": "b"})
    t.tool("str_replace_based_edit_tool", {"command": "view", "path": "viewed.txt"})
    t.tool("str_replace_based_edit_tool", {"command": "create", "path": "created.txt", "file_text": "x"})
    t.tool("read_file", {"path": "r.txt"})
    t.tool("save", {"filename": "s.txt"})
    assert tool_written_paths(t.nodes) == ("out/x.txt", "/abs/y.txt", "z.txt", "created.txt", "s.txt")


def test_only_tool_nodes_count_and_duplicates_collapse():
    user = Node(id="u", seq=1, role="user", content="*** Add File: not-a-tool.txt", input=None)
    assistant = Node(id="a", seq=2, role="assistant", name="Write", input={"file_path": "x"})
    tool = Node(id="t", seq=3, role="tool", name="Edit", input={"file_path": "same.py"}, called_by="a")
    again = Node(id="t2", seq=4, role="tool", name="Write", input={"file_path": "same.py"}, called_by="a")
    assert tool_written_paths([user, assistant, tool, again]) == ("same.py",)


def test_git_commit_calls():
    t = TurnBuilder("commit")
    log = t.tool("Bash", {"command": "git log --oneline -3"}, "abc1234 something")
    commit = t.tool("Bash", {"command": "git add -A && git commit -m 'Fix parser'"}, "[main 1a2b3c4] Fix parser")
    c_flag = t.tool("Bash", {"command": "git -C /repo -c user.name=x commit -am wip"}, "[main 9f9f9f9] wip")
    codex = t.tool("shell", {"command": ["bash", "-lc", "git commit -m 'Codex change'"]}, "[dev 0011223] Codex change")
    assert not is_git_commit_call(log)
    assert all(is_git_commit_call(n) for n in (commit, c_flag, codex))
    assert not is_git_commit_call(t.user)
    texts = git_commit_texts(t.nodes)
    assert "[main 1a2b3c4] Fix parser" in texts and "abc1234 something" not in texts
