"""The memory read without writing anything: `ReadOnlyMemoryStore(root)`, `Home.memory_readonly()`.

A read-only store answers every query a MemoryStore answers and creates or changes nothing on
disk: no memory/ folder, no .lock, no cache, no -journal, -wal or -shm file. Writes raise
MemoryReadOnly. Made for readers that must leave the state folder as they found it (the recall
tools, the MCP server).

How it reads. The cache (.cache.sqlite) is kept in SQLite's rollback-journal mode, so a
`mode=ro` connection reads it in place: no copy, and SQLite's own file locks (on the database
file, no extra file) keep each statement consistent while another process writes. A writer
folds what it appends into the cache in the same transaction, so the cache normally holds
exactly what the logs hold; the store checks that (each log's size, mtime and inode against
what the cache says it read) at every query that sees the cache changed, and at least every
second or at refresh().

When the cache does not hold what the logs hold (no cache yet, an older schema, a cache left in
WAL mode by an older opmem, a hot journal, a hand-edited log, or a writer caught between its
append and its commit), the store switches to a private copy in RAM (SQLite's backup of the disk
cache under a shared lock, else an empty one) and folds in the log lines that copy has not seen,
with the store's own catch-up code. It goes back to the disk cache as soon as that is current
again, so a long-lived reader does not keep paying for the copy.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..model import OpmemError
from .cache import FULL_CHECK_S, MemoryCache
from .cache_tables import SCHEMA, SCHEMA_VERSION
from .logs import FileStamp
from .store import MemoryStore, MemoryWriter
from .temporal import SessionExists

_SQLITE_MAGIC = b"SQLite format 3\x00"


class MemoryReadOnly(OpmemError):
    """A write was asked of a read-only memory store."""


class ReadOnlyCache(MemoryCache):
    """MemoryCache over the disk cache opened `mode=ro`, or over a private copy in RAM."""

    def _open(self) -> sqlite3.Connection:
        self._disk: sqlite3.Connection | None = None
        self.on_disk = False
        disk = self._open_disk()
        if disk is not None:
            self._disk = disk
            self.on_disk = True
            return disk
        return self._private(None)

    def _open_disk(self) -> sqlite3.Connection | None:
        """The disk cache, read-only in place; None when that is not possible without writing."""
        try:
            with self.path.open("rb") as fh:
                header = fh.read(100)
        except OSError:
            return None
        # WAL (header bytes 18-19 = 2): even a read-only connection would create -wal and -shm
        if len(header) < 100 or not header.startswith(_SQLITE_MAGIC) or header[18:20] != b"\x01\x01":
            return None
        try:
            db = sqlite3.connect(
                f"file:{quote(str(self.path))}?mode=ro",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                timeout=30,
            )
        except sqlite3.Error:
            return None
        try:
            db.execute("PRAGMA mmap_size=1073741824")
            db.execute("PRAGMA query_only=1")
            if self._schema_ok(db):  # a hot journal a reader cannot roll back fails here
                self.generation = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                return db
        except sqlite3.Error:
            pass
        db.close()
        return None

    def _private(self, source: sqlite3.Connection | None) -> sqlite3.Connection:
        """A cache in RAM: a copy of `source` (consistent: SQLite's backup), or empty."""
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        if source is not None:
            try:
                source.backup(db)
                self.generation = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                return db
            except sqlite3.Error:
                db.close()
                db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        self.generation = uuid.uuid4().hex
        db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", SCHEMA_VERSION), ("generation", self.generation)])
        return db

    def _disk_current(self, stamps: dict[str, FileStamp | None]) -> bool:
        """Whether the disk cache has read every log exactly as it is now."""
        if self._disk is None:
            self._disk = self._open_disk()
            if self._disk is None:
                return False
        try:
            rows = {r[0]: tuple(r[1:]) for r in self._disk.execute("SELECT name, size, mtime_ns, ino FROM files")}
        except sqlite3.Error:
            self._disk.close()
            self._disk = None
            return False
        now = {name: (s.size, s.mtime_ns, s.ino) for name, s in stamps.items() if s is not None}
        return rows == now

    def sync(self, *, force: bool = False) -> bool:
        with self.lock:
            version = self.db.execute("PRAGMA data_version").fetchone()[0]
            now = time.monotonic()
            if self._seen is not None and not force and version == self._version and now - self._checked < FULL_CHECK_S:
                return False
            stamps = self._stamps()
            if self._disk_current(stamps):
                moved = not self.on_disk or version != self._version or stamps != self._seen
                if not self.on_disk:  # back to the disk cache: it caught up
                    self.db.close()
                    self.db, self.on_disk = self._disk, True
                    self.generation = self.db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                self._seen, self._checked = stamps, now
                self._version = self.db.execute("PRAGMA data_version").fetchone()[0]
                return moved
            switched = self.on_disk
            if switched:  # the logs hold what the disk cache does not: fold it into a private copy
                self.db = self._private(self.db)
                self.on_disk = False
                self._seen = None
            return super().sync(force=True) or switched

    def rebuild(self) -> None:
        with self.lock:
            if self.on_disk:
                self.db = self._private(None)
                self.on_disk = False
            super().rebuild()

    def close(self) -> None:
        with self.lock:
            if self._disk is not None and self._disk is not self.db:
                self._disk.close()
            self.db.close()

    @contextmanager
    def writing(self) -> Iterator[None]:
        raise MemoryReadOnly("this memory store is read-only; writes go through Home.memory")
        yield  # pragma: no cover - a generator for contextmanager


class ReadOnlyMemoryStore(MemoryStore):
    """A MemoryStore that only reads and writes nothing on disk (see the module docstring)."""

    def __init__(self, root: Path | str, *, session_exists: SessionExists | None = None) -> None:
        super().__init__(root, session_exists=session_exists, durable=False)

    @property
    def cache(self) -> MemoryCache:
        if self._cache is None:
            with self._open_lock:
                if self._cache is None:
                    self._cache = ReadOnlyCache(self.root)
        return self._cache

    @contextmanager
    def batch(self) -> Iterator[MemoryWriter]:
        raise MemoryReadOnly("this memory store is read-only; writes go through Home.memory")
        yield  # pragma: no cover - a generator for contextmanager
