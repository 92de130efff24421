"""The lock of a small shared file (projects.json, links.jsonl, warnings.jsonl, import-state.json):
waited for at most a bounded time, then an error that names the file and says what to do.

Each of these locks is held for one read-modify-write of one small file, so a wait of a minute
means the holder hangs (or is stopped at a breakpoint): better a clear error than a command that
never returns. The lock is an flock, released by the kernel when its holder dies, so a lock file
left behind never blocks anyone. `OPMEM_LOCK_TIMEOUT` (seconds) changes the wait.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from .model import OpmemError

LOCK_TIMEOUT = 60.0
TIMEOUT_ENV = "OPMEM_LOCK_TIMEOUT"


class FileBusy(OpmemError):
    """Another process held a shared file's lock for longer than we wait."""

    def __init__(self, target: Path, lock: Path, timeout: float, consequence: str = "") -> None:
        self.target = target
        self.lock = lock
        message = (
            f"{target}: another opmem process (an import, `opmem watch`, a distillation or the app) "
            f"has held its lock {lock.name} for more than {timeout:g}s; wait for it to finish or stop it, "
            "then try again"
        )
        super().__init__(f"{message}; {consequence}" if consequence else message)


def lock_timeout() -> float:
    """The wait in seconds: $OPMEM_LOCK_TIMEOUT when set, else LOCK_TIMEOUT."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise OpmemError(f"{TIMEOUT_ENV} must be a number of seconds >= 0, got {raw!r}")
    return value


@contextmanager
def file_lock(target: Path, *, timeout: float | None = None, consequence: str = "") -> Iterator[None]:
    """Hold `<target>.lock`; FileBusy (naming `target`, plus `consequence`) after `timeout` seconds."""
    wait = lock_timeout() if timeout is None else timeout
    lock_path = Path(str(target) + ".lock")
    lock = FileLock(str(lock_path), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        raise FileBusy(target, lock_path, wait, consequence) from None
    try:
        yield
    finally:
        lock.release()
