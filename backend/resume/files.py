"""Writing into another agent's store: a new file whole (temp file, fsync, rename), never over one that exists."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .conversation import ResumeError


@dataclass(frozen=True, slots=True)
class Written:
    agent: str
    native_id: str  # the id the agent knows the new session by
    path: Path  # the file (or database) written
    command: tuple[str, ...]  # the agent's own command to continue it, run in `cwd`
    cwd: str


def iso(ts: float) -> str:
    """RFC 3339 with milliseconds and a Z, as the agents write their timestamps."""
    moment = datetime.fromtimestamp(ts or time.time(), UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write_new(path: Path, lines: Iterable[str]) -> Path:
    """Write `path` whole; refuse when it exists (a resume adds, it never replaces)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise ResumeError(f"{path}: already exists; nothing written")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".opmem-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(line)
                out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)  # the agents keep their transcripts private to their owner
        os.link(tmp, path)  # fails if another writer got there first
    finally:
        os.unlink(tmp)
    return path


def append_line(path: Path, line: str) -> None:
    """One line added at the end of an agent's append-only index (created when absent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())


def env_path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    return Path(value).expanduser() if value else None


def user_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home()).expanduser()
