"""memory/state.json: the distillation's cursors, written atomically after a run's records are durable.

    {"version": 1,
     "sessions": {"<id>": [41, 1731000000123456789]},      # [seq, stamp]
     "token": "<sessions/.changed when every session was caught up>",
     "projects": {"<id>": {"head": "<oid>", "time": 1731000000.0}},
     "sleep": {"last": 1731000000.0}}

`seq` is the last distilled node seq of a session. `stamp` is the mtime of its history/ folder
when it was read (0 when that was too recent to trust): an unchanged stamp means no node was
added since, so an incremental run stats one folder per session and opens none. `token` is
the store's change token (sessions/.changed, rewritten whenever the store writes a session)
as it was when a run found every session caught up: while it has not changed, a run need not
stat anything at all.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..model import CorruptFile
from ..store.files import dump_compact_json, read_json, write_atomic

STATE_VERSION = 1
# A folder stamp this close to "now" may still change within the same clock tick: not trusted.
STAMP_TRUST_S = 2.0


class SessionCursor(NamedTuple):
    seq: int = -1
    stamp: int = 0


@dataclass(frozen=True, slots=True)
class ProjectCursor:
    head: str = ""
    time: float = 0.0


@dataclass(slots=True)
class DistillState:
    sessions: dict[str, SessionCursor] = field(default_factory=dict)
    projects: dict[str, ProjectCursor] = field(default_factory=dict)
    last_sleep: float = 0.0
    token: str = ""
    # Records were written whose projection (core.md, views, index) has not finished: a run
    # killed in stage 5, or after a write, leaves it set and the next run projects everything.
    unprojected: bool = False
    # The `[memory]` exclusions' fingerprint at the last run (backend/privacy/exclusions.py): a
    # change makes the run withdraw what newly excluded sessions gave and readmit the others.
    exclusions: str = ""
    withheld: dict[str, str] = field(default_factory=dict)  # session id -> why the runs skip it
    # How many flushes have moved the cursors: the in-flight note names the flush it was written
    # for, so a note left by a run killed after that flush's cursors were saved reads as done.
    flushes: int = 0

    def cursor(self, session_id: str) -> SessionCursor:
        return self.sessions.get(session_id, SessionCursor())

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "sessions": {sid: [c.seq, c.stamp] for sid, c in sorted(self.sessions.items())},
            "token": self.token,
            "projects": {pid: {"head": c.head, "time": c.time} for pid, c in sorted(self.projects.items())},
            "sleep": {"last": self.last_sleep},
            "unprojected": self.unprojected,
            "exclusions": self.exclusions,
            "withheld": dict(sorted(self.withheld.items())),
            "flushes": self.flushes,
        }

    @classmethod
    def from_json(cls, data: Any, where: Any) -> DistillState:
        if not isinstance(data, Mapping):
            raise CorruptFile(where, "distillation state is not a JSON object")
        state = cls()
        sessions = data.get("sessions") or {}
        if not isinstance(sessions, Mapping):
            raise CorruptFile(where, "sessions must be an object")
        cursors = state.sessions
        for sid, raw in sessions.items():
            try:
                seq, stamp = raw
            except (TypeError, ValueError):
                continue  # a hand-edited entry: that session is distilled again (idempotent)
            if seq.__class__ is int and stamp.__class__ is int:
                cursors[sid] = SessionCursor(seq, stamp)
        token = data.get("token")
        state.token = token if isinstance(token, str) else ""
        projects = data.get("projects") or {}
        if isinstance(projects, Mapping):
            for pid, raw in projects.items():
                if isinstance(raw, Mapping) and isinstance(raw.get("head"), str):
                    when = raw.get("time")
                    state.projects[str(pid)] = ProjectCursor(
                        raw["head"], float(when) if isinstance(when, (int, float)) else 0.0
                    )
        state.unprojected = data.get("unprojected") is True
        fingerprint = data.get("exclusions")
        state.exclusions = fingerprint if isinstance(fingerprint, str) else ""
        withheld = data.get("withheld") or {}
        if isinstance(withheld, Mapping):
            state.withheld = {str(k): str(v) for k, v in withheld.items() if isinstance(v, str)}
        flushes = data.get("flushes")
        state.flushes = flushes if _is_int(flushes) and flushes >= 0 else 0
        sleep = data.get("sleep") or {}
        if isinstance(sleep, Mapping) and isinstance(sleep.get("last"), (int, float)):
            state.last_sleep = float(sleep["last"])
        return state


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def state_path(memory_dir: Path) -> Path:
    return Path(memory_dir) / "state.json"


def load_state(memory_dir: Path) -> DistillState:
    """The cursors; a missing file is a fresh start, a corrupt one an error naming it."""
    path = state_path(memory_dir)
    if not path.exists():
        return DistillState()
    return DistillState.from_json(read_json(path), path)


def save_state(memory_dir: Path, state: DistillState, *, durable: bool = True) -> None:
    path = state_path(memory_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, dump_compact_json(state.to_json()), durable=durable)


def trusted_stamp(mtime_ns: int, now: float | None = None) -> int:
    """The stamp to keep: 0 (check again next time) when it is too recent to rule out a same-tick write."""
    now = time.time() if now is None else now
    return mtime_ns if now - mtime_ns / 1e9 > STAMP_TRUST_S else 0


INFLIGHT_NAME = ".distill-inflight.json"


def read_inflight(memory_dir: Path, state: DistillState | None = None) -> set[str]:
    """Ids a killed run was writing when it died (see pipeline.py): not yet part of the memory's past.

    A note written for flush N holds the ids of that flush (`ids`) and those still in flight once
    it is done (`after`): when the state says flush N moved its cursors, `after` is what holds.
    """
    path = Path(memory_dir) / INFLIGHT_NAME
    if not path.exists():
        return set()
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("ids"), list):
        raise CorruptFile(path, 'expected {"ids": [...]}')
    flush, after = data.get("flush"), data.get("after")
    if _is_int(flush) and isinstance(after, list):
        done = (state if state is not None else load_state(memory_dir)).flushes >= flush
        if done:
            return {str(i) for i in after}
    return {str(i) for i in data["ids"]}


def write_inflight(
    memory_dir: Path,
    ids: set[str],
    *,
    flush: int | None = None,
    after: set[str] | None = None,
    durable: bool = True,
) -> None:
    """Note `ids` as being written; with `flush`, `after` is what stays in flight once that
    flush's cursors are saved (a kill between that save and the next note must not leave
    `ids` excluded for good)."""
    path = Path(memory_dir) / INFLIGHT_NAME
    if not ids:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, object] = {"ids": sorted(ids)}
    if flush is not None:
        data.update(flush=flush, after=sorted(after or ()))
    write_atomic(path, dump_compact_json(data), durable=durable)
