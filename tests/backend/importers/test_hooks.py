"""The extension point: after_ingest hooks per batch (import and watch), on_idle ticks of a watch."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from opmem_tui.backend.importers import run_import
from opmem_tui.backend.importers.hooks import IngestHooks
from opmem_tui.backend.importers.watch import Watcher
from opmem_tui.backend.model import OpmemError

from .conftest import Transcript, text

A = "00000000-0000-4000-8000-00000000000a"
B = "00000000-0000-4000-8000-00000000000b"


def two_sessions(root: Path) -> Path:
    folder = root / "projects" / "-tmp-project"
    for session in (A, B):
        t = Transcript(session=session)
        t.prompt(f"question {session[-1]}")
        t.assistant(f"msg_{session[-1]}", text("answer"))
        t.write(folder / f"{session}.jsonl")
    return root / "projects"


def test_import_calls_after_ingest_once_per_file_with_its_sessions(home, tmp_path: Path) -> None:
    projects = two_sessions(tmp_path)
    batches: list[frozenset[str]] = []
    report = run_import(home, "claude", [projects], hooks=IngestHooks(after_ingest=(batches.append,)))
    assert batches == [frozenset({f"cc-{A}"}), frozenset({f"cc-{B}"})]
    assert report.touched == {f"cc-{A}", f"cc-{B}"}
    # Nothing new: no batch is reported, not even with --force (the nodes and meta are there).
    again: list[frozenset[str]] = []
    forced = run_import(home, "claude", [projects], force=True, hooks=IngestHooks(after_ingest=(again.append,)))
    assert again == [] and forced.touched == set() and forced.sessions == 2


def test_a_grown_file_is_reported_again(home, tmp_path: Path) -> None:
    projects = two_sessions(tmp_path)
    run_import(home, "claude", [projects])
    path = projects / "-tmp-project" / f"{B}.jsonl"
    more = Transcript(session=B)
    more.count = 50
    more.prompt("follow-up", parent=None)
    with open(path, "a") as handle:
        handle.writelines(more.lines())
    os.utime(path, (1_600_000_500, 1_600_000_500))
    batches: list[frozenset[str]] = []
    run_import(home, "claude", [projects], hooks=IngestHooks(after_ingest=(batches.append,)))
    assert batches == [frozenset({f"cc-{B}"})]


def test_a_hook_error_is_a_warning_and_a_hook_bug_propagates(home, tmp_path: Path) -> None:
    projects = two_sessions(tmp_path)

    def refuses(sessions: frozenset[str]) -> None:
        raise OpmemError("index is locked")

    report = run_import(home, "claude", [projects], hooks=IngestHooks(after_ingest=(refuses,)))
    assert report.warnings == ["after-ingest hook: index is locked"] * 2
    assert report.new_sessions == 2  # the import itself is not affected

    def broken(sessions: frozenset[str]) -> None:
        raise ZeroDivisionError("bug")

    more = tmp_path / "more"
    two_sessions(more)
    with pytest.raises(ZeroDivisionError):
        run_import(home, "claude", [more / "projects"], hooks=IngestHooks(after_ingest=(broken,)))


def test_watch_reports_each_poll_and_idle_flush(home, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    path = folder / f"{A}.jsonl"
    t = Transcript(session=A)
    t.prompt("one")
    t.assistant("msg_A", text("reply one"))
    path.write_text("".join(t.lines()))
    batches: list[frozenset[str]] = []
    watcher = Watcher(
        home, ["claude"], [tmp_path / "projects"], idle_seconds=0.0, hooks=IngestHooks(after_ingest=(batches.append,))
    )
    watcher.poll(path)  # the prompt; the reply is held back until the file is quiet
    assert batches == [frozenset({f"cc-{A}"})]
    watcher.tick()  # quiet: the reply is written
    assert batches == [frozenset({f"cc-{A}"})] * 2
    watcher.tick()  # nothing left to flush: no batch
    watcher.poll(path)  # unchanged: no batch
    assert len(batches) == 2


def test_on_idle_is_rate_limited_by_idle_every(home, tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    ticks: list[int] = []
    hooks = IngestHooks(on_idle=(lambda: ticks.append(1),), idle_every=10.0)
    watcher = Watcher(home, ["claude"], [tmp_path / "projects"], hooks=hooks)
    watcher.idle(now=100.0)
    watcher.idle(now=105.0)
    watcher.idle(now=110.0)
    assert len(ticks) == 2


def test_the_watch_loop_ticks_on_idle_while_nothing_changes(home, tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    ticked = threading.Event()
    batches: list[frozenset[str]] = []
    hooks = IngestHooks(after_ingest=(batches.append,), on_idle=(ticked.set,), idle_every=0.0)
    watcher = Watcher(home, ["claude"], [tmp_path / "projects"], hooks=hooks)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert ticked.wait(30)
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    assert batches == []  # nothing was ingested
