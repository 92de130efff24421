"""ChatGPT conversations outside the export's list: the macOS app's plain (v1) cache, one
conversation a file (Dicklesworthstone/franken_agent_detection src/connectors/chatgpt.rs, 6ae73d5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

chatgpt = SOURCES["chatgpt"]


def conversation(cid: str | None) -> dict:
    mapping = {
        "root": {"id": "root", "parent": None, "children": ["u1"], "message": None},
        "u1": {"id": "u1", "parent": "root", "children": ["a1"],
               "message": {"id": "u1", "author": {"role": "user"}, "create_time": 1767600001.5,
                           "content": {"content_type": "text", "parts": ["hello"]}}},
        "a1": {"id": "a1", "parent": "u1", "children": [],
               "message": {"id": "a1", "author": {"role": "assistant"}, "create_time": 1767600004.0,
                           "content": {"content_type": "text", "parts": ["hi"]}, "metadata": {"model_slug": "gpt-5"}}},
    }  # fmt: skip
    conv = {"title": "Greeting", "create_time": 1767600000.0, "current_node": "a1", "mapping": mapping}
    return {**conv, "id": cid} if cid else conv


@pytest.fixture
def app_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    base = tmp_path / "Library" / "Application Support" / "com.openai.chat"
    plain, locked = base / "conversations-0a1b", base / "conversations-v3-0a1b"
    plain.mkdir(parents=True)
    locked.mkdir()
    (plain / "c-1.json").write_text(json.dumps(conversation("c-1")), encoding="utf-8")
    (plain / "c-2.json").write_text(json.dumps(conversation(None)), encoding="utf-8")
    (locked / "c-3.data").write_bytes(b"\x00encrypted")
    return base


def test_the_apps_plain_folder_is_found_and_each_file_is_a_conversation(app_home: Path) -> None:
    assert chatgpt.default_paths() == [app_home / "conversations-0a1b"]  # never the encrypted v3 folder
    files = chatgpt.discover(chatgpt.default_paths())
    assert [f.name for f in files] == ["c-1.json", "c-2.json"]
    report = ImportReport()
    sessions = [s for f in files for s in chatgpt.read(f, report, final=True)]
    assert [s.native_id for s in sessions] == ["c-1", "c-2"]  # no id: the file's name
    assert [(n.role, n.content, n.created_at) for n in sessions[0].nodes] == [
        ("user", "hello", 1767600001.5),
        ("assistant", "hi", 1767600004.0),
    ]
    assert report.warnings == []


def test_a_claude_ai_retry_is_a_branch_and_the_leaf_is_the_head(tmp_path: Path) -> None:
    root = "00000000-0000-4000-8000-000000000000"
    messages = [
        {"uuid": "m1", "parent_message_uuid": root, "sender": "human", "text": "hi", "created_at": "2026-01-05T08:00:00Z"},
        {"uuid": "m2", "parent_message_uuid": "m1", "sender": "assistant", "text": "first", "created_at": "2026-01-05T08:00:01Z"},
        {"uuid": "m3", "parent_message_uuid": "m1", "sender": "assistant", "text": "retried", "created_at": "2026-01-05T08:00:05Z"},
        {"uuid": "m4", "sender": "human", "text": "thanks", "created_at": "2026-01-05T08:00:09Z"},
    ]  # fmt: skip
    conv = {"uuid": "c1", "name": "Hi", "current_leaf_message_uuid": "m2", "chat_messages": messages}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]), encoding="utf-8")
    (s,) = SOURCES["claude-ai"].read(path, ImportReport(), final=True)
    by_id = {n.id: n for n in s.nodes}
    assert by_id["m2"].parent_id == "m1" and by_id["m3"].parent_id == "m1"
    assert by_id["m4"].parent_id == "m3"  # no parent named: after the message before it
    assert by_id["m1"].parent_id is None
    assert s.head == "m2"  # the app shows the first reply again, not the last message written
