"""Amp threads shaped as public readers of real threads see them (Amp itself is closed source),
written here from their parsers and tests, not copied from a thread:

- kenn-io/agentsview 538600744d1b87614d3746d36a0966c1f2ac1cad internal/parser/amp.go, amp_test.go
  (toolUseID + run.result as text or {output | content | diff, exitCode}, run.error.message,
  cancelled runs, the Anthropic {tool_use_id, content} result, usage.model/timestamp, meta.traces);
- letta-ai/trajectory fd2c2014deb504464db1e40e1a5d8cc879b8a5cd src/adapters/amp/index.ts and
  README.md, built from real ``amp threads export`` output (protocolMessageID, state {type,
  stopReason}, blockState / startTime / finalTime on assistant blocks, tool_use ``complete``,
  env.initial.workingDirectory, trees[].repository.ref, ``info`` messages holding a compaction
  summary).
"""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import age, imported
from .dag_helpers import assert_well_formed

amp = SOURCES["amp"]
TID = "T-019b9d03-62e3-772f-9780-3e637f90eaec"


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def block(kind: str, state: str = "complete", **fields) -> dict:
    return {"type": kind, **fields, "blockState": state}


def thread(*, finished: bool = True) -> dict:
    """A user asks; the reply runs Bash, Read and Edit (one fails, one is cancelled), Amp compacts,
    the last reply is still streaming unless finished."""
    calls = [
        block("thinking", thinking="Check the repo first.", startTime=1767865804000, finalTime=1767865804500),
        block("text", text="Looking.", startTime=1767865804600),
        block("tool_use", id="toolu_bash", name="Bash", input={"cmd": "git status"}, complete=True),
        block("tool_use", id="toolu_read", name="Read", input={"path": "/work/amp/app.py"}, complete=True),
        block("tool_use", id="toolu_edit", name="edit_file", input={"path": "app.py"}, complete=True),
        block("tool_use", id="toolu_fail", name="Bash", input={"cmd": "make"}, complete=True),
        block("tool_use", id="toolu_stop", name="Bash", input={"cmd": "sleep 99"}, complete=True),
        block("tool_use", id="toolu_old", name="glob", input={"pattern": "*.py"}, complete=True),
    ]

    def result(call: str, status: str, **run) -> dict:
        return {"type": "tool_result", "toolUseID": call, "run": {"status": status, **run}}

    last_state = "complete" if finished else "streaming"
    return {
        "v": 57,
        "id": TID,
        "created": 1767865803494,
        "updatedAt": "2026-01-08T09:50:10.000Z",
        "title": "Fix the build",
        "agentMode": "smart",
        "env": {
            "initial": {
                "workingDirectory": "/work/amp/sub",
                "platform": {"os": "linux", "client": "CLI", "clientType": "cli"},
                "trees": [
                    {
                        "displayName": "amp",
                        "uri": "file:///work/amp",
                        "repository": {"type": "git", "url": "https://example.org/amp.git", "ref": "fix-build"},
                    }
                ],
            }
        },
        "meta": {"traces": [{"name": "agent", "startTime": "2026-01-08T09:50:03Z", "endTime": "2026-01-08T09:50:10Z"}]},
        "messages": [
            {
                "role": "user",
                "messageId": 0,
                "protocolMessageID": "p-0",
                "meta": {"sentAt": 1767865803600},
                "content": [{"type": "text", "text": "fix the build"}],
            },
            {
                "role": "assistant",
                "messageId": 1,
                "protocolMessageID": "p-1",
                "state": {"type": "complete", "stopReason": "tool_use"},
                "usage": {"model": "claude-sonnet-4-5", "timestamp": "2026-01-08T09:50:05Z", "inputTokens": 12},
                "content": calls,
            },
            {
                "role": "user",
                "messageId": 2,
                "protocolMessageID": "p-2",
                "content": [
                    result("toolu_bash", "done", result={"output": "clean", "exitCode": 0}),
                    result("toolu_read", "done", result={"content": "print(1)", "absolutePath": "/work/amp/app.py"}),
                    result("toolu_edit", "done", result={"diff": "-a\n+b", "lineRange": [1, 1]}),
                    result("toolu_fail", "error", error={"message": "make: no rule"}),
                    result("toolu_stop", "cancelled"),
                    {"type": "tool_result", "tool_use_id": "toolu_old", "content": "app.py"},
                ],
            },
            {
                "role": "info",
                "messageId": 3,
                "protocolMessageID": "p-3",
                "content": [{"type": "summary", "summary": {"type": "message", "summary": "Build fixed so far."}}],
            },
            {
                "role": "assistant",
                "messageId": 4,
                "protocolMessageID": "p-4",
                "state": {"type": last_state, "stopReason": "end_turn"} if finished else {"type": last_state},
                "usage": {"model": "claude-sonnet-4-5", "timestamp": "2026-01-08T09:50:10Z"},
                "content": [block("text", "complete" if finished else "streaming", text="Fixed.")],
            },
        ],
    }


def test_a_thread_shaped_like_amps(tmp_path: Path, home) -> None:
    path = write(tmp_path / "amp" / "threads" / f"{TID}.json", thread())
    report = ImportReport()
    [s] = amp.parse_file(path, report, final=True)
    assert (report.warnings, report.unknown_records) == ([], {})
    assert (s.title, s.cwd, s.git_branch, s.model) == (
        "Fix the build",
        "/work/amp/sub",
        "fix-build",
        "claude-sonnet-4-5",
    )
    assert [(n.role, n.name, n.content) for n in s.nodes] == [
        ("user", None, "fix the build"),
        ("assistant", "claude-sonnet-4-5", "Looking."),
        ("tool", "Bash", "clean"),
        ("tool", "Read", "print(1)"),
        ("tool", "edit_file", "-a\n+b"),
        ("tool", "Bash", "make: no rule"),
        ("tool", "Bash", "[cancelled]"),
        ("tool", "glob", "app.py"),
        ("system", None, "Build fixed so far."),
        ("assistant", "claude-sonnet-4-5", "Fixed."),
    ]
    errors = {n.id: dict(n.metadata).get("is_error") for n in s.nodes if n.role == "tool"}
    assert errors == {
        "toolu_bash": None,
        "toolu_read": None,
        "toolu_edit": None,
        "toolu_fail": True,
        "toolu_stop": True,
        "toolu_old": None,
    }
    assert dict(s.nodes[2].metadata)["exit"] == 0
    assert dict(s.nodes[8].metadata) == {"compaction_summary": True}
    assert s.nodes[1].created_at == 1767865804.0  # its first block's startTime
    assert s.nodes[9].created_at == 1767865810.0  # usage.timestamp
    assert dict(s.nodes[1].metadata)["thinking"] == "Check the repo first."
    assert_well_formed(s)
    age(tmp_path)
    assert imported(home, "amp", tmp_path / "amp").nodes == 10


def test_a_reply_still_streaming_is_held_back(tmp_path: Path) -> None:
    path = write(tmp_path / f"{TID}.json", thread(finished=False))
    [s] = amp.parse_file(path, ImportReport(), final=False)
    assert [n.role for n in s.nodes][-1] == "system"  # the streaming reply waits
    data = thread()
    data["messages"][1]["content"][2]["complete"] = False  # a call whose input is still streaming
    write(path, data)
    [s] = amp.parse_file(path, ImportReport(), final=False)
    assert [n.role for n in s.nodes] == ["user"]
    [s] = amp.parse_file(path, ImportReport(), final=True)
    assert len(s.nodes) == 10
