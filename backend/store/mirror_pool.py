"""A backlog's git mirrors written in worker processes, beside the import that writes its sessions.

Sessions are independent repositories, so mirroring them is work for other cores: each worker
(spawned, nothing of this process's threads, locks or databases copied) opens its own
SessionStore on the same folder and writes whole sessions through `SessionStore.write_mirror`,
under the session's file lock, as another opmem process would. What it wrote comes back (the
commits and, per node, its turn and commit) for the caller to hand the search index, which then
reads nothing.

The mirror marker stays this process's (mirror_backlog.py): a worker writes what this process
promised. A worker killed, or a pool that cannot start, leaves its sessions to this process
(`MirrorWriter` writes them here); a killed import leaves its markers orphaned and the next start
adopts them, as before.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import OpmemError
from ..worker_process import start_worker_process

if TYPE_CHECKING:
    from .sessions import SessionStore

POOL_ERRORS = (BrokenProcessPool, OSError, RuntimeError, EOFError)


MAX_WORKERS = 4  # ~55 MB each; more cores than that are left to the rest of the machine
# Below the import's own process: its sessions are browsable first, the mirror takes the rest of
# the CPU (300 sessions, load 4.5: browsable 20 s, whole 22 s; at the same priority 25 s and 25 s).
NICE = 10


def default_workers() -> int:
    """A core each beside the import's own process (which parses ahead in one more, and writes
    the mirror itself once its sessions are written), at least one."""
    return max(1, min(MAX_WORKERS, (os.cpu_count() or 1) - 1))


@dataclass(frozen=True, slots=True)
class Mirrored:
    """One session's mirror as a worker wrote it: commits made, node id -> (turn, commit), or
    what went wrong (`failed`: the node files stay, the marker too)."""

    commits: int
    turns: dict[str, tuple[int, str]]
    failed: str = ""
    hints: tuple[str, ...] = ()  # change hints the worker could not write ("file: problem")


@dataclass(frozen=True, slots=True)
class StoreSpec:
    """What a worker needs to open the same store the way this process does."""

    root: str
    pack_threshold: int
    durable: bool
    lock_timeout: float

    @classmethod
    def of(cls, store: SessionStore) -> StoreSpec:
        return cls(os.fspath(store.root), store.pack_threshold, store.durable, store.lock_timeout)


class MirrorProcesses:
    """Worker processes writing sessions' mirrors; `submit` returns None once they cannot be used
    (then the caller writes the session itself). Nothing submitted is ever cancelled: a session
    handed to a worker is written by it, or its future fails and the caller writes it."""

    def __init__(self, store: SessionStore, workers: int) -> None:
        self.spec = StoreSpec.of(store)
        self.workers = max(1, workers)
        self.broken = ""  # why the workers are no longer used
        self._executor: ProcessPoolExecutor | None = None

    def submit(self, session_id: str) -> Future[Mirrored] | None:
        if self.broken:
            return None
        try:
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=start_mirror_worker,
                    initargs=(os.getpid(), self.spec),
                )
            return self._executor.submit(mirror_in_worker, session_id)
        except (*POOL_ERRORS, ValueError) as exc:
            self.stop(exc)
            return None

    def stop(self, exc: BaseException) -> None:
        """The workers are not used any more (a worker was lost: the pool is broken)."""
        if not self.broken:
            self.broken = f"{type(exc).__name__}: {exc}"
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None

    def close(self) -> None:
        """Wait for the workers to exit (every submitted session done); a later submit starts them again."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


# ------------------------------------------------------------------ in the worker

_STORE: SessionStore | None = None


def start_mirror_worker(parent: int, spec: StoreSpec) -> None:
    """The worker's initializer: quiet, gone with the import, Ctrl-C left to the import (it stops
    between sessions), its own store on the same folder."""
    global _STORE
    start_worker_process(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.nice(NICE)
    except OSError:
        pass  # not allowed here: the same priority, slower to browsable only
    from .sessions import SessionStore  # here: the parent imports this module from sessions' side

    _STORE = SessionStore(
        Path(spec.root),
        cache_cap=1,
        pack_threshold=spec.pack_threshold,
        durable=spec.durable,
        lock_timeout=spec.lock_timeout,
    )


def mirror_in_worker(session_id: str) -> Mirrored:
    store = _STORE
    assert store is not None, "the worker's initializer did not run"
    turns: dict[str, tuple[int, str]] = {}
    try:
        commits = store.write_mirror(session_id, turns)
        failed = ""
    except (OpmemError, OSError) as exc:  # the node files stay; the marker stays, for the next start
        commits, turns, failed = 0, {}, str(exc)
    hints = tuple(f"{path}: {problem}" for path, problem in store.take_hint_failures())
    return Mirrored(commits, turns, failed, hints)
