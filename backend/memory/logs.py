"""The memory's JSONL logs on disk: which file a record goes to, durable appends, reading lines back.

The logs are the truth; everything else under memory/ is derived from them. A line is one JSON
object ending in "\\n". A last line without its "\\n" is a torn write (a crash mid-append): it
is never consumed, and the next append seals it with a "\\n" first so new records never glue
onto it (it is then reported as a bad line with its file:line, its bytes kept).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..model import OpmemError

TIMELINE_DIR = "timeline"
GRAPH_DIR = "graph"
ENTITIES_LOG = f"{GRAPH_DIR}/entities.jsonl"
EDGES_LOG = f"{GRAPH_DIR}/edges.jsonl"


class MemoryWriteFailed(OpmemError):
    """A log could not be written or made durable (disk full, permissions, ...); names the file."""


_MONTH_RE = re.compile(r"\d{4}-\d{2}\.jsonl")
_CHUNK = 1 << 22


# The month month_log() named last, as (start, end, name): the times in [start, end) are in it.
_last_month: tuple[float, float, str] = (math.inf, -math.inf, "")


def month_log(event_time: float) -> str:
    """`timeline/YYYY-MM.jsonl` for the month (UTC) of `event_time`, relative to memory/."""
    global _last_month
    start, end, name = _last_month
    if start <= event_time < end:  # a batch's events mostly share a month: no datetime to build
        return name
    try:
        moment = datetime.fromtimestamp(event_time, UTC)
    except (OverflowError, OSError, ValueError):
        moment = datetime.fromtimestamp(0, UTC)  # a nonsense time still gets a home
    name = f"{TIMELINE_DIR}/{moment:%Y-%m}.jsonl"
    _last_month = (*_month_span(moment), name)
    return name


def _month_span(moment: datetime) -> tuple[float, float]:
    """The times fromtimestamp() puts in `moment`'s month, a second clear of both ends (it
    rounds to microseconds, so a time just before the next month may land in it)."""
    first = datetime(moment.year, moment.month, 1, tzinfo=UTC)
    try:
        after = datetime(moment.year + moment.month // 12, moment.month % 12 + 1, 1, tzinfo=UTC)
    except ValueError:  # December 9999: no next month to bound it
        return math.inf, -math.inf
    return first.timestamp() + 1, after.timestamp() - 1


def log_names(root: Path) -> list[str]:
    """Every log under `root` (memory/), relative names, in a stable order: months, entities, edges."""
    names: list[str] = []
    try:
        with os.scandir(root / TIMELINE_DIR) as entries:
            names.extend(f"{TIMELINE_DIR}/{e.name}" for e in entries if _MONTH_RE.fullmatch(e.name))
    except (FileNotFoundError, NotADirectoryError):
        pass
    names.sort()
    names.extend(name for name in (ENTITIES_LOG, EDGES_LOG) if (root / name).is_file())
    return names


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What tells a log changed: size, mtime and inode (an append moves size and mtime)."""

    size: int
    mtime_ns: int
    ino: int

    @classmethod
    def of(cls, path: Path) -> FileStamp | None:
        try:
            st = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)


def fingerprint(path: Path, offset: int, span: int = 256) -> str:
    """The bytes just before `offset` and the first bytes of the file, as a hex string.

    Cheap evidence that the prefix a cache consumed is still the prefix on disk.
    """
    if offset <= 0:
        return ""
    with path.open("rb") as fh:
        head = fh.read(min(span, offset))
        fh.seek(max(0, offset - span))
        tail = fh.read(min(span, offset))
    return (head + b"|" + tail).hex()


@dataclass(frozen=True, slots=True)
class RawLine:
    number: int  # 1-based line number in the file
    data: bytes  # without the "\n"


@dataclass(slots=True)
class ReadState:
    """Where a read stopped: offset after the last complete line, and its line count."""

    offset: int
    lines: int
    torn: bool = False  # bytes after `offset` with no "\n" yet


def read_lines(path: Path, state: ReadState) -> Iterator[RawLine]:
    """Complete lines after `state.offset`; `state` is advanced as they are yielded.

    A trailing fragment without "\\n" is left unread and flagged `state.torn`.
    """
    state.torn = False
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    with fh:
        fh.seek(state.offset)
        pending = b""
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                break
            buf = pending + chunk
            start = 0
            while True:
                end = buf.find(b"\n", start)
                if end < 0:
                    break
                state.lines += 1
                state.offset += end + 1 - start
                yield RawLine(state.lines, buf[start:end])
                start = end + 1
            pending = buf[start:]
        state.torn = bool(pending)


class LogAppender:
    """Appends lines to logs, sealing torn tails, fsyncing each file once on `sync()`.

    Used under the memory lock only: one writer at a time.
    """

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = root
        self.durable = durable
        self._fds: dict[str, int] = {}
        self._new_dirs: set[Path] = set()

    def _fd(self, name: str) -> int:
        fd = self._fds.get(name)
        if fd is not None:
            return fd
        try:
            return self._open(name)
        except OSError as exc:
            raise MemoryWriteFailed(f"{self.root / name}: cannot write ({exc.strerror or exc})") from None

    def _open(self, name: str) -> int:
        path = self.root / name
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
            self._new_dirs.add(path.parent.parent)
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._fds[name] = fd
        if created:
            self._new_dirs.add(path.parent)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            _write_all(fd, b"\n")  # seal a torn last line; its bytes stay, reported as bad
        return fd

    def write(self, name: str, lines: list[bytes]) -> int:
        """Append `lines` (each without "\\n") to log `name`; returns the file's new size."""
        fd = self._fd(name)
        try:
            _write_all(fd, b"\n".join(lines) + b"\n" if lines else b"")
            return os.fstat(fd).st_size
        except OSError as exc:
            raise MemoryWriteFailed(f"{self.root / name}: cannot write ({exc.strerror or exc})") from None

    def sync(self) -> None:
        """Make everything written durable (fsync files, then folders that gained files)."""
        try:
            if self.durable:
                for name, fd in self._fds.items():
                    try:
                        os.fsync(fd)
                    except OSError as exc:
                        raise MemoryWriteFailed(f"{self.root / name}: cannot sync ({exc.strerror or exc})") from None
                for folder in sorted(self._new_dirs, key=lambda p: len(p.parts), reverse=True):
                    _fsync_dir(folder)
        finally:
            self.close()

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        self._new_dirs = set()
        for fd in fds.values():
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a folder; the files themselves are synced
    finally:
        os.close(fd)
