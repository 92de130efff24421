"""Git mirrors still to be written: a backlog import writes node files first, commits after.

ARCHITECTURE §3: the node files are the truth and git the mirror, "a node that is not yet in
git is backfilled later". A backlog import (`opmem import`, a watch's catch-up, the app's
palette) uses that on purpose: each session's node files, meta.json and search rows are
written at once, and its turn commits later, by `MirrorWriter` (a worker thread in the app and
in `opmem watch`; `opmem import` finishes it before it exits, saying so).

The promise is a marker, `<sessions>/.locks/<id>.mirror` = {pid, start}: the process that will
write this session's mirror. It is written before the first node file of the batch and removed
once git covers every node, so a SIGKILL anywhere in between leaves it behind with a dead
owner. While the owner lives, other paths leave the session's mirror to it (the open-time
backfill, the repair on first read, `opmem verify`, which says "mirror being written"); reads
come from the node files (turns without commit ids). Once the owner is gone the marker is an
orphan: the next start adopts it (`SessionStore.adopt_mirrors`), and meanwhile the ordinary
repairs apply. What is missing is always derived from the node files against the branch tips
(GitMirror.missing_node_ids), never from the marker, so it is idempotent and resumable.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import OpmemError
from .files import write_atomic
from .mirror_pool import POOL_ERRORS, Mirrored, MirrorProcesses
from .writers import process_start

if TYPE_CHECKING:
    from .sessions import SessionStore

SUFFIX = ".mirror"
HERE, LIVE, ORPHAN = "here", "live", "orphan"
WINDOW = 4  # sessions handed to each worker ahead: the rest wait here, where this process can take them  # owner: this process, another live one, none alive


class MirrorMark:
    """The marker file of one session."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def claim(self) -> None:
        """This process will write the session's mirror (before its node files are written)."""
        data = json.dumps({"pid": os.getpid(), "start": process_start(os.getpid())}).encode()
        write_atomic(self.path, data, durable=False)

    def state(self) -> str | None:
        """HERE, LIVE or ORPHAN; None when no mirror is pending."""
        try:
            raw = self.path.read_bytes()
        except OSError:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            return ORPHAN  # torn by a kill mid-write: its writer is gone
        pid = data.get("pid") if isinstance(data, dict) else None
        if not isinstance(pid, int) or pid <= 0:
            return ORPHAN
        if pid == os.getpid():
            return HERE
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return ORPHAN
        except PermissionError:
            pass
        start = data.get("start")
        return LIVE if not start or start == process_start(pid) else ORPHAN

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def marked_sessions(locks_dir: Path) -> list[str]:
    """Ids of the sessions with a marker, oldest marker first."""
    try:
        entries = [e for e in os.scandir(locks_dir) if e.name.endswith(SUFFIX) and e.is_file()]
    except OSError:
        return []
    entries.sort(key=lambda e: _mtime(e))
    return [e.name[: -len(SUFFIX)] for e in entries]


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


@dataclass(slots=True)
class MirrorReport:
    sessions: int = 0  # sessions whose mirror is complete now
    commits: int = 0
    seconds: float = 0.0
    left: int = 0  # sessions still pending when it stopped
    problems: list[str] = field(default_factory=list)


Written = Callable[[frozenset[str]], object]  # told the sessions whose mirror was just written
# told, per session just mirrored, node id -> (turn number, commit) of the commits written: what
# the search index fills in without reading the sessions again
Commits = Callable[[Mapping[str, Mapping[str, tuple[int, str]]]], object]
Problems = Callable[[list[str]], object]  # told what went wrong in a run (on the writer's thread)
Progress = Callable[[int, int, str], object]


