"""`opmem watch` stops on SIGTERM wherever the signal lands, and leaves only whole sessions.

The signal is sent from inside the watch process at a chosen point of its real code
(signal_at.py): right after start (entering the catch-up), while a step imports, while a
finalizer runs on the main thread (filelock's __del__: Python swallows an exception raised by a
handler there, which is how a SIGTERM was lost and the watch ran on), while a distillation the
watch started runs; and, from outside, SIGTERM or Ctrl-C's SIGINT while the watch waits for changes. Each time: exit
status 0 before the hang guard (a deadlock detector, not a timing), `opmem verify` clean, the
stored session is a prefix of the file's messages in order (nothing torn, nothing skipped),
and an import afterwards completes it with every message exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home

from .stores import reopen_and_fsck
from .test_crash import coding_corpus

HARNESS = Path(__file__).with_name("signal_at.py")
HANG_GUARD = 120.0  # seconds: only a watch that never stops gets here; nothing is timed by it
MESSAGES = 60

POINTS = {
    "right after start": ("backend/importers/watch.py", "catch_up", 1),
    "while importing": ("backend/importers/ingest.py", "ingest", 2),
    "inside a finalizer": ("filelock/_core/_lock.py", "__del__", 1),
    "while distilling": ("backend/distill/pipeline.py", "distil_pending", 1),
}


def _line(n: int) -> str:
    return json.dumps({"session": "live", "id": f"w{n}", "role": ("user", "assistant")[n % 2], "content": f"turn {n}"})


def _start(tmp_path: Path, prefix: list[str]) -> tuple[Path, Path, subprocess.Popen]:
    """A watch over a file whose first half is there at start (the catch-up reads it) and whose
    second half is written once the catch-up reported, line by line (the live watch reads it)."""
    home = tmp_path / "home"
    coding_corpus(Home(home), 2)  # idle sessions: the watch's first idle tick starts a distillation
    watched = tmp_path / "watched" / "live.jsonl"
    watched.parent.mkdir()
    watched.write_text("".join(_line(n) + "\n" for n in range(MESSAGES // 2)))
    args = ["watch", "jsonl", "--path", str(watched), "--no-bind", "--idle", "0.1"]
    proc = subprocess.Popen(
        [sys.executable, *prefix, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPMEM_HOME": str(home)},
    )
    _read_until(proc, lambda line: "catch-up:" in line)  # or the end: stopped before it reported
    with watched.open("a") as live:
        for n in range(MESSAGES // 2, MESSAGES):
            live.write(_line(n) + "\n")
            live.flush()
    return home, watched, proc


def _read_until(proc: subprocess.Popen, seen: Callable[[str], bool]) -> None:
    """Read the watch's output until `seen` says so or the output ends (the guard kills a hang)."""
    guard = threading.Timer(HANG_GUARD, proc.kill)
    guard.start()
    try:
        for line in proc.stdout:
            if seen(line):
                return
    finally:
        guard.cancel()


def _stopped(proc: subprocess.Popen) -> str:
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        if "signal_at:" not in err:
            pytest.fail(f"the harness never sent SIGTERM (the point was not reached):\n{err[-1500:]}")
        pytest.fail(f"opmem watch did not stop within {HANG_GUARD:.0f}s of SIGTERM:\n{out[-1500:]}\n{err[-1500:]}")
    assert proc.returncode == 0, f"exit {proc.returncode}: {err[-1500:]}"
    assert "Traceback" not in err and "Exception ignored" not in err, err[-1500:]
    return out


def _assert_whole(home_path: Path, watched: Path) -> None:
    home = Home(home_path)
    assert reopen_and_fsck(home) == []
    try:
        stored = [node.id for node in home.sessions.get_nodes("jsonl-live")]
    except Exception:  # stopped before the session's first node
        stored = []
    assert stored == [f"w{n}" for n in range(len(stored))], "the stored session is not a prefix of the file"
    done = subprocess.run(
        [sys.executable, "-c", "from opmem_tui.cli import main; main()", "import", "jsonl", str(watched), "--no-bind"],
        capture_output=True,
        text=True,
        env={**os.environ, "OPMEM_HOME": str(home_path)},
        timeout=HANG_GUARD,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    home = Home(home_path)
    assert [node.id for node in home.sessions.get_nodes("jsonl-live")] == [f"w{n}" for n in range(MESSAGES)]
    assert reopen_and_fsck(home) == []
    home.memory.stats()  # the memory a stopped distillation left reads


@pytest.mark.parametrize("point", list(POINTS))
def test_sigterm_at_any_point_stops_the_watch_whole(tmp_path: Path, point: str) -> None:
    suffix, function, nth = POINTS[point]
    threads = ["all"] if point == "while distilling" else []
    home, watched, proc = _start(tmp_path, [str(HARNESS), suffix, function, str(nth), *threads, "--"])
    _stopped(proc)
    _assert_whole(home, watched)


# Ctrl-C in a terminal: SIGINT raises KeyboardInterrupt (set here: a test worker may ignore SIGINT).
INTERACTIVE = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); from opmem_tui.cli import main; main()"
)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "ctrl-c"])
def test_a_signal_while_the_watch_waits_stops_it_whole(tmp_path: Path, signum: int) -> None:
    home, watched, proc = _start(tmp_path, ["-c", INTERACTIVE])
    imported = MESSAGES // 2  # the catch-up's line was read by _start

    def all_in(line: str) -> bool:  # the watch's own report of every message: it is waiting now
        nonlocal imported
        if ": +" in line:
            imported += int(line.split(": +")[1].split()[0])
        return imported >= MESSAGES

    _read_until(proc, all_in)
    assert imported == MESSAGES, f"the watch reported {imported} of {MESSAGES} messages"
    proc.send_signal(signum)
    _stopped(proc)
    _assert_whole(home, watched)
