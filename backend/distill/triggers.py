"""When distillation runs by itself: a session idle for `idle_minutes`, and the daily sleep.

`Distiller` is the one backend object the app and `opmem watch` hold: `tick()` (call it every
few seconds; it returns at once) starts, on a worker thread, the daily sleep when it is due
(a missed one is caught up at the next start) or else a run over the sessions that have been
idle long enough; `distil`, `sleep` and `flush` start a run now. One job at a time in a
process, and the run lock keeps other processes out; `status()` says what is going on for a
progress bar, `cancel()` stops the job at its next batch edge.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model import OpmemError
from .collect import change_token, pending_sessions
from .model import Progress, RunReport
from .pipeline import RunOptions, run
from .sleep import SleepReport
from .sleep import sleep as run_sleep
from .state import load_state
from .titles import install_title_hook

if TYPE_CHECKING:
    from ..home import Home

Clock = Callable[[], float]


def last_scheduled(sleep_at: dt.time, now: float) -> float:
    """The most recent time the daily sleep was due at or before `now` (local time)."""
    local = dt.datetime.fromtimestamp(now).astimezone()
    scheduled = local.replace(hour=sleep_at.hour, minute=sleep_at.minute, second=0, microsecond=0)
    if scheduled > local:
        scheduled -= dt.timedelta(days=1)
    return scheduled.timestamp()


def sleep_due(last_sleep: float, sleep_at: dt.time, now: float) -> bool:
    return last_sleep < last_scheduled(sleep_at, now)


def idle_sessions(home: Home, idle_minutes: int, now: float) -> list[str]:
    """Sessions with undistilled nodes whose newest node was written `idle_minutes` ago or more.

    Nothing is stat-ed while the store's change token is the one the last full run saw.
    """
    state = load_state(home.memory_dir)
    if state.token and state.token == change_token(home.sessions):
        return []
    limit = idle_minutes * 60.0
    return [p.session_id for p in pending_sessions(home.sessions, state) if now - p.stamp / 1e9 >= limit]


@dataclass
class JobStatus:
    """What the distiller is doing, for the app's job bar."""

    kind: str = ""  # "" (idle) | distil | sleep | flush
    running: bool = False
    progress: Progress | None = None
    report: RunReport | SleepReport | None = None
    error: str = ""
    started: float = 0.0
    finished: float = 0.0


@dataclass
class _Job:
    kind: str
    thread: threading.Thread
    cancel: threading.Event = field(default_factory=threading.Event)
    status: JobStatus = field(default_factory=JobStatus)


class Distiller:
    """Idle distillation, the daily sleep and runs on demand, on one worker thread per job."""

    def __init__(self, home: Home, *, clock: Clock = time.time, lock_timeout: float = 0.0) -> None:
        self.home = home
        self.clock = clock
        self.lock_timeout = lock_timeout
        self._lock = threading.Lock()
        self._job: _Job | None = None
        self.last = JobStatus()
        self.listeners: list[Callable[[JobStatus], Any]] = []

    # -- what the app and the watch call ------------------------------------------------------

    def tick(self) -> str:
        """Start the sleep if due, else distil the sessions idle long enough. Returns what it started ("" for nothing)."""
        if self.busy:
            return ""
        now = self.clock()
        settings = self.home.config.distill
        try:
            if sleep_due(load_state(self.home.memory_dir).last_sleep, settings.sleep_time, now):
                self.sleep()
                return "sleep"
            idle = idle_sessions(self.home, settings.idle_minutes, now)
        except OpmemError as exc:
            self._finish(JobStatus(kind="tick", error=str(exc), finished=now))
            return ""
        if idle:
            self.distil(idle)
            return "distil"
        return ""

    def distil(self, sessions: Sequence[str] | None = None, *, llm: bool | None = None, again: bool = False) -> bool:
        options = RunOptions(
            sessions=tuple(sessions) if sessions is not None else None,
            llm=llm,
            again=again,
            lock_timeout=self.lock_timeout,
        )
        return self._start("distil", lambda progress, cancel: run(self.home, options, progress=progress, cancel=cancel))

    def flush(self, sessions: Sequence[str]) -> bool:
        options = RunOptions(sessions=tuple(sessions), commits=False, lock_timeout=max(self.lock_timeout, 30.0))
        return self._start("flush", lambda progress, cancel: run(self.home, options, progress=progress, cancel=cancel))

    def sleep(self) -> bool:
        return self._start(
            "sleep",
            lambda progress, cancel: run_sleep(
                self.home, progress=progress, cancel=cancel, lock_timeout=self.lock_timeout
            ),
        )

    def cancel(self) -> None:
        job = self._job
        if job is not None:
            job.cancel.set()

    def wait(self, timeout: float | None = None) -> JobStatus:
        job = self._job
        if job is not None:
            job.thread.join(timeout)
        return self.status()

    @property
    def busy(self) -> bool:
        job = self._job
        return job is not None and job.thread.is_alive()

    def status(self) -> JobStatus:
        job = self._job
        if job is not None and job.thread.is_alive():
            return job.status
        return self.last

    # -- plumbing -----------------------------------------------------------------------------

    def _start(self, kind: str, work: Callable[[Callable[[Progress], Any], Callable[[], bool]], Any]) -> bool:
        with self._lock:
            if self.busy:
                return False
            status = JobStatus(kind=kind, running=True, started=self.clock())
            cancel = threading.Event()

            def progress(step: Progress) -> None:
                status.progress = step
                self._notify(status)

            def body() -> None:
                try:
                    status.report = work(progress, cancel.is_set)
                except OpmemError as exc:  # DistillBusy included: another process is at it
                    status.error = str(exc)
                except OSError as exc:  # the disk: read-only, full, a folder where a file should be
                    where = f"{exc.filename}: " if exc.filename else ""
                    status.error = f"distillation failed: {where}{exc.strerror or exc}"
                except Exception as exc:  # a bug must not kill the app's thread silently
                    status.error = f"distillation failed: {type(exc).__name__}: {exc}"
                finally:
                    status.running = False
                    status.finished = self.clock()
                    self._finish(status)

            thread = threading.Thread(target=body, name=f"opmem-{kind}", daemon=True)
            self._job = _Job(kind, thread, cancel, status)
            thread.start()
            return True

    def _finish(self, status: JobStatus) -> None:
        self.last = status
        self._notify(status)

    def _notify(self, status: JobStatus) -> None:
        for listener in list(self.listeners):
            listener(status)


def background_distiller(home: Home) -> Distiller:
    """The Distiller `opmem watch` and the app tick; it also hangs the LLM title hook on the store."""
    config = home.config
    install_title_hook(
        home.sessions, config.llm, config.distill.titles, excluded=lambda meta: home.exclusions().reason(meta)
    )
    return Distiller(home)
