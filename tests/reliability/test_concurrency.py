"""Concurrency suite: writers and readers on one home at once, for a bounded amount of work.

Two processes append to their own sessions, two to the same session, one imports a transcript,
`opmem watch` follows a file that grows meanwhile, one runs the distillation, and one reads
through the app's data layer (listing and replays) until the writers are done. Then: every
process ended without an error, every count is exact (no lost write), every session reopens
with `git fsck --strict` clean. The reader's longest single read is measured and printed by the
long mode (`python bench/reliability.py --suite concurrency --long`); CI never asserts time.
A lock held too long is an error naming it (tests/backend/store/test_lock_timeout.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import

from ..backend.store.session_lock_holder import hold, release
from .stores import reopen_and_fsck
from .test_crash import coding_corpus, write_transcript

WORKER = Path(__file__).with_name("concurrency_worker.py")
HANG_GUARD = 900.0  # seconds: only a deadlock gets here; nothing is timed by it


@dataclass
class Outcome:
    errors: list[str] = field(default_factory=list)
    longest_read: float = 0.0
    reads: int = 0
    nodes: int = 0


def start(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(home), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen, name: str, outcome: Outcome) -> str:
    out, err = proc.communicate(timeout=HANG_GUARD)
    if proc.returncode != 0 or "Traceback" in err:
        outcome.errors.append(f"{name} failed (exit {proc.returncode}): {err[-1500:]}")
    return out


def run_contention(base: Path, turns: int, lines: int) -> Outcome:
    outcome = Outcome()
    home_path = base / "home"
    coding_corpus(Home(home_path), 4)  # something to distil and to read from the start
    transcript = base / "transcript.jsonl"
    write_transcript(transcript, lines)
    watched = base / "watched" / "live.jsonl"
    watched.parent.mkdir()
    watched.write_text("")
    stop = base / "stop-reading"
    env = {**os.environ, "OPMEM_HOME": str(home_path)}
    watch = subprocess.Popen(
        [sys.executable, "-c", "from opmem_tui.cli import main; main()", "watch", "jsonl", "--path", str(watched),
         "--no-bind", "--idle", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    reader = start(home_path, "read", str(stop))
    writers = {
        "append a": start(home_path, "append", "own-a", str(turns)),
        "append b": start(home_path, "append", "own-b", str(turns)),
        "append shared 1": start(home_path, "append", "shared", str(turns), "one"),
        "append shared 2": start(home_path, "append", "shared", str(turns), "two"),
        "import": start(home_path, "import", str(transcript)),
        "distill": start(home_path, "distill", "2"),
    }
    with watched.open("a") as live:  # the watched file grows while the others write
        for n in range(lines // 4):
            live.write(json.dumps({"session": "live", "id": f"w{n}", "role": ("user", "assistant")[n % 2],
                                   "content": f"live line {n}"}) + "\n")  # fmt: skip
            live.flush()
    for name, proc in writers.items():
        finish(proc, name, outcome)
    home = Home(home_path)
    deadline = time.monotonic() + HANG_GUARD
    while _count(home, "jsonl-live") < lines // 4 and time.monotonic() < deadline and watch.poll() is None:
        time.sleep(0.2)  # the watcher is another process: poll its result, bounded by the guard
    watch.send_signal(signal.SIGTERM)  # as a supervisor stops it; SIGINT may be ignored
    _, err = watch.communicate(timeout=HANG_GUARD)
    if "Traceback" in err:
        outcome.errors.append(f"opmem watch: {err[-1500:]}")
    stop.write_text("")
    out = finish(reader, "reader", outcome)
    if out.startswith("done"):
        _, longest, reads = out.split()
        outcome.longest_read, outcome.reads = float(longest), int(reads)
    home = Home(home_path)
    expected = {"own-a": 2 * turns, "own-b": 2 * turns, "shared": 4 * turns, "jsonl-live": lines // 4}
    for sid, count in expected.items():
        if _count(home, sid) != count:
            outcome.errors.append(f"session {sid}: {_count(home, sid)} nodes, {count} written")
    imported = sum(_count(home, f"jsonl-big{k}") for k in range(4))
    if imported != lines:
        outcome.errors.append(f"import: {imported} nodes, the transcript has {lines}")
    shared = home.sessions.get_nodes("shared")
    if len({n.seq for n in shared}) != len(shared):
        outcome.errors.append("session shared: two nodes with one seq")
    outcome.nodes = sum(expected.values()) + lines
    outcome.errors.extend(reopen_and_fsck(home))
    if home.memory.stats().events == 0:
        outcome.errors.append("the distillation wrote nothing")
    return outcome


def _count(home: Home, sid: str) -> int:
    try:
        return len(home.sessions.get_nodes(sid))
    except Exception:  # not created yet
        return 0


def test_writers_and_readers_at_once_lose_nothing(tmp_path: Path) -> None:
    outcome = run_contention(tmp_path, turns=8, lines=120)
    assert not outcome.errors, "\n".join(outcome.errors)
    assert outcome.reads > 0


def test_the_apps_reads_never_wait_for_a_session_lock(tmp_path: Path) -> None:
    """Structural, not timed: another process holds every session's lock (and locations.json's)
    for the whole read, and the app's data layer, told never to wait for a lock, reads every
    session exactly as it reads them with the locks free."""
    home = Home(tmp_path / "home")
    coding_corpus(home, 3)
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, 60)
    run_import(home, "jsonl", [transcript], bind=False)
    free = _read_once(home.path)
    sessions = [meta.id for meta in home.sessions.list_sessions().sessions]
    assert len(free) == len(sessions) == 7 and all(entry["turns"] for entry in free.values())
    locks = [home.sessions.locks_dir / f"{sid}.lock" for sid in sessions]
    holder = hold(*locks, home.sessions.locks_dir / "locations.lock")
    try:
        assert _read_once(home.path) == free
    finally:
        release(holder)


def _read_once(home: Path) -> dict:
    outcome = Outcome()
    out = finish(start(home, "read-once"), "reader", outcome)
    assert not outcome.errors, outcome.errors[0]
    return json.loads(out)
