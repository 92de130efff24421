"""Stages 1 and 2 of a large run on every core: sessions read, collected and extracted in worker processes.

What a session gives up to its rules extraction is a function of its nodes alone
(collect_session, then extract_rules at the run's ingestion time), so worker processes compute
it while the main process links, reconciles and writes the sessions before it. The main process
takes the results in pending order, a bounded number ahead, and does everything else as a
serial run does (withheld check, link, reconcile, flush, cursors, progress, cancel): the memory
written is the same, byte for byte. While the next result is not ready, the main process runs a
later session's task itself rather than wait (a core it would leave idle). An LLM run stays
serial (its client and budget are the main process's).

A program that distils must guard its main module (`if __name__ == "__main__":`), as every
"spawn" pool needs: each worker imports it again (`opmem` and the bench scripts do).

Workers are started with "spawn" (the app distils from a thread, and forking a threaded process
is unsafe) and open the home by path to read it. A reader's first read may repair a session
(commit nodes a crashed writer left, SessionStore._repair_unwaited); a worker never does: it
hands such a session back and the main process reads it, repairing it as a serial run would.
A pool that cannot start or that breaks (a worker killed) leaves the rest to the main process
and the run's notes say so; a result not yet taken is dropped, never staged twice.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import OpmemError
from ..privacy.exclusions import Exclusions, read_meta
from ..store.git_mirror import GIT_ERRORS
from ..store.mirror_backlog import HERE, LIVE
from ..store.session_repo import SessionRepo
from ..store.sessions import SessionStore
from ..worker_process import start_worker_process
from .collect import Pending, collect_session, newest_seq
from .extract import extract_rules
from .model import Extraction, SessionBatch

if TYPE_CHECKING:
    from ..home import Home

# A run is worth the workers' start (a fresh interpreter each, ~0.35 s of CPU for its imports)
# from about this many new nodes on: reading and extracting costs ~0.1 ms a node, so below it
# the most a second core could save is a fraction of a second.
POOL_MIN_NODES = 10_000
# Auto: a worker per usable CPU beside the main process, which links, reconciles and writes
# and extracts only while it would wait (on 2 idle cores, 28,394 nodes: 2 workers 2.26 s, 1
# worker 2.62 s, serial 3.54 s; with the cores busy with other work 1 worker did a little better),
# up to this many: past it the main process's share (a fifth of the work or more, plus taking the
# results) is the bound, and each worker costs its own start and memory.
AUTO_MAX_WORKERS = 4
TASK_NODES = 1_000  # one task: consecutive sessions up to about this many new nodes...
TASK_SESSIONS = 32  # ...and at most this many (a task's cost is one round trip)...
TASKS_PER_WORKER = 8  # ...and few enough that each worker gets about this many (the load evens out)
AHEAD_PER_WORKER = 2  # tasks in flight per worker: what the results may hold in memory
# The main process itself takes the first sessions, up to about this many nodes: what it reads
# and extracts in the ~0.35 s a worker takes to start (the workers begin after them).
STARTUP_NODES = 3_000


@dataclass(frozen=True, slots=True)
class Extracted:
    """One batch of a session as the main process stages it: its extraction and its cursor."""

    extraction: Extraction
    old_nodes: frozenset[str]
    last_seq: int
    nodes: int

    @classmethod
    def of(cls, extraction: Extraction, batch: SessionBatch) -> Extracted:
        return cls(extraction, batch.old_nodes, batch.last_seq, sum(len(t.nodes) for t in batch.turns))


Result = tuple[Extracted, ...] | None  # None: the main process reads this session itself


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(setting: int, cpus: int) -> int:
    """Worker processes for a large run (0: serial). `setting` is `[distill] workers`, the processes
    that extract, the distilling one included: 0 auto (a worker per usable CPU, up to
    AUTO_MAX_WORKERS, none on one CPU), 1 only the distilling process, N that many (N - 1 workers)."""
    if setting:
        return setting - 1
    return min(cpus, AUTO_MAX_WORKERS) if cpus >= 2 else 0


def new_nodes(pending: Sequence[Pending], enough: int) -> int:
    """The new nodes of `pending`, from the node files' names (no file opened); counting stops
    once `enough` is reached, so a large backlog costs a few folder listings."""
    total = 0
    for item in pending:
        if total >= enough:
            break
        total += _estimate(item)
    return total


def _estimate(item: Pending) -> int:
    return max(0, newest_seq(item.folder) - item.cursor.seq) if item.folder else 0


# ---------------------------------------------------------------------------- the worker side


class NeedsRepair(OpmemError):
    """A session whose first read would write (SessionStore._repair_unwaited): the main process reads it."""


class ReadOnlyStore(SessionStore):
    """A SessionStore whose reads never repair: where the store would commit what git misses, it
    raises NeedsRepair instead. Nothing else on the read path writes."""

    def _repair_unwaited(self, repo: SessionRepo) -> bool:
        if self._mirror_mark(repo.id).state() in (HERE, LIVE):
            return False  # the store reads such a session from its node files too, writing nothing
        try:
            if repo.mirror.exists() and not repo.missing_node_ids(self._in_flight(repo.id).live_since()):
                return False
        except GIT_ERRORS:
            pass  # a broken mirror: whatever the store does about it, it does in the main process
        raise NeedsRepair(repo.id)


class WorkerUnavailable(OpmemError):
    """A worker that could not open the home: the pool stops, the main process reads the rest."""


class _Worker:
    home: Home | None = None
    rules: Exclusions | None = None
    failed = ""


def start_worker(home_type: type[Home], home_path: str, parent: int) -> None:
    """The pool's initializer: the home opened by path, for reading only (`parent`: the pool's pid).
    `home_type`: the facade's class, handed down (distill sits below home.py, which imports it)."""
    start_worker_process(parent)
    try:
        home = home_type(Path(home_path), durable=False)
        settings = home.config.store
        # Every read of this home (meta.json, the projects' names for the exclusions) goes through it.
        home.__dict__["sessions"] = ReadOnlyStore(
            home.sessions_dir, cache_cap=settings.session_cache_cap, durable=False, lock_timeout=settings.lock_timeout_s
        )
        _Worker.home, _Worker.rules = home, home.exclusions()
    except Exception as exc:  # said by the first task, not logged on the terminal (the app may own it)
        _Worker.failed = f"{type(exc).__name__}: {exc}"


