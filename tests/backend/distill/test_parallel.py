"""A large run reads and extracts sessions in worker processes (backend/distill/parallel.py):
the memory it writes is byte for byte a serial run's; cancel, a dying pool and the auto rule.

Twin homes hold the same nodes (one written, then copied); both runs take the same ingestion
time (the DistillJob's `now`), so every record line is comparable as bytes.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from opmem_tui.backend.distill import parallel, pipeline
from opmem_tui.backend.distill.collect import pending_sessions
from opmem_tui.backend.distill.model import RunReport
from opmem_tui.backend.distill.parallel import ExtractPool, extract_sessions, new_nodes, pool_size, start_worker
from opmem_tui.backend.distill.pipeline import DistillJob, RunOptions, distil_pending, run_lock
from opmem_tui.backend.distill.state import DistillState, load_state
from opmem_tui.backend.home import Home

from .conftest import Chat

NOW = 1_800_000_000.0
SERIAL = RunOptions(project=False, workers=1, pool_min_nodes=0)
POOLED = RunOptions(project=False, workers=3, pool_min_nodes=0)  # two workers beside the main process


def corpus(home: Home, sessions: int = 12, first: int = 0) -> None:
    """Coding sessions with edits, test runs, a single-valued relation that changes, names to link."""
    for k in range(first, first + sessions):
        chat = Chat(home, f"s{k:02d}", start=1_700_000_000.0 + 1000 * k)
        chat.user(f"Mel asked for the report; the worker listens on port {4000 + k % 3} now")
        chat.reply("I'll look.")
        chat.tool("Read", {"file_path": f"/work/proj/src/mod{k}.py"}, "def f(): return 1")
        chat.tool("Read", {"file_path": "./src/common.py" if k % 2 else "src/common.py"}, "X = 1")
        chat.tool("Edit", {"file_path": f"/work/proj/src/mod{k}.py", "old_string": "1", "new_string": "2"})
        chat.tool("Bash", {"command": "pytest -q"}, f"=== {10 + k} passed, {k % 2} failed in 0.3s ===", exit_code=k % 2)
        chat.reply("We decided to keep SQLite for the index. Melanie agreed.")
        name = "lm-studio" if k % 2 else "LMStudio"  # two spellings of one package: an alias merge
        chat.tool("Bash", {"command": f"pip install {name}"}, f"Successfully installed {name}-1.0")
        chat.commit()


def grow(home: Home, sid: str) -> None:
    """More nodes in a session's last turn (a turn distilled before is distilled whole again)."""
    last = home.sessions.get_nodes(sid)[-1]
    home.sessions.append_message(sid, "assistant", "Also ran pip install httpx.", parent_id=last.id, created_at=2e9)
    home.sessions.commit_turn(sid)


def distil(home: Home, options: RunOptions, **kw) -> RunReport:
    """What pipeline.run does, with the ingestion time pinned."""
    with run_lock(home, 0.0):
        job = DistillJob(home, options, kw.get("progress"), kw.get("cancel"), now=NOW)
        job.state = load_state(home.memory_dir)
        return distil_pending(job, time.monotonic())


def memory_bytes(home: Home) -> dict[str, str]:
    """A digest of every file under memory/ but the SQLite read cache and the cursors' file."""
    out = {}
    for path in sorted(home.memory_dir.rglob("*")):
        if path.is_file() and not path.name.startswith(".cache") and path.name != "state.json":
            out[path.relative_to(home.memory_dir).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def seqs(home: Home) -> dict[str, int]:
    return {sid: c.seq for sid, c in load_state(home.memory_dir).sessions.items()}


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[ExtractPool]:
    """Every pool a run starts, to see what the workers did. The workers start at the first
    session (these corpora are far smaller than what the main process takes first by default)."""
    made: list[ExtractPool] = []
    monkeypatch.setattr(parallel, "STARTUP_NODES", 0)

    class Recorded(ExtractPool):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(pipeline, "ExtractPool", Recorded)
    return made


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Home, Home]:
    serial = Home(tmp_path / "serial")
    corpus(serial)
    serial.sessions.update_session("s05", private=True)  # withheld: never sent, never distilled
    shutil.copytree(serial.path, tmp_path / "pooled")
    return serial, Home(tmp_path / "pooled")


