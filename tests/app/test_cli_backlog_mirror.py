"""`opmem import` writes a backlog's git mirror after the sessions are browsable, and says so;
`opmem verify` reports a mirror another process is still writing as such (exit 0); a mirror an
interrupted run left is written by the next `opmem import`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.writers import process_start
from opmem_tui.cli import main
from opmem_tui.cli_import import register


@pytest.fixture(autouse=True)
def _registered() -> None:
    if "import" not in main.commands:
        register(main)


def chat(path: Path, session: str, turns: int) -> Path:
    lines = []
    for i in range(turns * 2):
        lines.append({"session": session, "id": str(i), "role": "assistant" if i % 2 else "user", "content": f"m{i}"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    os.utime(path, (1_600_000_000, 1_600_000_000))
    return path


def revs(home: Home, sid: str) -> int:
    out = subprocess.run(["git", "-C", str(home.sessions.path_for(sid)), "rev-list", "--all"], capture_output=True)
    return len(out.stdout.split())


def test_import_writes_the_mirror_before_it_exits_and_says_so(tmp_path: Path) -> None:
    path = chat(tmp_path / "a.jsonl", "a", 3)
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "import", "jsonl", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 session(s) browsable and searchable; writing the git mirror of 1…" in result.stderr
    assert "git mirror written: 3 turn commit(s) of 1 session(s)" in result.stderr
    home = Home(tmp_path / "home")
    (sid,) = [m.id for m in home.sessions.list_sessions().sessions]
    assert revs(home, sid) == 3 and home.sessions.pending_mirrors() == []


def test_verify_reports_a_mirror_being_written_and_the_next_import_completes_an_orphan(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    from opmem_tui.backend.importers import run_import

    report = run_import(home, "jsonl", [chat(tmp_path / "a.jsonl", "a", 2)], defer_mirror=True)
    (sid,) = report.mirror_pending
    marker = home.sessions.locks_dir / f"{sid}.mirror"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        marker.write_text(json.dumps({"pid": other.pid, "start": process_start(other.pid)}))
        out = CliRunner().invoke(main, ["--home", str(home.path), "verify"])
        assert out.exit_code == 0, out.output
        assert "mirror being written (2 turns behind)" in out.output.replace("\n", "")
        assert "problem:" not in out.output and revs(home, sid) == 0
    finally:
        other.kill()
        other.wait()
    # its owner is gone now: the next import adopts the mirror and writes it
    again = CliRunner().invoke(
        main, ["--home", str(home.path), "import", "jsonl", str(chat(tmp_path / "b.jsonl", "b", 1))]
    )
    assert again.exit_code == 0, again.output
    assert "git mirror written: 3 turn commit(s) of 2 session(s)" in again.stderr
    assert revs(home, sid) == 2 and home.sessions.pending_mirrors() == []
