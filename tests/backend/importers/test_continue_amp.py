"""Continue.dev sessions and Amp threads: no fixture exists, so these files are written from the
agents' storage shapes (agent-formats.md; the newer fields marked unverified there)."""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, imported, stored
from .dag_helpers import assert_well_formed

cont, amp = SOURCES["continue"], SOURCES["amp"]
SID = "4c1e7d1a-0000-4000-8000-000000000001"


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def continue_session(turns: int = 1) -> dict:
    history = []
    for n in range(turns):
        history.append(
            {
                "message": {"role": "user", "content": [{"type": "text", "text": f"explain part {n}"}]},
                "contextItems": [{"name": "main.py", "content": "print(1)"}],
                "editorState": {},
            }
        )
        history.append({"message": {"role": "thinking", "content": "look at main.py"}, "contextItems": []})
        history.append(
            {
                "message": {
                    "role": "assistant",
                    "content": "",
                    "toolCalls": [
                        {
                            "id": f"tc{n}",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"filepath": "main.py"}'},
                        }
                    ],
                },
                "contextItems": [],
                "toolCallState": {
                    "toolCallId": f"tc{n}",
                    "status": "done",
                    "output": [{"name": "main.py", "content": "print(1)"}],
                },
            }
        )
        history.append({"message": {"role": "assistant", "content": f"It prints 1 ({n})."}, "contextItems": []})
    return {
        "sessionId": SID,
        "title": "Explain main",
        "workspaceDirectory": "file:///work/cont",
        "history": history,
        "mode": "agent",
        "chatModelTitle": "Claude 4 Sonnet",
    }


def test_continue_session_with_index_tool_state_and_thinking(tmp_path: Path) -> None:
    sessions = tmp_path / ".continue" / "sessions"
    path = write(sessions / f"{SID}.json", continue_session())
    write(
        sessions / "sessions.json",
        [
            {
                "sessionId": SID,
                "title": "Explain main",
                "dateCreated": "1767300000000",
                "workspaceDirectory": "file:///work/cont",
            }
        ],
    )
    assert cont.discover([tmp_path / ".continue"]) == [path]
    report = ImportReport()
    [s] = cont.parse_file(path, report, final=True)
    assert report.warnings == []
    assert (s.native_id, s.title, s.cwd, s.model) == (SID, "Explain main", "/work/cont", "Claude 4 Sonnet")
    assert [(n.role, n.name, n.content) for n in s.nodes] == [
        ("user", None, "explain part 0"),
        ("assistant", "Claude 4 Sonnet", ""),
        ("tool", "read_file", "print(1)"),
        ("assistant", "Claude 4 Sonnet", "It prints 1 (0)."),
    ]
    assert s.nodes[0].created_at == 1767300000.0 and s.nodes[2].input == {"filepath": "main.py"}
    assert dict(s.nodes[0].metadata)["context_items"] == ["main.py"]
    assert dict(s.nodes[1].metadata)["thinking"] == "look at main.py"
    assert_well_formed(s)


def test_continue_twice_growth_and_a_cut_file(tmp_path: Path, home) -> None:
    path = write(tmp_path / "sessions" / f"{SID}.json", continue_session(1))
    age(tmp_path)
    assert (imported(home, "continue", tmp_path / "sessions").nodes, imported(home, "continue", path).nodes) == (4, 0)
    write(path, continue_session(2))
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "continue", path)
    assert (grown.nodes, grown.turns) == (4, 1)
    before = stored(home)
    path.write_text(path.read_text()[:200])
    age(tmp_path, when=OLD + 120)
    report = imported(home, "continue", path)
    assert len(report.warnings) == 1 and report.warnings[0].startswith(f"{path}: not valid JSON")
    assert stored(home) == before


def thread(done: bool = True, streaming: bool = False) -> dict:
    run = {"status": "done" if done else "in-progress", "result": {"output": "3 passed", "exitCode": 0}}
    messages = [
        {
            "role": "user",
            "messageId": 0,
            "content": [{"type": "text", "text": "run the tests"}],
            "meta": {"sentAt": 1767400000000},
        },
        {
            "role": "assistant",
            "messageId": 1,
            "content": [
                {"type": "thinking", "thinking": "use pytest"},
                {"type": "text", "text": "Running."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "pytest"}},
            ],
            "state": {"type": "complete"},
            "usage": {"model": "claude-sonnet-4-5", "inputTokens": 10, "outputTokens": 4},
        },
        {"role": "user", "messageId": 2, "content": [{"type": "tool_result", "toolUseID": "toolu_1", "run": run}]},
        {
            "role": "assistant",
            "messageId": 3,
            "content": [{"type": "text", "text": "All pass."}],
            "state": {"type": "streaming" if streaming else "complete"},
            "usage": {"model": "claude-sonnet-4-5"},
        },
    ]
    return {
        "v": 42,
        "id": "T-0a1b2c3d-0000-4000-8000-000000000001",
        "created": 1767400000000,
        "title": "Run tests",
        "agentMode": "smart",
        "env": {"initial": {"trees": [{"displayName": "app", "uri": "file:///work/amp"}]}},
        "messages": messages,
    }


def test_amp_thread(tmp_path: Path, home) -> None:
    threads = tmp_path / "amp" / "threads"
    path = write(threads / "T-0a1b2c3d-0000-4000-8000-000000000001.json", thread())
    assert amp.discover([tmp_path / "amp"]) == [path]
    report = ImportReport()
    [s] = amp.parse_file(path, report, final=True)
    assert report.warnings == []
    assert (s.title, s.cwd, s.model) == ("Run tests", "/work/amp", "claude-sonnet-4-5")
    assert [(n.role, n.content) for n in s.nodes] == [
        ("user", "run the tests"),
        ("assistant", "Running."),
        ("tool", "3 passed"),
        ("assistant", "All pass."),
    ]
    tool = s.nodes[2]
    assert (tool.name, tool.input, dict(tool.metadata)["exit"]) == ("Bash", {"cmd": "pytest"}, 0)
    assert s.nodes[0].created_at == 1767400000.0
    age(tmp_path)
    first = imported(home, "amp", threads)
    assert (first.new_sessions, first.turns, first.nodes) == (1, 1, 4)
    assert imported(home, "amp", path).nodes == 0


def test_amp_holds_a_running_tool_and_a_streaming_reply(tmp_path: Path) -> None:
    path = write(tmp_path / "T-1.json", thread(done=False))
    [s] = amp.parse_file(path, ImportReport(), final=False)
    assert [n.role for n in s.nodes] == ["user"]
    write(path, thread(streaming=True))
    [s] = amp.parse_file(path, ImportReport(), final=False)
    assert [n.role for n in s.nodes] == ["user", "assistant", "tool"]
    [s] = amp.parse_file(path, ImportReport(), final=True)
    assert len(s.nodes) == 4
