"""A command that meets a shared file's lock held by another opmem process: after
$OPMEM_LOCK_TIMEOUT one message naming the file, exit 1, no traceback, nothing stored changed;
the same command succeeds once the lock is free."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2

from opmem_tui.backend.home import Home
from tests.backend.test_file_lock import held_by_another_process


def opmem(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from opmem_tui.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "OPMEM_HOME": str(home), "OPMEM_LOCK_TIMEOUT": "0.3", "COLUMNS": "400"},
        timeout=300,
    )


def test_projects_json_held(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "proj"
    folder.mkdir()
    pygit2.init_repository(str(folder))
    project = Home(home).projects.resolve_project(folder)
    registry = home / "projects" / "projects.json"
    before = registry.read_bytes()
    with held_by_another_process(Path(f"{registry}.lock")):
        done = opmem(home, "projects", "status", project.id, "paused")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"{registry}: another opmem process" in done.stderr.replace("\n", "")
    assert registry.read_bytes() == before
    assert opmem(home, "projects", "status", project.id, "paused").returncode == 0
    assert Home(home).projects.get(project.id).status == "paused"


def test_import_state_held(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, sid in ((first, "a"), (second, "b")):
        lines = [
            {"session": sid, "id": f"m{i}", "role": ("user", "assistant")[i % 2], "content": f"{sid} {i}"}
            for i in range(4)
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert opmem(home, "import", "jsonl", str(first)).returncode == 0
    state = home / "import-state.json"
    before = state.read_bytes()
    with held_by_another_process(Path(f"{state}.lock")):
        done = opmem(home, "import", "jsonl", str(second))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())
    assert f"{state}: another opmem process" in message
    assert "the next import reads these files again" in message
    assert state.read_bytes() == before
    # what was imported is stored whole; the import run again doubles nothing
    assert len(Home(home).sessions.get_nodes("jsonl-b")) == 4
    again = opmem(home, "import", "jsonl", str(second))
    assert again.returncode == 0, again.stderr
    assert [len(Home(home).sessions.get_nodes(sid)) for sid in ("jsonl-a", "jsonl-b")] == [4, 4]
    assert str(second.resolve()) in json.loads(state.read_text())["files"]
