"""The memory read without writing: the store's queries over a private in-memory cache.

MemoryStore keeps a derived SQLite cache on disk (memory/.cache.sqlite) and brings it up to
date on every read; even a read-only SQLite connection to a WAL database creates -wal/-shm
files. A recall tool must leave the state folder untouched, so it reads the memory through
MemoryReader: the same store and queries, over a cache that lives in this process's RAM.

That cache starts as a copy of the disk cache's bytes (a plain file read, taken again if the
file changed while it was read; a copy that is not a readable cache of this schema is
dropped) and is then caught up with the logs by the store's own code, which reads only the
lines the copy has not seen (or folds everything again when the logs were rewritten). Without
a disk cache the logs are folded from scratch. A missing memory/ folder reads as empty.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..memory import cache as cache_module
from ..memory.cache import MemoryCache
from ..memory.store import MemoryStore, MemoryWriter
from ..model import OpmemError


class _PrivateCache(MemoryCache):
    """MemoryCache on an in-memory database: nothing on disk is created or changed."""

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        image = _cache_image(self.path)
        if image is not None:
            try:
                db.deserialize(image)
                if self._schema_ok(db) and db.execute("PRAGMA quick_check").fetchone()[0] == "ok":
                    self.generation = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                    return db
            except sqlite3.DatabaseError:
                pass
            db.close()
            db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        for statement in cache_module._SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        self.generation = uuid.uuid4().hex
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [("schema", cache_module.SCHEMA_VERSION), ("generation", self.generation)]
        )
        return db


def _cache_image(path: Path, attempts: int = 3) -> bytes | None:
    """The disk cache's bytes, read while nobody wrote them (stat before and after agree).

    Its header is switched from WAL to rollback journalling: the copy lives in memory, where
    WAL does not exist. Data still in the -wal file is not in the copy; the catch-up from the
    logs reads it again.
    """
    for _ in range(attempts):
        try:
            before = path.stat()
            data = path.read_bytes()
            after = path.stat()
        except OSError:
            return None
        stamp = (before.st_mtime_ns, before.st_size, before.st_ino)
        if stamp != (after.st_mtime_ns, after.st_size, after.st_ino) or len(data) != before.st_size:
            continue
        if len(data) < 100 or not data.startswith(b"SQLite format 3\x00"):
            return None
        image = bytearray(data)
        image[18:20] = b"\x01\x01"  # file format: legacy (rollback journal), not WAL
        return bytes(image)
    return None


class MemoryReader(MemoryStore):
    """A MemoryStore that only reads: its cache lives in RAM, and every write is refused."""

    @property
    def cache(self) -> MemoryCache:
        if self._cache is None:
            with self._open_lock:
                if self._cache is None:
                    self._cache = _PrivateCache(self.root)
        return self._cache

    def rebuild_cache(self) -> None:
        self.cache.rebuild()
        self._changed()

    @contextmanager
    def batch(self) -> Iterator[MemoryWriter]:
        raise OpmemError("the recall tools read the memory only; writes go through the memory store")
        yield  # pragma: no cover - a generator for contextmanager
