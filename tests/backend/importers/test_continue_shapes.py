"""Continue.dev sessions shaped as Continue writes them, written here from its own source at
continuedev/continue d0a3c0b626b5bebc3bef4742eec05a0242be0bab:

- core/util/history.ts (HistoryManager.save: the session file's keys and order, the sessions.json
  entry with dateCreated = String(Date.now()) and messageCount);
- core/index.d.ts (Session, BaseSessionMetadata, ChatHistoryItem, ChatMessage, MessagePart,
  ToolCallState, ToolStatus, Reasoning, PromptLog);
- gui/src/redux/slices/sessionSlice.ts + thunks/streamResponseAfterToolCall.ts + thunks/session.ts
  (the extension: a uuid ``id`` on every message, a ``tool`` message answering each call,
  ``reasoning`` for ``<think>`` models, workspaceDirectory = window.workspacePaths[0], a URI);
- extensions/cli/src/session.ts, services/ChatHistoryService.ts, compaction.ts (the ``cn`` CLI: no
  message ids, a system message first, "Untitled Session", results only in toolCallStates.output,
  compaction rewriting the history to [system, summary]).

No real session file was available; these are not copies of one.
"""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, imported, stored
from .dag_helpers import assert_well_formed

cont = SOURCES["continue"]
GUI = "0f5b3c1e-6f0a-4a47-9d55-2b8f5e1c0a01"
CLI = "9a7d2e44-1b3c-4e5f-8a9b-0c1d2e3f4a5b"
PNG = "data:image/png;base64," + "iVBORw0KGgo" * 40


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def read_state(status: str, output: bool) -> dict:
    state = {
        "toolCallId": "toolu_01",
        "toolCall": {
            "id": "toolu_01",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"filepath":"src/app.py"}'},
        },
        "status": status,
        "parsedArgs": {"filepath": "src/app.py"},
    }
    if output:
        state["output"] = [{"name": "app.py", "description": "src/app.py", "content": "def main(): ..."}]
    return state


def gui_session(status: str = "done") -> dict:
    """The extension's file: an Anthropic thinking message, a call answered by a tool message, a
    ``<think>`` model's reasoning on its placeholder item, an image part, promptLogs."""
    done = status == "done"
    history = [
        {
            "message": {
                "id": "m-user-1",
                "role": "user",
                "content": [
                    {"type": "text", "text": "why does main fail?"},
                    {"type": "imageUrl", "imageUrl": {"url": PNG}},
                ],
            },
            "contextItems": [
                {
                    "content": "def main(): ...",
                    "name": "app.py",
                    "description": "src/app.py",
                    "id": {"providerTitle": "file", "itemId": "file:///work/proj/src/app.py"},
                    "uri": {"type": "file", "value": "file:///work/proj/src/app.py"},
                }
            ],
            "editorState": {"type": "doc", "content": []},
            "modifiers": {"useCodebase": False, "noContext": True},
        },
        {
            "message": {"id": "m-think-1", "role": "thinking", "content": "Read the file first.", "signature": "sig"},
            "contextItems": [],
        },
        {
            "message": {
                "id": "m-asst-1",
                "role": "assistant",
                "content": "",
                "toolCalls": [read_state(status, done)["toolCall"]],
                "usage": {"promptTokens": 1200, "completionTokens": 40},
            },
            "contextItems": [],
            "toolCallStates": [read_state(status, done)],
            "promptLogs": [
                {"modelTitle": "Claude Sonnet 4.5", "modelProvider": "anthropic", "prompt": "…", "completion": ""}
            ],
        },
    ]
    if done:
        history += [
            {
                "message": {
                    "id": "m-tool-1",
                    "role": "tool",
                    "content": "app.py\n\ndef main(): ...",
                    "toolCallId": "toolu_01",
                },
                "contextItems": [],
            },
            {
                "message": {"id": "m-asst-2", "role": "assistant", "content": ""},
                "contextItems": [],
                "reasoning": {
                    "active": False,
                    "text": "main has no body",
                    "startAt": 1767300005000,
                    "endAt": 1767300006000,
                },
            },
            {
                "message": {"id": "m-asst-3", "role": "assistant", "content": "main() is a stub: it has no body."},
                "contextItems": [],
                "promptLogs": [
                    {"modelTitle": "Qwen3 local", "modelProvider": "ollama", "prompt": "…", "completion": "…"}
                ],
            },
        ]
    return {
        "sessionId": GUI,
        "title": "Why main fails",
        "workspaceDirectory": "file:///work/proj",
        "history": history,
        "mode": "agent",
        "chatModelTitle": None,
    }


def index(sessions: Path, *entries: tuple[str, str, str]) -> None:
    write(
        sessions / "sessions.json",
        [
            {
                "sessionId": sid,
                "title": title,
                "dateCreated": "1767300000000",
                "workspaceDirectory": cwd,
                "messageCount": 2,
            }
            for sid, title, cwd in entries
        ],
    )


