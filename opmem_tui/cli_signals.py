"""SIGTERM stops a long CLI command the way Ctrl-C does.

A supervisor (systemd, a test, `kill`) sends SIGTERM, and a process started in the background
of a non-interactive shell inherits SIGINT ignored; either way the command must still stop
cleanly: flush what it wrote, write the session index, release its locks.

`stop_on_terminate` raises KeyboardInterrupt from the handler (distill, sleep). `opmem watch`
and `opmem import` use `stop_requested_by_signals` instead:
Python swallows an exception a handler raises while the main thread runs a finalizer (filelock's
`BaseFileLock.__del__` runs on the main thread each time a lock object is dropped: "Exception
ignored in ..."), and that SIGTERM was then lost: the watch went on waiting in watchfiles' loop.
A flag set by the handler cannot be lost, and the loop stops between two steps.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_on_terminate(command: Callable[P, R]) -> Callable[P, R]:
    """Run `command` with SIGTERM raised as KeyboardInterrupt; the old handler comes back after."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if threading.current_thread() is not threading.main_thread():
            return command(*args, **kwargs)  # signal handlers can only be set from the main thread
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            return command(*args, **kwargs)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return wrapper


class StopRequest:
    """Set by SIGTERM or Ctrl-C, read between two steps of a loop (and by watchfiles every step).

    A plain attribute, no lock: a handler that set a threading.Event could block on the lock
    the interrupted main thread holds.
    """

    def __init__(self) -> None:
        self.signals = 0

    def is_set(self) -> bool:
        return self.signals > 0

    def set(self) -> None:
        self.signals += 1


@contextmanager
def stop_requested_by_signals() -> Iterator[StopRequest]:
    """Inside: the first SIGTERM or SIGINT sets the StopRequest (the step under way finishes);
    a second one raises KeyboardInterrupt (stop at once). SIGINT ignored when we started (a
    background job of a non-interactive shell) stays ignored. The old handlers come back after."""
    stop = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signal handlers can only be set from the main thread
        return

    def request(signum: int, frame: object) -> None:
        stop.set()
        if stop.signals > 1:
            raise KeyboardInterrupt

    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        if signum == signal.SIGINT and signal.getsignal(signum) is signal.SIG_IGN:
            continue
        previous[signum] = signal.signal(signum, request)
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
