"""A run killed with SIGKILL midway, run again, ends with exactly the records of an uninterrupted run.

The corpus is written once and copied, so both homes hold the same nodes. The killed run is a
real subprocess: once paused at a batch edge right after a memory write (before or after the
cursor moved), and once killed at whatever point it had reached shortly after it started (mid
batch, mid append: the memory reads a torn last line as the interruption it is).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from opmem_tui.backend.distill.memory_port import read_contradictions
from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.distill.state import load_state, read_inflight
from opmem_tui.backend.home import Home

from .conftest import Chat

# The child pauses (so the parent can kill it at a known point) by wrapping a function of the
# real code: after the cursor of batch N moved; after its records, merges and patches were
# written but before its cursor moved; after its records were appended but before its alias
# merges and supersede patches were; after its cursor moved but before the in-flight note was
# cleared (the note must then be read as done: the batch is not staged again).
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from opmem_tui.backend.home import Home
    from opmem_tui.backend.distill import pipeline
    from opmem_tui.backend.memory import store

    home, mode, after = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    calls = {"n": 0}

    def pause_on(owner, name):
        original = getattr(owner, name)
        def wrapper(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == after:
                print("paused", flush=True)
                time.sleep(600)
            return original(*args, **kwargs)
        setattr(owner, name, wrapper)

    if mode == "before-cursor":
        pause_on(pipeline, "save_state")
    elif mode == "before-patches":
        pause_on(store.MemoryWriter, "supersede_many")  # a flush's patches, written together
    elif mode == "before-inflight-cleared":
        pause_on(pipeline, "write_inflight")  # even calls: a flush's cursors moved, its ids not yet let go

    def progress(step):
        if step.stage == "distil":
            print(f"batch {step.done}", flush=True)
            if mode == "after-cursor" and step.done == after:
                print("paused", flush=True)
                time.sleep(600)

    pipeline.run(Home(home), pipeline.RunOptions(project=False, flush_records=1), progress=progress)
    print("finished", flush=True)
    """
)


def corpus(home: Home) -> None:
    """Sessions with edits, test runs, a contradiction across sessions and names to link."""
    for k in range(8):
        chat = Chat(home, f"s{k}", start=1_700_000_000.0 + 1000 * k)
        chat.user(f"Mel asked for the report; the worker listens on port {4000 + k % 3} now")
        chat.reply("I'll look.")
        chat.tool("Read", {"file_path": f"/work/proj/src/mod{k}.py"}, "def f(): return 1")
        chat.tool("Edit", {"file_path": f"/work/proj/src/mod{k}.py", "old_string": "1", "new_string": "2"})
        chat.tool("Bash", {"command": "pytest -q"}, f"=== {10 + k} passed, {k % 2} failed in 0.3s ===", exit_code=k % 2)
        chat.reply("We decided to keep SQLite for the index. Melanie agreed.")
        chat.user("now install httpx and commit")
        chat.reply()
        chat.tool("Bash", {"command": "pip install httpx"}, "Successfully installed httpx-0.27.0")
        chat.commit()


def records(home: Home) -> Counter:
    """Every record line of the memory's logs, without ingestion times (they differ by run)."""
    found: Counter = Counter()
    for path in sorted(home.memory_dir.rglob("*.jsonl")):
        if path.name == "contradictions.jsonl":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                continue  # a torn last line: not a record
            data.pop("ingestion_time", None)
            data.pop("at", None)
            if isinstance(data.get("provenance"), dict):
                data["provenance"].pop("ingestion_time", None)
            found[(path.relative_to(home.memory_dir).as_posix(), json.dumps(data, sort_keys=True))] += 1
    return found


def contradictions(home: Home) -> set[tuple[str, str]]:
    return {(c["kept"], c["retired"]) for c in read_contradictions(home.memory_dir)}


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Home, Home]:
    first = Home(tmp_path / "a")
    corpus(first)
    shutil.copytree(first.path, tmp_path / "b")
    return first, Home(tmp_path / "b")


def start_child(home: Home, mode: str, after: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home.path), mode, str(after)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for(child: subprocess.Popen, line: str) -> None:
    for out in child.stdout:
        if out.strip() == line:
            return
    raise AssertionError(f"the child ended before printing {line!r} (exit {child.wait()})")


def kill(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGKILL)
    assert child.wait(30) == -signal.SIGKILL


def assert_same(killed: Home, clean: Home) -> None:
    run(killed, RunOptions(project=False, flush_records=1))
    run(clean, RunOptions(project=False, flush_records=1))
    assert records(killed) == records(clean)
    assert contradictions(killed) == contradictions(clean)

    def seqs(home: Home) -> dict[str, int]:  # stamps are a cache hint that depends on the clock
        return {sid: c.seq for sid, c in load_state(home.memory_dir).sessions.items()}

    assert seqs(killed) == seqs(clean)
    assert read_inflight(killed.memory_dir) == set()
    assert run(killed, RunOptions(project=False)).written.total == 0


@pytest.mark.parametrize(
    "mode, after",
    [
        ("after-cursor", 1),
        ("after-cursor", 4),
        ("before-cursor", 3),
        ("before-patches", 2),
        ("before-inflight-cleared", 2),
        ("before-inflight-cleared", 6),
    ],
)
def test_killed_at_a_known_point(twins: tuple[Home, Home], mode: str, after: int):
    killed, clean = twins
    child = start_child(killed, mode, after)
    wait_for(child, "paused")
    kill(child)
    assert killed.memory.stats().events > 0  # it did write before it died
    if mode not in ("after-cursor", "before-inflight-cleared"):
        assert read_inflight(killed.memory_dir)  # it died between its memory write and its cursor
    assert_same(killed, clean)


def test_killed_anywhere(twins: tuple[Home, Home]):
    killed, clean = twins
    child = start_child(killed, "run", 0)
    wait_for(child, "batch 2")  # somewhere in batch 3: collecting, extracting or appending
    kill(child)
    assert_same(killed, clean)


def test_a_stale_note_is_let_go_by_a_whole_run(twins: tuple[Home, Home]):
    """A note without a flush number (as runs wrote it before) whose batches all moved their
    cursors: a partial run keeps it, a whole run lets it go (every batch in flight was staged again)."""
    home, _ = twins
    run(home, RunOptions(project=False, flush_records=1))
    stored = {g.edge.id for g in home.memory.edges(limit=None)}
    (home.memory_dir / ".distill-inflight.json").write_text(json.dumps({"ids": sorted(stored)}))
    assert read_inflight(home.memory_dir) == stored
    Chat(home, "s0", start=1_800_000_000.0).user("the worker listens on port 4100 now")
    run(home, RunOptions(project=False, flush_records=1, sessions=("s0",)))
    assert read_inflight(home.memory_dir) == stored
    Chat(home, "s1", start=1_800_000_100.0).user("the worker listens on port 4200 now")
    run(home, RunOptions(project=False, flush_records=1))
    assert read_inflight(home.memory_dir) == set()