def extract_sessions(items: Sequence[Pending], now: float) -> list[Result]:
    """The task a worker runs: each session's batches, extracted. None for a session it must not
    read: one withheld from the memory (the main process decides again and skips it) or one whose
    first read would repair it."""
    home, rules = _Worker.home, _Worker.rules
    if home is None or rules is None:
        raise WorkerUnavailable(_Worker.failed or "extract_sessions runs in a worker started by start_worker")
    out: list[Result] = []
    for item in items:
        meta = read_meta(home, item.session_id)
        if meta is not None and rules.reason(meta) is not None:
            out.append(None)
            continue
        try:
            batches = collect_session(home.sessions, home.projects, item)
        except NeedsRepair:
            out.append(None)
            continue
        out.append(tuple(Extracted.of(_sendable(extract_rules(b, ingestion_time=now)), b) for b in batches))
    return out


def _sendable(extraction: Extraction) -> Extraction:
    # Without the turn facts: only the LLM extractor (never pooled) reads them after stage 2, and
    # they are a fifth of what the main process would unpickle.
    return replace(extraction, facts=())


# ---------------------------------------------------------------------------- the main side


@dataclass
class _Sent:
    items: tuple[Pending, ...]
    future: Future[list[Result]] | None  # None: not sent (the pool is gone, or done here)
    here: list[Result] | None = None  # what this process extracted itself while it waited


Local = Callable[[Pending], Result]  # a worker's task for one session, run in the main process