def test_an_extension_session(tmp_path: Path) -> None:
    sessions = tmp_path / ".continue" / "sessions"
    path = write(sessions / f"{GUI}.json", gui_session())
    index(sessions, (GUI, "Why main fails", "file:///work/proj"))
    report = ImportReport()
    [s] = cont.parse_file(path, report, final=True)
    assert (report.warnings, report.unknown_records) == ([], {})
    assert (s.title, s.cwd) == ("Why main fails", "/work/proj")
    assert [(n.id, n.role, n.name, n.content) for n in s.nodes] == [
        ("m-user-1", "user", None, "why does main fail?\n[image]"),
        ("m-asst-1", "assistant", "Claude Sonnet 4.5", ""),
        ("toolu_01", "tool", "read_file", "app.py\n\ndef main(): ..."),
        ("m-asst-3", "assistant", "Qwen3 local", "main() is a stub: it has no body."),
    ]
    user, first, tool, last = s.nodes
    assert PNG not in user.content and dict(user.metadata)["context_items"] == ["app.py"]
    assert user.created_at == 1767300000.0  # the index's dateCreated (ms as text)
    assert dict(first.metadata)["thinking"] == "Read the file first."
    assert dict(first.metadata)["tokens"] == {"promptTokens": 1200, "completionTokens": 40}
    assert (tool.input, dict(tool.metadata)["status"]) == ({"filepath": "src/app.py"}, "done")
    assert dict(last.metadata)["thinking"] == "main has no body"  # reasoning of the <think> model
    assert last.created_at == 1767300005.0
    assert s.model == "Qwen3 local"
    assert_well_formed(s)


def test_a_call_awaiting_approval_waits_then_gets_its_result(tmp_path: Path, home) -> None:
    """Saved after the stream ends, the call still 'generated' (awaiting approval): the tool node is
    held back, not written empty for good."""
    path = write(tmp_path / "sessions" / f"{GUI}.json", gui_session(status="generated"))
    [s] = cont.parse_file(path, ImportReport(), final=False)
    assert [n.role for n in s.nodes] == ["user", "assistant"]
    assert imported(home, "continue", path).nodes == 2
    write(path, gui_session())
    age(tmp_path, when=OLD)
    assert imported(home, "continue", path).nodes == 2
    [nodes] = stored(home).values()
    assert [(n.role, n.content) for n in nodes if n.role == "tool"] == [("tool", "app.py\n\ndef main(): ...")]


def cli_session(*, compacted: bool = False, turns: int = 1) -> dict:
    system = {"message": {"role": "system", "content": "You are an agent in a terminal."}, "contextItems": []}
    history = [system]
    if compacted:
        history.append(
            {
                "message": {"role": "assistant", "content": "Summary: the tests were fixed."},
                "contextItems": [],
                "conversationSummary": "Summary: the tests were fixed.",
            }
        )
    else:
        history += [
            {"message": {"role": "user", "content": "fix the tests"}, "contextItems": []},
            {
                "message": {
                    "role": "assistant",
                    "content": "Running them.",
                    "toolCalls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "Bash", "arguments": '{"command":"pytest"}'},
                        }
                    ],
                    "usage": {"promptTokens": 900, "completionTokens": 12},
                },
                "contextItems": [],
                "toolCallStates": [
                    {
                        "toolCallId": "call_1",
                        "toolCall": {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "Bash", "arguments": '{"command":"pytest"}'},
                        },
                        "status": "errored",
                        "parsedArgs": {"command": "pytest"},
                        "output": [
                            {"content": "2 failed", "name": "Tool Result", "description": "Tool execution result"}
                        ],
                    }
                ],
            },
            {"message": {"role": "assistant", "content": "Two tests fail; fixed."}, "contextItems": []},
        ]
    for n in range(turns - 1):
        history += [
            {"message": {"role": "user", "content": f"and now step {n}"}, "contextItems": []},
            {"message": {"role": "assistant", "content": f"step {n} done"}, "contextItems": []},
        ]
    return {
        "sessionId": CLI,
        "title": "Untitled Session",
        "workspaceDirectory": "/work/cli",
        "history": history,
        "usage": {"totalCost": 0.01, "promptTokens": 900, "completionTokens": 12},
    }


def test_a_cli_session_and_its_compaction(tmp_path: Path, home) -> None:
    path = write(tmp_path / "sessions" / f"{CLI}.json", cli_session())
    report = ImportReport()
    [s] = cont.parse_file(path, report, final=True)
    assert (report.warnings, report.unknown_records) == ([], {})
    assert (s.title, s.cwd) == ("", "/work/cli")  # the CLI's placeholder title is no title
    assert [(n.role, n.name, n.content) for n in s.nodes] == [
        ("system", None, "You are an agent in a terminal."),
        ("user", None, "fix the tests"),
        ("assistant", None, "Running them."),
        ("tool", "Bash", "2 failed"),
        ("assistant", None, "Two tests fail; fixed."),
    ]
    assert dict(s.nodes[3].metadata)["is_error"] is True and s.nodes[3].input == {"command": "pytest"}
    assert_well_formed(s)
    age(tmp_path)
    assert imported(home, "continue", path).nodes == 5
    # /compact: the CLI saves [system, summary] and the talk goes on from there. The id-less
    # messages at places 1..4 now say something else: they are new nodes, not the old ones.
    write(path, cli_session(compacted=True, turns=2))
    age(tmp_path, when=OLD + 60)
    assert imported(home, "continue", path).nodes == 3
    [nodes] = stored(home).values()
    contents = [n.content for n in nodes]
    assert "fix the tests" in contents and "2 failed" in contents  # nothing stored is lost
    assert {"Summary: the tests were fixed.", "and now step 0", "step 0 done"} <= set(contents)
    summary = next(n for n in nodes if n.content.startswith("Summary"))
    assert dict(summary.metadata)["conversation_summary"] == "Summary: the tests were fixed."
