"""`opmem index rebuild|update|stats` in a subprocess, on a store in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from backend.home import Home

from .conftest import add_chat


def opmem(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPMEM_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-c", "from opmem_tui.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_rebuild_update_stats(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    add_chat(home, "s1", [("the worker port", "18109")])
    index_file = home.memory_dir / "index.sqlite"
    done = opmem(home.path, "index", "rebuild")
    assert done.returncode == 0, done.stderr
    assert "rebuilt: 1 sessions indexed (2 rows)" in done.stdout
    assert index_file.exists()
    add_chat(home, "s2", [("tomatoes", "basil")])
    done = opmem(home.path, "index", "update")
    assert done.returncode == 0 and "1 sessions indexed (2 rows)" in done.stdout
    done = opmem(home.path, "index", "stats")
    assert done.returncode == 0 and "2 sessions, 4 turn rows" in done.stdout
    assert [h.session_id for h in home.search("basil")] == ["s2"]


def test_rebuild_of_a_corrupt_index(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    add_chat(home, "s1", [("the worker port", "18109")])
    home.memory_dir.mkdir(parents=True, exist_ok=True)
    (home.memory_dir / "index.sqlite").write_bytes(b"not a database" * 100)
    done = opmem(home.path, "index", "stats")
    assert done.returncode != 0 and "index.sqlite" in done.stderr and "Traceback" not in done.stderr
    done = opmem(home.path, "index", "rebuild")
    assert done.returncode == 0, done.stderr
    assert {h.session_id for h in home.search("worker")} == {"s1"}


def test_no_home(tmp_path: Path) -> None:
    for command in ("rebuild", "update", "stats"):
        done = opmem(tmp_path / "nowhere", "index", command)
        assert done.returncode != 0 and "no opmem home" in done.stderr
    assert not (tmp_path / "nowhere").exists()
