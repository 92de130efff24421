"""What every worker process opmem spawns does first (the distillation pool, a backlog import's
parser): it prints nothing, and it ends with the process that started it."""

from __future__ import annotations

import os
import threading
import time


def start_worker_process(parent: int) -> None:
    """`parent`: the pid of the process that started this worker (passed to it, since by the time
    the worker runs its parent may already be gone and the worker reparented)."""
    quiet_worker()
    exit_with_parent(parent)


def exit_with_parent(parent: int, interval: float = 1.0) -> None:
    """A worker whose parent was killed (no shutdown reached it) exits instead of waiting forever
    on its task queue, whose writing end it holds itself (multiprocessing hands it both ends)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="opmem-parent-watch", daemon=True).start()


def quiet_worker() -> None:
    """It shares the terminal of the process that started it, which the app may draw on: whatever
    it would print (a warning, a library's log line) goes nowhere instead."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    for fd in (1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)
