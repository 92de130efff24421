"""What every worker process opmem spawns does first (the distillation pool, a backlog import's
parser): it shares the terminal of the process that started it, which the app may draw on, so
whatever it would print (a warning, a library's log line) goes nowhere instead."""

from __future__ import annotations

import os


def quiet_worker() -> None:
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
