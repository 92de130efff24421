"""The store's change hints (the journal, the change tokens) that cannot be written: the write
itself stands, and the failure is said once, naming the file, by whoever ran the write."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.store.mirror_backlog import MirrorWriter
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn

CLI = "import sys; from opmem_tui.cli import main; sys.exit(main(prog_name='opmem'))"


def _block(path: Path) -> None:
    """A folder where the hint file goes: opening it for writing fails (EISDIR) as on a read-only disk."""
    path.unlink(missing_ok=True)
    path.mkdir(parents=True)


def _transcript(path: Path, turns: int = 3) -> Path:
    with path.open("w") as fh:
        for k in range(turns):
            fh.write(json.dumps({"session": "t1", "id": f"u{k}", "role": "user", "content": f"question {k}"}) + "\n")
            fh.write(json.dumps({"session": "t1", "id": f"a{k}", "role": "assistant", "content": f"answer {k}"}) + "\n")
    return path


def test_a_change_token_that_cannot_be_written_is_said_once_and_the_turn_is_kept(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", durable=False)
    add_turn(store, "s1", "first", "one")
    assert store.take_hint_failures() == []
    _block(store.changed_path)
    add_turn(store, "s1", "second", "two")
    failures = store.take_hint_failures()
    assert [path for path, _problem in failures] == [store.changed_path]
    assert os.strerror(errno.EISDIR) in failures[0][1]
    assert "other opmem processes" in failures[0][1]
    add_turn(store, "s1", "third", "three")
    assert store.take_hint_failures() == []  # said once a process, not at every write
    again = SessionStore(tmp_path / "sessions", durable=False)
    assert [n.content for n in again.get_nodes("s1") if n.role == "user"] == ["first", "second", "third"]


def test_a_journal_that_cannot_be_written_is_said(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", durable=False)
    add_turn(store, "s1", "first", "one")
    _block(store.journal.path)
    add_turn(store, "s2", "second", "two")
    assert [path for path, _problem in store.take_hint_failures()] == [store.journal.path]
    assert store.exists("s2")


def test_an_import_says_the_failed_hint_as_a_warning_naming_the_file(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    _block(home.sessions.changed_path)
    report = run_import(home, "jsonl", [_transcript(tmp_path / "t.jsonl")], bind=False)
    assert report.nodes == 6
    assert [w for w in report.warnings if str(home.sessions.changed_path) in w], report.warnings


def test_the_mirror_writer_says_a_failed_hint(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    report = run_import(home, "jsonl", [_transcript(tmp_path / "t.jsonl")], bind=False, defer_mirror=True)
    assert report.mirror_pending and not report.warnings
    _block(home.sessions.changed_path)
    writer = MirrorWriter(home.sessions)
    writer.add(report.mirror_pending)
    done = writer.run()
    assert done.sessions == 1
    assert [p for p in done.problems if str(home.sessions.changed_path) in p], done.problems


def test_opmem_import_prints_the_warning_and_keeps_every_node(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Home(home).ensure()
    _block(Home(home).sessions.changed_path)
    env = {**os.environ, "OPMEM_HOME": str(home), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", CLI, "import", "jsonl", str(_transcript(tmp_path / "t.jsonl")), "--no-bind"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = " ".join((done.stdout + done.stderr).split())
    assert "warning:" in out and ".changed" in out and "may not see the change" in out, out
    assert "Traceback" not in out
    store = Home(home).sessions
    (meta,) = store.list_sessions(rescan=True).sessions
    assert len(store.get_nodes(meta.id)) == 6
