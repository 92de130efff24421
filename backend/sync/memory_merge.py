"""Memory logs across machines: a machine pushes its logs (records of sessions kept here left
out), and a pull appends the lines of other machines' logs this one lacks (records merge by id
when the memory folds its logs)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
from filelock import FileLock

from ..memory.logs import log_names
from ..memory.store import LOCK_NAME
from ..privacy import redact_value
from .merge import missing_lines, parse_lines, session_of


def memory_files(root: Path, private: set[str], *, redact: bool) -> dict[str, bytes]:
    """This machine's memory logs as pushed: no record of a `private` session, redacted unless not `redact`."""
    files: dict[str, bytes] = {}
    for name in log_names(root):
        raw = (root / name).read_bytes()
        lines = []
        for line, data in parse_lines(raw):
            if session_of(data) in private:
                continue
            if redact:
                shown = redact_value(data)
                line = line if shown is data else json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode()
            lines.append(line + b"\n")
        files[name] = b"".join(lines)
    return files


def merge_memory(outbox: pygit2.Repository, oid: str, root: Path) -> int:
    """Lines of another machine's memory logs (its memory ref, commit `oid`) this store lacks, appended."""
    tree = outbox[pygit2.Oid(hex=oid)].peel(pygit2.Tree)
    remote_logs: dict[str, bytes] = {}

    def walk(t: pygit2.Tree, where: str) -> None:
        for entry in t:
            obj = outbox[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, f"{where}{entry.name}/")
            elif entry.name.endswith(".jsonl"):
                remote_logs[f"{where}{entry.name}"] = obj.data

    walk(tree, "")
    added = 0
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / LOCK_NAME), timeout=120):
        for name, raw in sorted(remote_logs.items()):
            if not _safe_log_name(name):
                continue
            target = root / name
            local = target.read_bytes() if target.exists() else b""
            new = missing_lines(local, raw)
            if not new:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("ab") as fh:
                if local and not local.endswith(b"\n"):
                    fh.write(b"\n")  # seal a torn last line, as the memory's own appender does
                fh.write(b"".join(line + b"\n" for line in new))
                fh.flush()
                os.fsync(fh.fileno())
            added += len(new)
    return added


def _safe_log_name(name: str) -> bool:
    parts = name.split("/")
    return all(p and p not in (".", "..") for p in parts) and parts[0] in ("timeline", "graph") and len(parts) == 2
