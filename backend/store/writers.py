"""Writers in flight: which processes are part-way through writing a turn of a session.

Opening a session commits (backfills) every node that git does not hold yet, which repairs a
writer that crashed between writing a node and committing its turn. A writer that is still
alive must not have its half-written turn committed for it, so while it holds uncommitted
nodes it leaves a marker in `<sessions>/.locks/<id>.inflight`: {writer: {since, pid, start}}.
`since` is the seq of its first uncommitted node. Backfill skips nodes from the smallest
`since` of the live writers on; a marker whose process is gone (or, in this process, whose
writer object is gone) is ignored, so a crashed writer's nodes are still committed.

The file is written under the session's file lock and replaced whole (temp + rename), because
lock-free readers read it too (tail.py, the first read's repair check).
"""

from __future__ import annotations

import json
import os
import uuid
import weakref
from pathlib import Path
from typing import Any

from .files import write_atomic

# Writer tokens of this process whose writer object is alive.
_LIVE: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def new_writer(owner: object) -> str:
    """A token for `owner` (a SessionRepo); it counts as live as long as `owner` does."""
    token = uuid.uuid4().hex[:12]
    _LIVE[token] = owner
    return token


def process_start(pid: int) -> str:
    """The process's start time in clock ticks (Linux), so a reused pid is not taken for the writer."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return ""
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else ""


_STARTS: dict[int, str] = {}


def _own_start() -> str:
    pid = os.getpid()  # looked up per pid: a forked child is another process
    if pid not in _STARTS:
        _STARTS[pid] = process_start(pid)
    return _STARTS[pid]


def _alive(entry: dict[str, Any], token: str) -> bool:
    pid = entry.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return token in _LIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    start = entry.get("start")
    return not start or start == process_start(pid)


class InFlight:
    """The marker file of one session."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            raw = self.path.read_bytes()
        except OSError:
            return {}
        return _parse(raw)

    def live_since(self) -> int | None:
        """Smallest seq a live writer has not committed yet, or None."""
        seqs = [
            entry["since"]
            for token, entry in self._read().items()
            if isinstance(entry.get("since"), int) and _alive(entry, token)
        ]
        return min(seqs) if seqs else None

    def set(self, token: str, since: int | None) -> None:
        """Record (or with None, clear) this writer's first uncommitted seq; dead writers are dropped."""
        marks = {t: e for t, e in self._read().items() if t != token and _alive(e, t)}
        if since is not None:
            marks[token] = {"since": since, "pid": os.getpid(), "start": _own_start()}
        data = json.dumps(marks, sort_keys=True).encode() if marks else b""
        try:
            write_atomic(self.path, data, durable=False)
        except FileNotFoundError:
            return  # the store's folder is gone (a deleted session): nothing to mark


def _parse(raw: bytes) -> dict[str, dict[str, Any]]:
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}  # a writer died mid-write: it is not live
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}
