"""``<home>/import-state.json``: what was imported from each file, so unchanged files are skipped
and `opmem watch` reads only bytes appended since.

    {"version": 1, "files": {"/abs/path.jsonl": {"source": "claude", "size": 123, "mtime_ns": 1,
     "offset": 123, "lines": 7, "complete": true}},
     "warned": {"/abs/path.jsonl": {"size": 123, "mtime_ns": 1, "said": ["<sha1 of a warning>"]}}}

`warned`: the warnings already said about a file as it was then; said again only once it
changes (or with `opmem import --verbose`), so a file re-read every run (one that fails, a
live tail) does not repeat itself.

`complete` is false while the importer held part of the file back (a live session's open tail);
such a file is parsed again even when unchanged. The file is a cache: when it is missing or
unreadable every file is simply imported again (idempotently); `problem` then says why.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..file_lock import file_lock
from ..store.files import write_atomic

STATE_FILE = "import-state.json"
VERSION = 1


@dataclass(slots=True)
class FileState:
    source: str
    size: int
    mtime_ns: int
    offset: int  # bytes consumed (complete lines only)
    lines: int  # lines consumed, so line numbers stay absolute when reading from `offset`
    complete: bool = True


class ImportState:
    """Per-file progress, loaded once and saved with a lock (import and watch may both run)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.files: dict[str, FileState] = {}
        self.warned: dict[str, dict[str, Any]] = {}  # key -> {"size", "mtime_ns", "said": [digests]}
        self._changed: set[str] = set()
        self._warned_changed: set[str] = set()
        self.problem = ""  # why an existing state file was not used (every file is read again)
        if path is not None:
            self.files, self.problem = _read(path)
            self.warned = _read_warned(path) if not self.problem else {}

    def said_before(self, path: Path | str, stat: os.stat_result, warnings: list[str]) -> list[bool]:
        """For each of `warnings` about `path` (as `stat` has it): was it said already about the
        file as it is now? Records them as said."""
        key = self.key(path)
        known = self.warned.get(key)
        same = known is not None and known.get("size") == stat.st_size and known.get("mtime_ns") == stat.st_mtime_ns
        said = set(known.get("said", ())) if same and known else set()
        digests = [hashlib.sha1(line.encode("utf-8", "replace")).hexdigest() for line in warnings]
        out = [digest in said for digest in digests]
        if warnings or known is not None:
            entry = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "said": sorted(said | set(digests))}
            if entry != known:
                self.warned[key] = entry
                self._warned_changed.add(key)
        return out

    @staticmethod
    def key(path: Path | str) -> str:
        return str(Path(path).expanduser().resolve())

    def get(self, path: Path | str) -> FileState | None:
        return self.files.get(self.key(path))

    def unchanged(self, path: Path | str, stat: os.stat_result, source: str | None = None) -> bool:
        """The file is exactly as it was when fully imported (by `source`, when given: a file read
        as the wrong format imported nothing, and the right importer must still read it)."""
        known = self.get(path)
        return (
            known is not None
            and (source is None or known.source == source)
            and known.complete
            and known.size == stat.st_size
            and known.mtime_ns == stat.st_mtime_ns
            and known.offset == stat.st_size
        )

    def record(self, path: Path | str, entry: FileState) -> None:
        key = self.key(path)
        self.files[key] = entry
        self._changed.add(key)

    def save(self) -> None:
        """Merge our changed entries into the file on disk (another process may have saved too)."""
        if self.path is None or not (self._changed or self._warned_changed):
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        unsaved = "what was imported is stored, but this state was not saved: the next import reads these files again"
        with file_lock(self.path, consequence=unsaved):
            on_disk, _ = _read(self.path)
            for key in self._changed:
                if key in self.files:
                    on_disk[key] = self.files[key]
                else:
                    on_disk.pop(key, None)
            warned = _read_warned(self.path)
            for key in self._warned_changed:
                warned[key] = self.warned[key]
            data = {
                "version": VERSION,
                "files": {k: asdict(v) for k, v in sorted(on_disk.items())},
                "warned": dict(sorted(warned.items())),
            }
            # fsynced like every other state file: after a crash it is the old state or the new
            write_atomic(self.path, json.dumps(data, indent=1).encode("utf-8"))
        self._changed.clear()
        self._warned_changed.clear()


def _read(path: Path) -> tuple[dict[str, FileState], str]:
    """The entries, and why the file was not usable ('' when it was, or when it does not exist)."""
    redo = "every file is imported again (idempotently) and the state rewritten"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return {}, f"cannot read the import state ({exc.strerror or exc}); {redo}"
    except (ValueError, RecursionError) as exc:
        return {}, f"the import state does not parse ({_why(exc)}); {redo}"
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}, f'the import state has no "files" object; {redo}'
    out: dict[str, FileState] = {}
    for key, raw in files.items():
        entry = _entry(raw)
        if isinstance(key, str) and entry is not None:
            out[key] = entry
    return out, ""


def _read_warned(path: Path) -> dict[str, dict[str, Any]]:
    """The `warned` entries of a usable state file ({} otherwise: every warning is said again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    warned = data.get("warned") if isinstance(data, dict) else None
    if not isinstance(warned, dict):
        return {}
    return {
        key: entry
        for key, entry in warned.items()
        if isinstance(entry, dict) and isinstance(entry.get("said"), list) and isinstance(entry.get("size"), int)
    }


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def _entry(raw: Any) -> FileState | None:
    if not isinstance(raw, dict):
        return None
    try:
        return FileState(
            source=str(raw["source"]),
            size=int(raw["size"]),
            mtime_ns=int(raw["mtime_ns"]),
            offset=int(raw["offset"]),
            lines=int(raw.get("lines", 0)),
            complete=bool(raw.get("complete", True)),
        )
    except (KeyError, TypeError, ValueError):
        return None
