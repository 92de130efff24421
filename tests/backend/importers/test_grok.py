"""Grok Build's session folders (xai-org/grok-build 19d42e3, session/persistence.rs's Summary)."""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.grok import read_session


def test_a_renamed_session_keeps_the_users_title(tmp_path: Path) -> None:
    folder = tmp_path / "%2Fw" / "0193aaaa-0000-7000-8000-000000000001"
    folder.mkdir(parents=True)
    summary = {"info": {"id": "0193aaaa-0000-7000-8000-000000000001", "cwd": "/w"}, "session_summary": "",
               "created_at": "2026-01-05T08:00:00Z", "updated_at": "2026-01-05T08:00:09Z", "num_messages": 2,
               "current_model_id": "grok-code", "generated_title": "Fix the build", "title_is_manual": True}  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    items = [{"type": "user", "content": "fix it"}, {"type": "assistant", "content": "Done.", "model_id": "grok-code"}]
    (folder / "chat_history.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    (s,) = read_session(folder, ImportReport(), "grok")
    assert (s.title, s.extra["title_source"], s.cwd) == ("Fix the build", "user", "/w")
    assert [n.created_at for n in s.nodes] == [1767600000.0, 1767600009.0]
