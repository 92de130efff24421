"""A memory distilled by an opmem that did not redact: its secrets taken out, once.

`memory/privacy.json` records the redaction version the memory was written with. A memory
without it (an earlier opmem) is re-redacted on first run: every log line that holds a secret
is rewritten with the value masked (the same record id, so every patch and pointer stays
valid; each log replaced whole, atomically), and everything derived from the logs is dropped
and rebuilt from them: the entity views, the core.md files, the memory cache and the search
index (which also held the sessions' raw text). A new or empty memory is only stamped.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..privacy import redact_text, redact_value
from .cache import CACHE_NAME
from .index import INDEX_FILE, SCHEMA_VERSION
from .logs import log_names
from .sqlite_files import remove_database
from .views import VIEWS_DIR

if TYPE_CHECKING:
    from ..home import Home

STAMP_NAME = "privacy.json"
REDACTION_VERSION = 1


@dataclass(frozen=True)
class UpgradeReport:
    lines_rewritten: int
    logs_rewritten: int

    @property
    def message(self) -> str:
        return (
            f"opmem: the memory of an earlier opmem was re-redacted: {self.lines_rewritten:,} records in "
            f"{self.logs_rewritten} logs had secrets masked; views, core.md and the search index rebuilt"
        )


def stamped(memory_dir: Path) -> bool:
    try:
        data = json.loads((memory_dir / STAMP_NAME).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("redaction") == REDACTION_VERSION


def write_stamp(memory_dir: Path) -> None:
    memory_dir.mkdir(parents=True, exist_ok=True)
    _replace(memory_dir / STAMP_NAME, (json.dumps({"redaction": REDACTION_VERSION}) + "\n").encode("utf-8"))


def needs_upgrade(memory_dir: Path) -> bool:
    """True when the memory holds logs written before redaction. (An index of an earlier opmem
    has an older schema and is rebuilt whole wherever it is opened: memory/index.py.)"""
    return not stamped(memory_dir) and bool(log_names(memory_dir))


def redact_earlier_memory(home: Home, project: Callable[[Home], object]) -> UpgradeReport | None:
    """Re-redact a memory written by an earlier opmem (None: nothing to do). The caller holds the
    distillation lock; `project` rebuilds core.md, the views and the index from the redacted logs
    (distill/project.py's project_all: the memory imports nothing of distill)."""
    memory_dir = home.memory_dir
    if stamped(memory_dir):
        return None
    if not needs_upgrade(memory_dir):
        if memory_dir.is_dir():
            _drop_old_index(memory_dir / INDEX_FILE)
            write_stamp(memory_dir)
        return None
    return _upgrade(home, project)


def _upgrade(home: Home, project: Callable[[Home], object]) -> UpgradeReport | None:
    root = home.memory_dir
    lines = logs = 0
    for name in log_names(root):
        changed = _redact_log(root / name)
        if changed:
            lines += changed
            logs += 1
    if not lines:  # no record held a secret, so neither does what was derived from the records
        _drop_old_index(root / INDEX_FILE)
        write_stamp(root)
        return None
    # Derived from the logs (or, for the index, from the sessions' raw text): rebuilt, not patched.
    shutil.rmtree(root / VIEWS_DIR, ignore_errors=True)
    (root / "graph" / "views" / "state.json").unlink(missing_ok=True)
    _wipe_cache(root / CACHE_NAME)
    remove_database(root / INDEX_FILE)
    for core in [root / "core.md", *root.glob("projects/*/core.md")]:
        core.unlink(missing_ok=True)
    project(home)
    write_stamp(root)
    return UpgradeReport(lines, logs)


def _wipe_cache(path: Path) -> None:
    """Empty the memory cache and VACUUM it, so no page of the file still holds a value. Emptied,
    not deleted: this process may hold it open (the app), and an empty cache rebuilds itself from
    the logs on its next look (backend/memory/cache.py)."""
    if not path.exists():
        return
    try:
        conn = sqlite3.connect(path, timeout=5.0, isolation_level=None)
        try:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            conn.execute("BEGIN IMMEDIATE")
            for table in tables:
                if table != "meta":
                    conn.execute(f'DELETE FROM "{table}"')
            conn.execute("COMMIT")
            conn.execute("VACUUM")
        finally:
            conn.close()
    except sqlite3.Error:
        remove_database(path)  # unreadable or busy: it is derived, a new one is built


def _drop_old_index(path: Path) -> None:
    """An index an earlier opmem wrote holds the sessions' raw text: removed (it is rebuilt)."""
    if not path.exists():
        return
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return  # unreadable: the index's own open says so and rebuilds it
    if row is not None and row[0] != SCHEMA_VERSION:
        remove_database(path)


def _redact_log(path: Path) -> int:
    """Rewrite one JSONL log with its secrets masked; the number of lines that changed."""
    try:
        data = path.read_bytes()
    except OSError:
        return 0
    out: list[bytes] = []
    changed = 0
    for raw in data.splitlines(keepends=True):
        body = raw.rstrip(b"\r\n")
        end = raw[len(body) :]
        new = _redact_line(body)
        if new is not body:
            changed += 1
        out.append(new + end)
    if changed:
        _replace(path, b"".join(out))
    return changed


def _redact_line(body: bytes) -> bytes:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    try:
        record = json.loads(text)
    except ValueError:  # a torn line: masked as text, still ignored on read
        masked = redact_text(text)
        return body if masked is text else masked.encode("utf-8")
    masked = redact_value(record)
    if masked is record:
        return body
    try:
        return json.dumps(masked, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(masked, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _replace(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
