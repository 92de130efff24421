"""The SOURCES registry and run_import: discovery, skipping unchanged files, progress, cancel."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opmem_tui.backend.importers import SOURCES, get_importer, run_import
from opmem_tui.backend.importers.base import Importer
from opmem_tui.backend.importers.state import ImportState
from opmem_tui.backend.model import OpmemError

from .conftest import Transcript, text

AGENT_SOURCES = (
    "opencode",
    "cursor",
    "cline",
    "roo",
    "copilot",
    "crush",
    "goose",
    "qwen",
    "droid",
    "kimi",
    "continue",
    "amp",
)


def claude_tree(root: Path, count: int = 3) -> Path:
    projects = root / "projects"
    for i in range(count):
        t = Transcript(session=f"00000000-0000-4000-8000-00000000000{i}")
        t.prompt(f"question {i}")
        t.assistant(f"msg_{i}", text(f"answer {i}"))
        t.write(projects / "-tmp-project" / f"{t.session}.jsonl")
    return projects


def test_the_registry_maps_each_source_to_its_importer() -> None:
    assert list(SOURCES)[:3] == ["claude", "codex", "gemini"]  # the most used first, then by label
    assert list(SOURCES)[-1] == "jsonl"  # the generic format last
    assert {"aider", "openprogram", *AGENT_SOURCES} <= set(SOURCES)
    assert all(isinstance(importer, Importer) and importer.name == name for name, importer in SOURCES.items())
    assert get_importer("claude-code") is get_importer("cc") is SOURCES["claude"]
    with pytest.raises(OpmemError, match="unknown import source 'ghost' \\(available: claude, codex"):
        get_importer("ghost")


def test_default_paths_come_from_the_agent_home(home, tmp_path: Path, monkeypatch) -> None:
    claude_tree(tmp_path / "cfg")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    report = run_import(home, "claude")
    assert (report.new_sessions, report.turns) == (3, 3)


def test_unchanged_files_are_skipped_and_changed_ones_parsed(home, tmp_path: Path) -> None:
    projects = claude_tree(tmp_path)
    first = run_import(home, "claude", [projects])
    assert (first.sessions, first.skipped) == (3, 0)
    state = json.loads((home.path / "import-state.json").read_text())
    assert len(state["files"]) == 3 and all(e["complete"] for e in state["files"].values())
    target = next(projects.rglob("*0.jsonl"))
    more = Transcript(session="00000000-0000-4000-8000-000000000000")
    more.count, more.clock = 100, more.clock.replace(hour=18)
    more.prompt("follow-up", parent=None)
    with open(target, "a") as handle:
        handle.writelines(more.lines())
    os.utime(target, (1_600_000_500, 1_600_000_500))
    second = run_import(home, "claude", [projects])
    assert (second.sessions, second.skipped, second.nodes, second.turns) == (1, 2, 1, 1)


def test_an_import_state_that_does_not_parse_is_a_warning_and_everything_is_read_again(home, tmp_path: Path) -> None:
    projects = claude_tree(tmp_path)
    run_import(home, "claude", [projects])
    state = home.path / "import-state.json"
    state.write_text(state.read_text()[:40])  # a hand edit gone wrong
    again = run_import(home, "claude", [projects])
    assert again.skipped == 0 and again.nodes == 0  # read again, nothing doubled
    [warning] = [w for w in again.warnings if "import state" in w]
    assert warning.startswith(f"{state}: the import state does not parse (line ")
    assert "every file is imported again" in warning
    assert run_import(home, "claude", [projects]).warnings == []  # rewritten whole: quiet again


def test_a_live_file_is_parsed_again_until_complete(home, tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("q")
    t.assistant("msg_A", text("streaming..."))
    path = tmp_path / "live" / f"{t.session}.jsonl"
    path.parent.mkdir()
    path.write_text("".join(t.lines()))  # just written: live
    first = run_import(home, "claude", [path])
    assert first.nodes == 1  # the open reply is held back
    assert ImportState(home.path / "import-state.json").get(path).complete is False
    os.utime(path, (1_600_000_000, 1_600_000_000))  # the agent finished long ago
    second = run_import(home, "claude", [path])
    assert (second.skipped, second.nodes) == (0, 1)
    third = run_import(home, "claude", [path])
    assert third.skipped == 1


def test_progress_and_cancel(home, tmp_path: Path) -> None:
    projects = claude_tree(tmp_path, 3)
    calls: list[tuple[int, int, str]] = []
    run_import(home, "claude", [projects], progress=lambda d, t, label: calls.append((d, t, label)))
    assert [(d, t) for d, t, _ in calls] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert calls[0][2].endswith(".jsonl") and calls[-1][2] == ""
    stop_after = iter([False, True])
    report = run_import(home, "claude", [projects], cancel=lambda: next(stop_after), force=True)
    assert report.sessions == 1


def test_a_broken_file_is_a_warning_and_the_rest_imports(home, tmp_path: Path) -> None:
    projects = claude_tree(tmp_path, 2)
    unreadable = projects / "-tmp-project" / "ffffffff-0000-4000-8000-000000000000.jsonl"
    unreadable.write_bytes(b"\xff\xfe not utf-8 json\n")
    os.utime(unreadable, (1_600_000_000, 1_600_000_000))
    report = run_import(home, "claude", [projects])
    assert report.new_sessions == 2
    assert any(w.startswith(f"{unreadable}:1: invalid JSON") for w in report.warnings)


def test_a_path_that_does_not_exist_is_an_error_naming_it(home, tmp_path: Path) -> None:
    projects = claude_tree(tmp_path, 1)
    with pytest.raises(OpmemError, match=f"no such file or folder: {tmp_path / 'missing'}$"):
        run_import(home, "claude", [projects, tmp_path / "missing"])
    assert home.sessions.list_sessions().sessions == ()  # nothing was imported
    with pytest.raises(OpmemError, match="give a file or folder"):
        run_import(home, "jsonl")


def test_nothing_to_import_names_what_was_looked_for(home, tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "codex-sessions"
    folder.mkdir()
    (folder / "notes.jsonl").write_text("{}\n")
    report = run_import(home, "codex", [folder])
    assert report.warnings == [f"{folder}: nothing to import: no rollout-*.jsonl found"]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))
    report = run_import(home, "codex")
    assert report.warnings[0].endswith("sessions: not found: nothing to import (looked for rollout-*.jsonl)")
    assert str(tmp_path / "no-codex" / "sessions") in report.warnings[0]


def test_a_file_imported_as_the_wrong_source_is_read_again_as_the_right_one(home, tmp_path: Path) -> None:
    """`opmem import jsonl t.jsonl` on a Claude Code transcript imports nothing (a warning a line);
    the state still recorded the file as done, so `opmem import claude t.jsonl` then skipped it as
    unchanged: nothing imported and nothing said, while Claude Code deletes the transcript after
    30 days. A file is unchanged only for the source that read it."""
    t = Transcript(session="00000000-0000-4000-8000-0000000000aa")
    t.prompt("the question")
    t.assistant("msg_1", text("the answer"))
    path = t.write(tmp_path / "t.jsonl")
    wrong = run_import(home, "jsonl", [path])
    assert wrong.nodes == 0 and wrong.warnings
    right = run_import(home, "claude", [path])
    assert right.skipped == 0 and right.new_sessions == 1 and right.nodes >= 2, right
    again = run_import(home, "claude", [path])
    assert again.skipped == 1 and again.nodes == 0  # unchanged for the source that read it


def test_every_sync_ends_before_run_import_returns_and_a_failed_one_leaves_its_file_to_read_again(
    home, tmp_path: Path, monkeypatch
) -> None:
    """A backlog's batch-end syncs run on a worker thread: the import reports nothing before they are done."""
    import threading
    import time

    from opmem_tui.backend.store import node_log

    projects = claude_tree(tmp_path)
    failing = "00000000-0000-4000-8000-000000000001"
    real = node_log.sync_files
    done: list[str] = []

    def slow_sync(paths, folder: Path) -> None:
        assert threading.current_thread() is not threading.main_thread()
        time.sleep(0.05)  # still running when the next file is parsed
        if failing in str(folder):
            raise OSError(5, "Input/output error")
        real(paths, folder)
        done.append(folder.parent.name)

    monkeypatch.setattr(node_log, "sync_files", slow_sync)
    first = run_import(home, "claude", [projects], defer_mirror=True)
    assert sorted(done) == [f"cc-00000000-0000-4000-8000-00000000000{i}" for i in (0, 2)]
    assert [w for w in first.warnings if failing in str(w)] == [w for w in first.warnings]
    assert len(first.warnings) == 1 and "Input/output error" in str(first.warnings[0])
    state = json.loads((home.path / "import-state.json").read_text())
    assert len(state["files"]) == 2 and not any(failing in key for key in state["files"])
    monkeypatch.setattr(node_log, "sync_files", real)
    second = run_import(home, "claude", [projects], defer_mirror=True)
    assert (second.skipped, second.warnings) == (2, [])