class MirrorWriter:
    """Writes the git mirror of queued sessions, oldest first.

    `run()` drains the queue on the calling thread; `start()` does it on a daemon thread (the
    app, `opmem watch`), which `stop()` ends after the session under way. With `workers`, the
    sessions added are written in that many worker processes as they come (mirror_pool.py), while
    the caller goes on (an import writing the next sessions); `poll()` hands on what they finished
    and `run()` waits for the rest. `on_written` is told, every few sessions, which mirrors were
    completed; `on_commits` the commits they got (the search index fills in commit ids from them,
    reading nothing); both on the thread calling poll or run. Progress is counted, never read.
    """

    def __init__(
        self,
        store: SessionStore,
        on_written: Written | None = None,
        *,
        on_commits: Commits | None = None,
        workers: int = 0,
    ) -> None:
        self.store = store
        self.on_written = on_written
        self.on_commits = on_commits
        self.on_problems: Problems | None = None  # the app says a background run's problems
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._procs = MirrorProcesses(store, workers) if workers > 0 else None
        self._running: dict[str, Future[Mirrored]] = {}  # sessions the workers write
        self._again: set[str] = set()  # added while a worker wrote them: sent again once it is done
        self._early = MirrorReport()  # what poll() handed on before run()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()
        self.report = MirrorReport()

    def add(self, session_ids: Iterable[str]) -> int:
        """Queue sessions (ones already queued are skipped); returns how many were added.
        Thread-safe: an import adds each file's sessions from its sync thread once they are durable."""
        added = 0
        with self._lock:
            for sid in session_ids:
                if sid in self._queued:
                    continue
                if sid in self._running:
                    self._again.add(sid)
                    continue
                added += 1
                self._queued.add(sid)
                self._queue.append(sid)
            if added:
                self._idle.clear()
            self._feed()
        if added:
            self._wake.set()
        return added

    def _feed(self) -> None:
        """Hand the workers the oldest queued sessions, a few each (under self._lock): the rest stay
        here, for the workers later or for this process (run() takes the newest)."""
        if self._procs is None or self._procs.broken:
            return
        while self._queue and len(self._running) < WINDOW * self._procs.workers:
            sid = self._queue[0]
            future = self._procs.submit(sid)
            if future is None:
                return
            self._queue.popleft()
            self._queued.discard(sid)
            self._running[sid] = future

    def adopt(self) -> int:
        """Queue the mirrors an earlier process left unfinished (killed, or stopped early)."""
        return self.add(self.store.adopt_mirrors())

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + len(self._running) + len(self._again)

    @property
    def written_early(self) -> int:
        """Sessions the workers finished before run() (poll handed them on; run counts them)."""
        return self._early.sessions

    @property
    def workers_broken(self) -> str:
        """Why the worker processes stopped being used ("" while they are, or with none)."""
        return self._procs.broken if self._procs is not None else ""

    def poll(self) -> None:
        """Hand on the mirrors the workers finished so far (on_commits, on_written), without
        waiting, and hand them more."""
        done: list[str] = []
        turns: dict[str, dict[str, tuple[int, str]]] = {}
        self._reap(self._early, done, turns)
        self._tell(done, turns, self._early)

    def run(self, stop: Callable[[], bool] | None = None, progress: Progress | None = None) -> MirrorReport:
        """Write every queued mirror (until `stop()` says so, looked at between sessions). With
        workers: they go on with the oldest, this process writes the newest, and what a worker
        has begun is finished before this returns."""
        started = time.perf_counter()
        report, self._early = self._early, MirrorReport()
        total = report.sessions + self.pending
        done: list[str] = []
        turns: dict[str, dict[str, tuple[int, str]]] = {}
        last_told = time.monotonic()
        try:
            while True:
                if stop is not None and stop():
                    break
                self._reap(report, done, turns)
                with self._lock:
                    sid = None
                    if self._queue:  # the oldest without workers; with them, the newest
                        sid = self._queue.popleft() if self._procs is None else self._queue.pop()
                        self._queued.discard(sid)
                    running = list(self._running.values())
                if sid is not None:
                    if progress is not None:
                        progress(report.sessions, max(total, report.sessions + 1), sid)
                    self._write_here(sid, report, done, turns)
                elif running:
                    wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                    if progress is not None:
                        progress(report.sessions, max(total, report.sessions + 1), "")
                else:
                    break
                if done and time.monotonic() - last_told >= 1.0:
                    self._tell(done, turns, report)
                    done, turns, last_told = [], {}, time.monotonic()
        finally:
            if self._procs is not None:
                with self._lock:
                    running = list(self._running.values())
                wait(running)  # begun by a worker: finished (a stopped run hands them nothing more)
                self._reap(report, done, turns, feed=False)
                self._procs.close()
            self._tell(done, turns, report)
            report.problems.extend(f"{path}: {problem}" for path, problem in self.store.take_hint_failures())
            report.left = self.pending
            report.seconds = time.perf_counter() - started
            self.report = report
        if report.problems and self.on_problems is not None:
            self.on_problems(list(report.problems))
        return report

    def _write_here(
        self, sid: str, report: MirrorReport, done: list[str], turns: dict[str, dict[str, tuple[int, str]]]
    ) -> None:
        written: dict[str, tuple[int, str]] | None = {} if self.on_commits is not None else None
        try:
            report.commits += self.store.write_mirror(sid, written)
            report.sessions += 1
            done.append(sid)
            if written:
                turns[sid] = written
        except (OpmemError, OSError) as exc:  # the node files stay; the marker stays, for the next start
            report.problems.append(f"session {sid}: the git mirror was not written: {exc}")

    def _reap(
        self,
        report: MirrorReport,
        done: list[str],
        turns: dict[str, dict[str, tuple[int, str]]],
        *,
        feed: bool = True,
    ) -> None:
        """Take the workers' finished sessions into `report` (and, with `feed`, hand them more). A
        worker lost (killed, a broken pool) leaves its sessions to this process: queued here."""
        with self._lock:
            finished = [(sid, f) for sid, f in self._running.items() if f.done()]
            for sid, _future in finished:
                del self._running[sid]
        again: list[str] = []
        for sid, future in finished:
            try:
                result = future.result()
            except POOL_ERRORS as exc:
                if self._procs is not None:
                    self._procs.stop(exc)
                self._requeue(sid)
                continue
            if result.failed:
                report.problems.append(f"session {sid}: the git mirror was not written: {result.failed}")
            else:
                report.sessions += 1
                report.commits += result.commits
                done.append(sid)
                if result.turns and self.on_commits is not None:
                    turns[sid] = result.turns
            report.problems.extend(result.hints)
            with self._lock:
                if sid in self._again:
                    self._again.discard(sid)
                    again.append(sid)
        if again:  # still owed (a file written to it meanwhile), not only named twice
            self.add([sid for sid in again if self.store.mirror_pending(sid) is not None])
        if feed:
            with self._lock:
                self._feed()

    def _requeue(self, sid: str) -> None:
        with self._lock:
            self._again.discard(sid)
            if sid not in self._queued:
                self._queued.add(sid)
                self._queue.append(sid)

    def _tell(self, done: list[str], turns: dict[str, dict[str, tuple[int, str]]], report: MirrorReport) -> None:
        try:
            if done and self.on_written is not None:
                self.on_written(frozenset(done))
            if turns and self.on_commits is not None:
                self.on_commits(turns)
        except OpmemError as exc:
            report.problems.append(str(exc))

    # ------------------------------------------------------------------ in the background

    def start(self, *, adopt: bool = False) -> None:
        """Write queued mirrors on a daemon thread as they come (until stop()); `adopt`: first
        queue what earlier processes left (on the thread: it reads and writes marker files)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(adopt,), name="opmem-mirror", daemon=True)
        self._thread.start()

    def _loop(self, adopt: bool) -> None:
        if adopt:
            try:
                self.adopt()
            except (OpmemError, OSError):
                pass  # no marker folder yet, or an unreadable one: nothing to adopt
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                break
            self.run(self._stop.is_set)
            with self._lock:
                if not self._queue:
                    self._idle.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Until the queue is written (True), or `timeout` seconds pass (False)."""
        if self._thread is None or not self._thread.is_alive():
            return self.pending == 0
        return self._idle.wait(timeout)

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop after the session under way; what is left waits for the next start."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
