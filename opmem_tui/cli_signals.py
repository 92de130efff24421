"""SIGTERM stops a long CLI command the way Ctrl-C does.

A supervisor (systemd, a test, `kill`) sends SIGTERM, and a process started in the background
of a non-interactive shell inherits SIGINT ignored; either way the command must still stop
cleanly: flush what it wrote, write the session index, release its locks.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable
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
