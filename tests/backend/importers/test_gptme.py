"""gptme's conversation logs and the branches it keeps beside them (ErikBjare/gptme at 085b726:
message.py to_dict, logmanager.py's branches/<name>.jsonl, dirs.py's log folders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.gptme import gptme_logs, read_log


def write(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def msg(role: str, content: str, second: int, **more: object) -> dict:
    return {"role": role, "content": content, "timestamp": f"2026-01-05T08:00:{second:02d}.000000", **more}


def test_an_undo_backup_is_a_branch_sharing_the_lines_before_it(tmp_path: Path) -> None:
    folder = tmp_path / "2026-01-05-fix-it"
    head = [msg("system", "You are gptme.", 0, hide=True, pinned=True), msg("user", "fix it", 1)]
    log = write(folder / "conversation.jsonl", *head, msg("assistant", "```shell\nmake\n```", 2),
                msg("tool", "ok", 3, call_id="c1"))  # fmt: skip
    write(folder / "branches" / "main-undo-0.jsonl", *head, msg("assistant", "```shell\nrm -rf build\n```", 2),
          msg("tool", "removed", 3))  # fmt: skip
    (s,) = read_log(log, ImportReport(), "gptme")
    by_content = {n.content: n for n in s.nodes}
    user = by_content["fix it"]
    kept, undone = by_content["```shell\nmake\n```"], by_content["```shell\nrm -rf build\n```"]
    assert kept.parent_id == user.id and undone.parent_id == user.id
    assert by_content["removed"].called_by == undone.id and by_content["ok"].called_by == kept.id
    assert by_content["ok"].metadata["call_id"] == "c1"
    assert [n.content for n in s.nodes].count("fix it") == 1
    assert user.parent_id is None and "You are gptme." not in by_content
    assert s.head == kept.id  # the log ends in a tool line: its caller is the head


def test_the_log_folders_follow_gptme_dirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPTME_LOGS_HOME", str(tmp_path / "logs"))
    assert gptme_logs() == [tmp_path / "logs"]
    monkeypatch.delenv("GPTME_LOGS_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert gptme_logs() == [tmp_path / "data" / "gptme" / "logs"]
