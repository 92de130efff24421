"""A tool call the user turned down never ran: it is no action, no command, no timeline entry."""

from __future__ import annotations

import pytest

from opmem_tui.backend.distill.extract.tools import rejected
from opmem_tui.backend.home import Home
from opmem_tui.backend.model import Node

from .conftest import Chat, extract_all


def tool(content: str, **metadata) -> Node:
    return Node(id="t", seq=1, role="tool", content=content, name="Bash", input={"command": "make"}, metadata=metadata)


@pytest.mark.parametrize(
    "node",
    [
        tool(
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
            "edit, the new_string was NOT written to the file).",
            is_error=True,
            tool_use_result="User rejected tool use",
        ),
        tool("exec command rejected by user"),
        tool("The user rejected permission to use this specific tool call. You may try again.", status="error"),
        tool("The user denied this operation."),
        tool("[Operation Cancelled] Reason: User did not allow tool call", status="cancelled"),
        tool("", status="rejected"),
    ],
)
def test_turned_down(node: Node):
    assert rejected(node)


@pytest.mark.parametrize(
    "node",
    [
        tool("make: *** [all] Error 2", exit_code=2),
        tool("bash: ./deploy.sh: Permission denied", is_error=True),  # it ran, and failed
        tool("# Notes\n\nLast week the reviewer said the user rejected the first design; we kept the second."),
        tool("ok", status="completed"),
    ],
)
def test_ran(node: Node):
    assert not rejected(node)


def test_a_turned_down_command_is_not_said_to_have_run(home: Home):
    chat = Chat(home, "s1")
    chat.user("deploy it")
    chat.reply("Running the deploy.")
    chat.tool("Bash", {"command": "./deploy.sh --prod"}, "exec command rejected by user", exit_code=1)
    chat.tool("Bash", {"command": "make test"}, "=== 12 passed in 0.4s ===", exit_code=0)
    chat.reply("OK, I ran the tests only.")
    chat.commit()
    [extraction] = extract_all(home).values()
    [facts] = extraction.facts
    assert facts.commands == ("make test",)
    assert "deploy" not in " ".join(e.summary for e in extraction.events if e.kind == "work")