def test_the_pool_writes_the_memory_a_serial_run_writes(twins: tuple[Home, Home], pools: list[ExtractPool]):
    serial, pooled = twins
    one = distil(serial, SERIAL)
    assert not pools
    two = distil(pooled, POOLED)
    [pool] = pools
    assert pool.taken == 12 and pool.served + pool.helped == 11  # all but the private one, extracted ahead
    # the workers took the first tasks; while they were starting, this process extracted later ones
    assert pool.served >= 4 and pool.helped >= 1
    assert (two.sessions, two.nodes, two.written) == (one.sessions, one.nodes, one.written)
    assert one.written.events and one.written.patches and one.contradictions and one.written.merges
    assert memory_bytes(pooled) == memory_bytes(serial)
    assert seqs(pooled) == seqs(serial) and "s05" not in seqs(serial)
    assert not multiprocessing.active_children()
    # incremental: grown turns (their old nodes), new sessions, cursors past 0; the same nodes in both
    grow(serial, "s03")
    grow(serial, "s07")
    corpus(serial, 3, first=20)
    shutil.rmtree(pooled.sessions_dir)
    shutil.copytree(serial.sessions_dir, pooled.sessions_dir)
    pooled = Home(pooled.path)
    assert distil(serial, SERIAL).sessions == 5
    assert distil(pooled, POOLED).sessions == 5
    # sessions whose stamp was too recent to trust are looked at again
    assert pools[1].served + pools[1].helped == pools[1].taken - 1 >= 5
    assert memory_bytes(pooled) == memory_bytes(serial)
    assert seqs(pooled) == seqs(serial)


def test_the_main_process_takes_the_first_sessions_while_the_workers_start(
    twins: tuple[Home, Home], pools: list[ExtractPool], monkeypatch: pytest.MonkeyPatch
):
    serial, pooled = twins
    monkeypatch.setattr(parallel, "STARTUP_NODES", 20)  # 8 nodes a session: the first three
    distil(serial, SERIAL)
    distil(pooled, POOLED)
    [pool] = pools
    assert pool.helped >= 3 and pool.served >= 4 and pool.served + pool.helped == 11
    assert memory_bytes(pooled) == memory_bytes(serial)


def test_cancel_stops_the_pool_and_keeps_exact_cursors(twins: tuple[Home, Home], pools: list[ExtractPool]):
    serial, pooled = twins
    seen: list[str] = []

    def progress(step) -> None:
        if step.stage == "distil":
            seen.append(step.detail)

    report = distil(pooled, POOLED, progress=progress, cancel=lambda: len(seen) >= 3)
    assert report.cancelled and seen == ["s00", "s01", "s02"]
    assert set(seqs(pooled)) == {"s00", "s01", "s02"}  # what was staged and flushed, nothing in flight
    assert {e.provenance.session_id for e in pooled.memory.timeline(limit=1000).events} == {"s00", "s01", "s02"}
    assert not multiprocessing.active_children()
    distil(pooled, POOLED)
    distil(serial, SERIAL)
    assert len(pools) == 2
    assert seqs(pooled) == seqs(serial)
    events = {e.id for e in serial.memory.timeline(limit=1000).events}
    assert {e.id for e in pooled.memory.timeline(limit=1000).events} == events


def test_a_pool_whose_workers_die_goes_on_serially(twins: tuple[Home, Home], pools: list[ExtractPool]):
    serial, pooled = twins
    killed: list[int] = []

    def progress(step) -> None:
        if step.stage == "distil" and step.done == 2:
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)

    distil(serial, SERIAL)
    report = distil(pooled, POOLED, progress=progress)
    assert killed
    [pool] = pools
    assert pool.broken and pool.local_after_break >= 1 and pool.served + pool.helped < 11
    assert any("the extraction workers stopped" in note for note in report.notes), report.notes
    assert memory_bytes(pooled) == memory_bytes(serial)  # every record once, none lost
    assert seqs(pooled) == seqs(serial)


def test_a_pool_that_cannot_start_leaves_the_run_serial(
    twins: tuple[Home, Home], pools: list[ExtractPool], monkeypatch: pytest.MonkeyPatch
):
    serial, pooled = twins

    def refuse(*args, **kwargs):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", refuse)
    report = distil(pooled, POOLED)
    distil(serial, SERIAL)
    [pool] = pools
    assert pool.served == 0 and pool.local_after_break == 12
    assert any("Resource temporarily unavailable" in note for note in report.notes), report.notes
    assert memory_bytes(pooled) == memory_bytes(serial)