@pytest.mark.skipif(not hasattr(os, "sync") or os.name != "posix", reason="syncfs is Linux's")
def test_a_large_backlog_batch_is_synced_with_one_syncfs_and_its_failure_is_the_files_warning(
    home, tmp_path: Path, monkeypatch
) -> None:
    """From SYNCFS_FROM node files on, a backlog batch's sync is one syncfs of the history folder's
    filesystem (not four calls a file); a syncfs that fails is that file's warning, named."""
    import ctypes
    import errno
    import threading

    from opmem_tui.backend.store import node_log

    if node_log._syncfs is None:
        pytest.skip("no syncfs in this libc")
    real = node_log._syncfs
    synced: list[str] = []
    fail = threading.Event()

    def syncfs(fd: int) -> int:
        synced.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd") else str(fd))
        if fail.is_set():
            ctypes.set_errno(errno.EIO)
            return -1
        return real(fd)

    monkeypatch.setattr(node_log, "_syncfs", syncfs)
    projects = tmp_path / "projects"
    folder = projects / "-tmp-project"
    large = Transcript(session="00000000-0000-4000-8000-000000000010")
    for k in range(2 * node_log.SYNCFS_FROM):
        large.prompt(f"question {k}")
        large.assistant(f"msg_{k}", text(f"answer {k}"))
    lines = large.lines()
    large_file = folder / f"{large.session}.jsonl"
    folder.mkdir(parents=True)
    large_file.write_text("".join(lines[: len(lines) // 2]))
    small = Transcript(session="00000000-0000-4000-8000-000000000011")
    small.prompt("one question")
    small.assistant("msg_small", text("one answer"))
    small.write(folder / f"{small.session}.jsonl")
    first = run_import(home, "claude", [projects], defer_mirror=True)
    assert (
        first.warnings == [] and first.nodes > node_log.SYNCFS_FROM + 2
    )  # the large batch's last reply waits for more
    assert len(synced) == 1 and synced[0].endswith("/history")  # the small batch: sync_files
    recorded = json.loads((home.path / "import-state.json").read_text())["files"]
    with large_file.open("a") as fh:  # the session grows by as many nodes again
        fh.write("".join(lines[len(lines) // 2 :]))
    fail.set()
    second = run_import(home, "claude", [projects], defer_mirror=True)
    assert len(second.warnings) == 1 and "Input/output error" in second.warnings[0], second.warnings
    assert str(large_file) in second.warnings[0]
    state = json.loads((home.path / "import-state.json").read_text())
    assert state["files"] == recorded  # the grown file is not recorded as imported: read again next time
    fail.clear()
    third = run_import(home, "claude", [projects], defer_mirror=True)
    assert third.warnings == [] and third.skipped == 1
    assert home.sessions.get_meta("cc-00000000-0000-4000-8000-000000000010").turn_count == 2 * node_log.SYNCFS_FROM
