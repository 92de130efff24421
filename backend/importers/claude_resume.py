"""Claude Code ``--resume`` copies: which records of a session file were copied from another one.

Claude Code <= 1.0 answered ``--resume`` by writing a new ``<newSessionId>.jsonl`` that starts
with a copy of the resumed session's records (same uuids and content, the new sessionId) and
goes on from there; resuming that one again copies both. Such files share their first record
uuid. A file F copies G when every record of G is in F, envelope fields aside (F is the longer
one; of two equal files the older is G). The records of F that an earlier file holds are left
out of F's session, which becomes a fork of the nearest one (the largest it copies).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Claude Code names a transcript after its session, a UUID; a file named otherwise that holds one is a copy.
CLAUDE_SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
FIRST_UUID_LINES = 64  # a file whose first uuid comes later is not a resume copy
# Fields a copy may carry differently; the rest of a record must match.
ENVELOPE = frozenset({"sessionId", "version", "gitBranch", "slug", "entrypoint", "userType", "cwd"})


@dataclass(frozen=True, slots=True)
class ResumedFrom:
    parent: str  # native id (file stem) of the session this file resumed
    copied: frozenset[str]  # record uuids written first by earlier files


@dataclass(frozen=True, slots=True)
class _Records:
    stamp: tuple[int, int, int]  # inode, size, mtime_ns
    uuids: dict[str, str]  # record uuid -> fingerprint of the record


class ResumeIndex:
    """First record uuid of each session file (cached by inode), and what a file copied."""

    def __init__(self) -> None:
        self._first: dict[Path, tuple[int, str, str]] = {}  # path -> (inode, first uuid, its sessionId)
        self._all: dict[Path, _Records] = {}

    def resumed_from(self, path: Path, first: str) -> ResumedFrom | None:
        """What `path` (whose first record uuid is `first`) copied from other files beside it."""
        if self._renamed(path):
            return None  # a copy under another name is its session (claude_parser), not a resume
        family = [other for other in _siblings(path) if self._first_uuid(other) == first and not self._renamed(other)]
        if not family:
            return None
        mine = self._records(path)
        if mine is None:
            return None
        ours = set(mine.uuids.items())
        ancestors: list[tuple[int, Path, frozenset[str]]] = []
        for other in family:
            theirs = self._records(other)
            if theirs is None:
                continue
            held = set(theirs.uuids.items())
            older = (theirs.stamp[2], other.name) < (mine.stamp[2], path.name)
            if held < ours or (held == ours and older):
                ancestors.append((len(held), other, frozenset(theirs.uuids)))
        if not ancestors:
            return None
        copied = frozenset().union(*(uuids for _, _, uuids in ancestors))
        nearest = max(ancestors, key=lambda entry: (entry[0], entry[1].name))[1]
        return ResumedFrom(parent=nearest.name[: -len(".jsonl")], copied=copied)

    def _first_uuid(self, path: Path) -> str | None:
        first = self._first_record(path)
        return first[0] if first is not None else None

    def _renamed(self, path: Path) -> bool:
        """A transcript copied under another name: its records name a session (a UUID) it is not named after."""
        first = self._first_record(path)
        session = first[1] if first is not None else ""
        return bool(CLAUDE_SESSION_ID.fullmatch(session)) and session != path.name[: -len(".jsonl")]

    def _first_record(self, path: Path) -> tuple[str, str] | None:
        try:
            inode = path.stat().st_ino
        except OSError:
            return None
        known = self._first.get(path)
        if known is not None and known[0] == inode:
            return known[1], known[2]
        first = _read_first_uuid(path)
        if first is not None:
            self._first[path] = (inode, *first)
        return first

    def _records(self, path: Path) -> _Records | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        known = self._all.get(path)
        if known is None or known.stamp != stamp:
            known = self._all[path] = _Records(stamp, _fingerprints(path))
        return known


def _siblings(path: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(path.parent))
    except OSError:
        return []
    return [
        path.parent / name
        for name in names
        if name.endswith(".jsonl") and not name.startswith("agent-") and name != path.name
    ]


def _record(line: bytes) -> dict[str, Any] | None:
    """The record of a line that has a uuid, else None."""
    if b'"uuid"' not in line:
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("uuid"), str) or not record["uuid"]:
        return None
    return record


def _read_first_uuid(path: Path) -> tuple[str, str] | None:
    """The first record's uuid and sessionId ("" when it has none)."""
    try:
        with open(path, "rb") as handle:
            for _, line in zip(range(FIRST_UUID_LINES), handle, strict=False):
                record = _record(line)
                if record is not None:
                    session = record.get("sessionId")
                    return record["uuid"], session if isinstance(session, str) else ""
    except OSError:
        return None
    return None


def _fingerprints(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        with open(path, "rb") as handle:
            for line in handle:
                record = _record(line)
                if record is not None:
                    kept = {k: v for k, v in record.items() if k not in ENVELOPE}
                    text = json.dumps(kept, sort_keys=True, ensure_ascii=False, default=str)
                    out.setdefault(record["uuid"], hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest())
    except OSError:
        return out
    return out
