"""Another process that holds session locks (SessionLock, the store's own) until told to let go.

For tests of what must not wait for a lock (reads) and of what must fail clearly when one is
held too long (writes): `holder = hold(lock, ...)`, then `release(holder)`, which checks that
the holder still held every lock when it let go.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

HANG_GUARD = 300.0  # seconds: only a holder that never answers gets near this; nothing is timed

HOLDER = textwrap.dedent(
    """
    import sys
    from opmem_tui.backend.store.session_lock import SessionLock
    locks = [SessionLock(path) for path in sys.argv[1:]]
    for lock in locks:
        lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()  # held until the test says so
    print("still held", flush=True)
    """
)


def hold(*locks: Path) -> subprocess.Popen:
    """Start a process holding `locks`; returns once it holds them all."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, *map(str, locks)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def release(holder: subprocess.Popen) -> None:
    """Let the holder go; it says it still held the locks (it never let go before)."""
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "still held"
    assert holder.wait(HANG_GUARD) == 0
    holder.stdin.close()
    holder.stdout.close()
