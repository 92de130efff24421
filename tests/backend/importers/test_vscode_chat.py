"""VS Code Copilot Chat sessions as VS Code writes and reads them (microsoft/vscode chat contribution:
chatSessionStore.ts's folders and string responses, IChatThinkingPart)."""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.vscode_chat import read_chat

chat = SOURCES["copilot-chat"]


def write(path: Path, requests: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": 3, "sessionId": path.stem, "creationDate": 1767600000000, "requests": requests}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_thinking_parts_and_an_older_files_string_responses(tmp_path: Path) -> None:
    path = write(
        tmp_path / "chatSessions" / "s1.json",
        [
            {"requestId": "r1", "timestamp": 1767600001000, "message": {"text": "why?"},
             "response": [{"kind": "thinking", "value": ["look ", "closer"]}, {"value": "Because."}]},
            {"requestId": "r2", "timestamp": 1767600005000, "message": {"text": "and?"}, "response": "Old text."},
            {"requestId": "r3", "timestamp": 1767600009000, "message": {"text": "more"}, "response": ["Plain ", {"value": "mixed"}]},
        ],
    )  # fmt: skip
    (s,) = read_chat(path, ImportReport(), "vscode-copilot")
    replies = [n for n in s.nodes if n.role == "assistant"]
    assert [n.content for n in replies] == ["Because.", "Old text.", "Plain mixed"]
    assert replies[0].metadata["thinking"] == "look closer"
    assert [n.created_at for n in replies] == [1767600001.0, 1767600005.0, 1767600009.0]


def test_saved_sessions_are_found(tmp_path: Path) -> None:
    user = tmp_path / "Code" / "User"
    saved = write(
        user / "globalStorage" / "savedChatSessions" / "s2.json", [{"requestId": "r", "message": {"text": "x"}}]
    )
    assert chat.discover([user]) == [saved]
    assert chat.discover([saved.parent]) == [saved]