class ExtractPool:
    """Worker processes that read and extract `pending` ahead of the main process.

    `take(item)` returns the next session's result, in pending order (None: read it in this
    process); `close()` stops the workers, drops what was not taken, and returns the notes for
    the run's report. `local`: while the next result is not ready, the main process runs the
    task of a later session itself (so it never idles, and one worker fewer pays its start).
    """

    def __init__(
        self,
        home: Home,
        pending: Sequence[Pending],
        workers: int,
        now: float,
        *,
        local: Local | None = None,
    ) -> None:
        self.workers = max(1, workers)
        self.now = now
        self.local = local
        self.taken = 0  # sessions taken
        self.served = 0  # of them, extracted by a worker
        self.helped = 0  # ...or extracted ahead by this process
        self.local_after_break = 0
        self.broken = ""  # why the pool stopped, when it did
        self._sent: deque[_Sent] = deque()
        self._ready: deque[tuple[Pending, Result, bool]] = deque()  # (session, result, extracted here)
        first = 0
        if local is not None:
            nodes = 0
            while first < len(pending) and nodes < STARTUP_NODES:
                nodes += _estimate(pending[first])
                first += 1
        self._first: deque[Pending] = deque(pending[:first])
        rest = pending[first:]
        self._tasks = self._group(rest, max(1, min(TASK_SESSIONS, len(rest) // (self.workers * TASKS_PER_WORKER))))
        self._executor: ProcessPoolExecutor | None = None
        try:
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,
                initargs=(type(home), str(home.path), os.getpid()),
            )
        except (OSError, ValueError, RuntimeError) as exc:
            self._stop(exc)
        self._fill()  # the workers start now, while this process takes the first sessions

    def _group(self, pending: Sequence[Pending], most: int) -> Iterator[tuple[Pending, ...]]:
        """Consecutive sessions, a task each, in pending order."""
        group: list[Pending] = []
        nodes = 0
        for item in pending:
            group.append(item)
            nodes += _estimate(item)
            if nodes >= TASK_NODES or len(group) >= most:
                yield tuple(group)
                group, nodes = [], 0
        if group:
            yield tuple(group)

    def _fill(self) -> None:
        while sum(1 for sent in self._sent if sent.here is None) < self.workers * AHEAD_PER_WORKER:
            nxt = next(self._tasks, None)
            if nxt is None:
                return
            items, future = nxt, None
            if self._executor is not None:
                try:
                    future = self._executor.submit(extract_sessions, items, self.now)
                except (BrokenProcessPool, OSError, RuntimeError) as exc:
                    self._stop(exc)
            self._sent.append(_Sent(items, future))

    def take(self, item: Pending) -> Result:
        if self._first:
            head = self._first.popleft()
            if head == item:
                self.taken += 1
                result = self._here(item)
                self.helped += result is not None
                return result
            self._first.clear()
            self._stop(RuntimeError(f"session {item.session_id} taken out of order"))
            return self._local(None)
        if not self._ready:
            self._fill()
            while self._sent and not self._ready_first() and self._help():
                pass
            if not self._sent:
                return self._local(None)
            sent = self._sent.popleft()
            here = sent.here is not None
            self._ready.extend((i, r, here) for i, r in zip(sent.items, self._results(sent), strict=True))
            self._fill()
        head, result, here = self._ready.popleft()
        if head != item:  # the caller left the pending order: nothing more from the pool
            self._stop(RuntimeError(f"session {item.session_id} taken out of order"))
            self._ready.clear()
            return self._local(None)
        self.taken += 1
        if result is None:
            return self._local(None)
        if here:
            self.helped += 1
        else:
            self.served += 1
        return result

    def _ready_first(self) -> bool:
        first = self._sent[0]
        return first.here is not None or first.future is None or first.future.done()

    def _help(self) -> bool:
        """Run the next task not sent yet in this process; False when there is none (or enough are held)."""
        if self.local is None or self._executor is None:
            return False
        if sum(1 for sent in self._sent if sent.here is not None) >= self.workers * AHEAD_PER_WORKER:
            return False
        items = next(self._tasks, None)
        if items is None:
            return False
        self._sent.append(_Sent(items, None, [self._here(item) for item in items]))
        return True

    def _here(self, item: Pending) -> Result:
        try:
            return self.local(item) if self.local is not None else None
        except Exception:  # read again at its turn: an error shows there, after what precedes it is written
            return None

    def _local(self, result: Result) -> Result:
        if self.broken:
            self.local_after_break += 1
        return result

    def _results(self, sent: _Sent) -> list[Result]:
        if sent.here is not None:
            return sent.here
        if sent.future is None:
            return [None] * len(sent.items)
        try:
            results = sent.future.result()
        except (BrokenProcessPool, WorkerUnavailable) as exc:
            self._stop(exc)
            return [None] * len(sent.items)
        except Exception:  # the main process reads them again: the same error, if any, shows there
            return [None] * len(sent.items)
        if len(results) != len(sent.items):
            return [None] * len(sent.items)
        return results

    def _stop(self, exc: BaseException) -> None:
        if not self.broken:
            self.broken = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        self._shutdown()
        for sent in self._sent:
            sent.future = None  # their results are read in this process instead

    def _shutdown(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            # Waits for the tasks already running (one per worker at most), so no child outlives the run.
            executor.shutdown(wait=True, cancel_futures=True)

    def close(self) -> list[str]:
        self._shutdown()
        self._sent.clear()
        self._ready.clear()
        if not self.broken:
            return []
        return [
            f"the extraction workers stopped ({self.broken}); "
            f"{self.local_after_break:,} sessions were read in the main process instead"
        ]
