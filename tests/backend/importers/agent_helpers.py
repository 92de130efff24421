"""Helpers for the tests of the importers of other agents' stores (SQLite databases, JSON trees)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.importers.base import ImportReport

AGENTS = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "agents"
OLD = 1_600_000_000  # an mtime long past: the store is quiet, nothing is held back


def agent_fixture(relative: str) -> Path:
    import pytest

    path = (AGENTS / relative).resolve()
    if not path.exists():
        pytest.skip(f"agent fixture {relative} is absent")
    return path


def age(*paths: Path, when: int = OLD) -> None:
    """Make files (and a folder's files) look long finished (written at `when`)."""
    for path in paths:
        items = [path, *path.rglob("*")] if path.is_dir() else [path]
        for item in items:
            os.utime(item, (when, when))


def store_contains(home: Home, needle: bytes) -> list[str]:
    """Every file of the home, and every object of every git repo in it, that holds `needle`."""
    hits: list[str] = []
    for file in home.path.rglob("*"):
        if file.is_file() and needle in file.read_bytes():
            hits.append(str(file))
    for git in home.path.rglob(".git"):
        out = subprocess.run(
            ["git", "--git-dir", str(git), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
            check=True,
        ).stdout
        if needle in out:
            hits.append(f"{git}: a git object")
    return hits


def imported(home: Home, source: str, *paths: Path) -> ImportReport:
    return run_import(home, source, list(paths), bind=False)


def stored(home: Home) -> dict[str, list]:
    """{native id: nodes} of every stored session."""
    out = {}
    for meta in home.sessions.list_sessions(rescan=True).sessions:
        out[meta.source_ref.get("native_id", meta.id)] = list(home.sessions.get_nodes(meta.id))
    return out


def wal_db(path: Path, script: str) -> Path:
    """A database in WAL mode made by `script`, its WAL kept (as a live agent's is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(script)
    conn.commit()
    conn.close()
    return path
