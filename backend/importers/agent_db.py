"""Reading another agent's live SQLite database without disturbing it.

The agent keeps writing its database (most in WAL mode) while opmem reads it, so a read must
never take a lock that could hand the agent SQLITE_BUSY, and must never write, checkpoint or
migrate anything:

- WAL databases are opened ``file:...?mode=ro`` (readers never block a WAL writer); the read is
  one short transaction (`snapshot`), so a checkpoint is never held up for long. That open needs
  the ``-wal`` and ``-shm`` files and makes them when missing (a reader cannot remove them again),
  so a WAL database without them (no connection open: the last one checkpointed and removed
  them) is opened ``immutable=1`` instead: no lock, no side file, and the database file alone
  holds every commit. One with a ``-wal`` but no ``-shm`` is copied.
- When that cannot work (a read-only folder where the ``-shm`` cannot be made, a rollback-journal
  database whose reader would hold a SHARED lock, a database locked exclusively), the database and
  its ``-wal`` are copied to a temporary folder and the copy is read. The copy is made by plain
  file reads, which take no SQLite lock.
- A file that is not a SQLite database, a truncated one, or one of an unknown schema raises
  AgentDbError naming the file and the problem; importers turn that into a warning.

`db_stamp` is the file state of a database *with* its WAL: in WAL mode a commit changes only the
``-wal`` file, so the database file alone would look unchanged.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..model import OpmemError

HEADER = b"SQLite format 3\x00"
BUSY_MS = 1000  # how long *we* wait for a lock; the agent's writes never wait for us


class AgentDbError(OpmemError):
    """An agent database that cannot be read (named, with the problem)."""


@dataclass(frozen=True, slots=True)
class DbStamp:
    """What import-state.json records of a database: its size and newest mtime, WAL included."""

    st_size: int
    st_mtime_ns: int


def db_stamp(path: Path) -> DbStamp:
    size, mtime = 0, 0
    for suffix in ("", "-wal"):
        try:
            stat = os.stat(f"{path}{suffix}")
        except OSError:
            if suffix:
                continue
            raise
        if suffix and stat.st_size == 0:
            continue  # an empty WAL (a reader may create one) holds nothing
        size += stat.st_size
        mtime = max(mtime, stat.st_mtime_ns)
    return DbStamp(size, mtime)


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == HEADER
    except OSError:
        return False


def _journal_is_wal(path: Path) -> bool:
    """Bytes 18-19 of the header: 2 = WAL, 1 = rollback journal."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise AgentDbError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not header:
        raise AgentDbError(f"{path}: empty file, not a SQLite database")
    if len(header) < 100 or not header.startswith(HEADER):
        raise AgentDbError(f"{path}: not a SQLite database (or cut short)")
    return header[18] == 2 or header[19] == 2


def _connect_ro(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    uri = f"file:{quote(str(path))}?mode=ro{'&immutable=1' if immutable else ''}"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = 1")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _in_place(path: Path) -> str | None:
    """How a WAL database is read where it is without making a file beside it: "ro" (its -wal and
    -shm are there), "immutable" (no WAL content: the database file holds every commit), None (a
    -wal without its -shm: read a copy)."""
    sizes = []
    for suffix in ("-wal", "-shm"):
        try:
            sizes.append(os.stat(f"{path}{suffix}").st_size)
        except OSError:
            sizes.append(None)
    log, shm = sizes
    if log is not None and shm is not None:
        return "ro"
    return "immutable" if not log else None


def _copy(path: Path, folder: Path) -> Path:
    target = folder / path.name
    try:
        shutil.copyfile(path, target)
        wal = Path(f"{path}-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(f"{target}-wal"))
    except OSError as exc:
        raise AgentDbError(f"{path}: cannot copy it to read: {exc.strerror or exc}") from None
    return target


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "malformed" in text or "not a database" in text or "disk image" in text:
        return f"damaged or cut-short database ({text})"
    if "locked" in text or "busy" in text:
        return f"database is locked ({text})"
    return text


@contextmanager
def open_agent_db(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to `path` (or to a private copy of it); AgentDbError when unreadable."""
    path = Path(path)
    wal = _journal_is_wal(path)
    conn: sqlite3.Connection | None = None
    copy_dir: str | None = None
    first_problem = ""
    in_place = _in_place(path) if wal else None
    if in_place is not None:
        try:
            conn = _connect_ro(path, immutable=in_place == "immutable")
        except sqlite3.Error as exc:  # read-only folder (no -shm), locked, damaged: try a copy
            first_problem = _why(exc)
    if conn is None:
        copy_dir = tempfile.mkdtemp(prefix="opmem-agentdb-")
        try:
            copy = _copy(path, Path(copy_dir))
            conn = sqlite3.connect(str(copy), timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            conn.execute("PRAGMA query_only = 1")
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            shutil.rmtree(copy_dir, ignore_errors=True)
            raise AgentDbError(f"{path}: {first_problem or _why(exc)}") from None
        except AgentDbError:
            shutil.rmtree(copy_dir, ignore_errors=True)
            raise
    try:
        yield conn
    except sqlite3.Error as exc:
        raise AgentDbError(f"{path}: {_why(exc)}") from None
    finally:
        conn.close()
        if copy_dir is not None:
            shutil.rmtree(copy_dir, ignore_errors=True)


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One short read transaction: every query inside sees the same committed state."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Table name -> its column names."""
    out: dict[str, set[str]] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        out[name] = {row[1] for row in conn.execute(f'PRAGMA table_info("{name}")').fetchall()}
    return out


def require(path: Path, found: dict[str, set[str]], needed: dict[str, Iterable[str]], what: str) -> None:
    """AgentDbError unless every table of `needed` is there with its columns (a schema we know)."""
    for table, columns in needed.items():
        if table not in found:
            raise AgentDbError(f"{path}: not a {what} database of a known schema (no table {table!r})")
        missing = sorted(set(columns) - found[table])
        if missing:
            raise AgentDbError(f"{path}: unknown {what} schema: table {table!r} lacks {', '.join(missing)}")


def column(found: dict[str, set[str]], table: str, name: str, default: str = "NULL") -> str:
    """`name` when the table has it, else a constant (older schemas lack some columns)."""
    return f'"{name}"' if name in found.get(table, set()) else default
