"""`opmem import claude DIR` reads Claude's transcripts under DIR, not every `*.jsonl` in it."""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES

claude = SOURCES["claude"]


def lines(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_only_claudes_transcripts_are_found_in_a_folder(tmp_path: Path) -> None:
    turn = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "isSidechain": False,
            "timestamp": "2026-01-05T08:00:00Z", "message": {"role": "user", "content": "hi"}}  # fmt: skip
    named = lines(tmp_path / "proj" / "0193aaaa-0000-7000-8000-000000000001.jsonl", turn)
    renamed = lines(tmp_path / "backup" / "my-session.jsonl", turn)
    agent = lines(tmp_path / "proj" / "0193aaaa-0000-7000-8000-000000000001" / "subagents" / "agent-a1.jsonl", turn)
    lines(tmp_path / "codex" / "rollout-2026-01-05.jsonl", {"type": "session_meta", "payload": {"id": "x"}})
    lines(tmp_path / "notes.jsonl", {"session": "n", "id": "1", "role": "user", "content": "not claude"})
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    assert sorted(claude.discover([tmp_path])) == sorted([named, renamed, agent])


def test_a_file_named_on_the_command_line_is_read_as_claudes(tmp_path: Path) -> None:
    given = lines(tmp_path / "notes.jsonl", {"session": "n", "id": "1", "role": "user", "content": "x"})
    assert claude.discover([given]) == [given]