def test_a_small_run_stays_serial(home: Home, pools: list[ExtractPool]):
    corpus(home, 3)
    report = distil(home, RunOptions(project=False, workers=2))  # the default threshold: a few sessions
    assert report.sessions == 3 and not pools
    grow(home, "s01")
    assert distil(home, RunOptions(project=False)).sessions == 1 and not pools  # auto: an incremental run


def test_an_llm_run_stays_serial(home: Home):
    home.path.mkdir(parents=True)
    (home.path / "config.toml").write_text('[distill]\nextractor = "llm"\n', encoding="utf-8")
    corpus(home, 3)
    pending = pending_sessions(home.sessions, DistillState())
    assert len(pending) == 3 and pipeline._pool(DistillJob(home, POOLED, None, None), pending) is None
    rules = pipeline._pool(DistillJob(home, RunOptions(workers=2, pool_min_nodes=0, llm=False), None, None), pending)
    assert rules is not None  # the same run with the rules asked for
    rules.close()


def test_the_auto_rule():
    assert pool_size(1, 8) == 0  # serial
    assert pool_size(0, 1) == 0  # one CPU: no pool
    assert pool_size(0, 2) == 2  # a worker per CPU beside the distilling process
    assert pool_size(0, 64) == parallel.AUTO_MAX_WORKERS
    assert pool_size(3, 1) == 2  # asked for: three processes, the distilling one included


def test_the_estimate_counts_the_new_nodes_from_file_names(home: Home):
    corpus(home, 4)
    pending = pending_sessions(home.sessions, DistillState())
    total = sum(len(home.sessions.get_nodes(p.session_id)) for p in pending)
    assert new_nodes(pending, 10**9) == total == 32
    assert new_nodes(pending, 9) == 16  # stops once it has enough


def tree(root: Path) -> dict[str, tuple[int, int, str]]:
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        out[path.relative_to(root).as_posix()] = (st.st_size if path.is_file() else 0, st.st_mtime_ns, digest)
    return out


def test_a_worker_writes_nothing_and_leaves_a_repair_to_the_main_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = Home(tmp_path / "home")
    corpus(home, 3)
    shutil.rmtree(home.sessions.path_for("s01") / ".git")  # a folder git does not cover: its first read repairs it
    home = Home(home.path)  # a process that has not opened it
    twin = Home(tmp_path / "twin")
    shutil.copytree(home.path, twin.path)
    before = tree(home.path)
    monkeypatch.setattr(parallel._Worker, "home", None)
    monkeypatch.setattr(parallel._Worker, "rules", None)
    start_worker(Home, str(home.path), os.getppid())  # this process plays the worker
    results = extract_sessions(pending_sessions(home.sessions, DistillState()), NOW)
    assert tree(home.path) == before
    assert [r is None for r in results] == [False, True, False]
    assert all(len(r) == 1 and r[0].extraction.events for r in results if r is not None)
    # the main process reads (and repairs) the one handed back, as a serial run does; the repairs
    # of the two homes are commits made at different times, so the events name different commits
    assert distil(home, POOLED).written == distil(twin, SERIAL).written
    commits = {t.commit for t in home.sessions.get_turns("s01")}
    assert (home.sessions.path_for("s01") / ".git").is_dir() and None not in commits

    def said(home: Home) -> set[tuple[str, str]]:
        return {(e.provenance.session_id, e.summary) for e in home.memory.timeline(limit=1000).events}

    assert said(home) == said(twin)
    assert {
        e.provenance.commit for e in home.memory.timeline(limit=1000).events if e.provenance.session_id == "s01"
    } <= commits


def test_a_worker_that_cannot_open_the_home_says_why_to_the_main_process(monkeypatch: pytest.MonkeyPatch):
    def broken(*args, **kwargs):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(parallel._Worker, "home", None)
    monkeypatch.setattr(parallel._Worker, "rules", None)
    monkeypatch.setattr(parallel._Worker, "failed", "")
    parallel.start_worker(
        broken, "/nowhere", os.getppid()
    )  # nothing raised in the initializer: a pool would log it on the terminal
    with pytest.raises(parallel.WorkerUnavailable, match="Permission denied"):
        extract_sessions([], NOW)
