"""The per-session file lock: an exclusive flock(2) on `<sessions>/.locks/<id>.lock`.

Taken around every read and write of a session, five times for a turn written message by
message, so it is a bare open + flock instead of `filelock.FileLock` (whose bookkeeping cost
about 1 ms an acquire here, a fifth of a turn commit). Both use flock on the same file, so
they exclude each other. Re-entrant within the thread that holds the store's per-session lock.
"""

from __future__ import annotations

import fcntl
import os
import time


class SessionLockBusy(Exception):
    """A non-blocking acquire found the lock held."""


class SessionLock:
    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1
        self._depth = 0

    def acquire(self, *, blocking: bool = True, timeout: float | None = None) -> None:
        """Blocking: wait (at most `timeout` seconds when given, then SessionLockBusy)."""
        if self._depth == 0:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if blocking and timeout is None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                else:
                    _flock_within(fd, timeout if blocking and timeout is not None else 0.0)
            except BlockingIOError:
                os.close(fd)
                raise SessionLockBusy(self.path) from None
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        self._depth += 1

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            fd, self._fd = self._fd, -1
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __enter__(self) -> SessionLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _flock_within(fd: int, timeout: float) -> None:
    """flock has no timeout: try, then try again with short sleeps until `timeout` has passed."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
