"""Mistral Vibe's session folders as its source writes them (mistralai/mistral-vibe at ac8f1a0:
session_logger.py, types.py SessionMetadata and LLMMessage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.vibe import read_session, vibe_sessions


def test_model_from_the_saved_config_reasoning_injected_messages_and_a_named_title(tmp_path: Path) -> None:
    folder = tmp_path / "session_20260105_080000_0a1b2c3d"
    folder.mkdir()
    meta = {"session_id": "0a1b2c3d-1", "parent_session_id": None, "start_time": "2026-01-05T08:00:00+00:00",
            "end_time": "2026-01-05T08:00:09+00:00", "git_commit": "abc", "git_branch": "main",
            "environment": {"working_directory": "/w"}, "username": "u", "title": "Fix", "title_source": "manual",
            "stats": {}, "total_messages": 3, "config": {"active_model": "devstral-2"}}  # fmt: skip
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    messages = [
        {"role": "user", "content": "fix it", "message_id": "m1"},
        {"role": "user", "content": "<reminder>tests first</reminder>", "message_id": "m2", "injected": True},
        {"role": "assistant", "content": "Done.", "message_id": "m3", "reasoning_content": "look at tests"},
    ]
    (folder / "messages.jsonl").write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    (s,) = read_session(folder, ImportReport(), "mistral-vibe")
    assert s.model == "devstral-2" and s.title == "Fix" and s.extra["title_source"] == "user"
    assert [(n.role, n.name) for n in s.nodes] == [("user", None), ("system", None), ("assistant", "devstral-2")]
    assert s.nodes[1].metadata["injected"] is True
    assert s.nodes[2].metadata["thinking"] == "look at tests"
    assert s.nodes[0].created_at < s.nodes[2].created_at


def test_a_save_dir_set_in_its_config_is_looked_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIBE_HOME", str(tmp_path / "vh"))
    assert vibe_sessions() == [tmp_path / "vh" / "logs" / "session"]
    (tmp_path / "vh").mkdir()
    (tmp_path / "vh" / "config.toml").write_text(
        f'[session_logging]\nsave_dir = "{tmp_path / "logs"}"\n', encoding="utf-8"
    )
    assert vibe_sessions() == [tmp_path / "logs", tmp_path / "vh" / "logs" / "session"]
    (tmp_path / "vh" / "config.toml").write_text("not [toml", encoding="utf-8")
    assert vibe_sessions() == [tmp_path / "vh" / "logs" / "session"]
