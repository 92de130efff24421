"""OpenHands conversations as the agent SDK writes them (OpenHands/software-agent-sdk at 611629e):
event files in index order past 99999, the event tree (parent_id) and the active leaf, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.openhands import openhands_conversations, read_conversation


def event(folder: Path, index: int, eid: str, kind: str, second: int, **more: object) -> None:
    body = {"kind": kind, "id": eid, "timestamp": f"2026-01-05T08:00:{second:02d}.000000", "source": "agent", **more}
    (folder / "events" / f"event-{index:05d}-{eid}.json").write_text(json.dumps(body), encoding="utf-8")


def message(role: str, text: str) -> dict:
    return {"llm_message": {"role": role, "content": [{"type": "text", "text": text}]}}


def test_a_fork_is_a_branch_the_leaf_is_the_head_and_an_error_ends_its_call(tmp_path: Path) -> None:
    folder = tmp_path / "0a1b2c3d"
    (folder / "events").mkdir(parents=True)
    state = {"id": "0a1b2c3d", "agent": {"llm": {"model": "m"}}, "workspace": {"working_dir": "/w"},
             "leaf_event_id": "0000000b-a2"}  # fmt: skip
    (folder / "base_state.json").write_text(json.dumps(state), encoding="utf-8")
    event(folder, 0, "0000000a-u1", "MessageEvent", 1, **message("user", "hi"))  # legacy: no parent_id
    event(folder, 1, "0000000a-a1", "MessageEvent", 2, **message("assistant", "first try"))
    event(folder, 99999, "0000000a-c1", "ActionEvent", 3, parent_id="0000000a-a1", tool_name="terminal",
          tool_call_id="t1", tool_call={"name": "terminal", "arguments": '{"command": "make"}'})  # fmt: skip
    event(folder, 100000, "0000000a-e1", "AgentErrorEvent", 4, parent_id="0000000a-c1", tool_name="terminal",
          tool_call_id="t1", error="no make")  # fmt: skip
    event(folder, 100001, "0000000b-a2", "MessageEvent", 5, parent_id="0000000a-u1", **message("assistant", "again"))
    (s,) = read_conversation(folder, ImportReport(), "openhands")
    by_id = {n.id: n for n in s.nodes}
    assert by_id["0000000a-a1"].parent_id == "0000000a-u1" and by_id["0000000b-a2"].parent_id == "0000000a-u1"
    tool = by_id["0000000a-c1"]
    assert tool.called_by == "0000000a-a1" and tool.input == {"command": "make"}
    assert tool.content == "no make" and tool.metadata["is_error"] is True
    assert s.head == "0000000b-a2" and s.cwd == "/w"
    assert [n.id for n in s.nodes].index("0000000a-c1") < [n.id for n in s.nodes].index("0000000b-a2")


def test_the_clis_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENHANDS_CONVERSATIONS_DIR", raising=False)
    monkeypatch.setenv("OPENHANDS_PERSISTENCE_DIR", str(tmp_path / "oh"))
    assert openhands_conversations() == tmp_path / "oh" / "conversations"
    monkeypatch.setenv("OPENHANDS_CONVERSATIONS_DIR", str(tmp_path / "c"))
    assert openhands_conversations() == tmp_path / "c"
