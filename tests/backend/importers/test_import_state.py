"""import-state.json: saved whole and durable, like every other state file."""

from __future__ import annotations

import os
from pathlib import Path

from opmem_tui.backend.importers.state import FileState, ImportState


def test_the_import_state_is_fsynced_before_it_replaces_the_old_one(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "import-state.json"
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    state = ImportState(path)
    state.record(tmp_path / "a.jsonl", FileState("claude", 10, 1, 10, 2))
    state.save()
    # the inode fsynced is the one now named import-state.json (the temp file renamed over it)
    assert path.stat().st_ino in synced
    assert ImportState(path).get(tmp_path / "a.jsonl") == FileState("claude", 10, 1, 10, 2)
    assert not list(tmp_path.glob(".*.tmp"))
