"""The derived SQLite cache of the memory logs (memory/.cache.sqlite): folded state, indexed.

The JSONL logs are the truth. The cache remembers, per log, how far it has read (offset, line
count) and evidence of what it read (size, mtime, inode, a fingerprint of the bytes around
the offset). On every sync a log that only grew is read from its offset; a log that shrank,
was replaced or rewritten in place, or vanished makes the whole cache rebuild from the logs.
A cache that cannot be opened (corrupt, other schema) is deleted and rebuilt. It is never
trusted over the logs, and deleting it only costs one rebuild.

Folding: each record's retirement (`sup_t`, `sup_by`, `sup_reason`) is resolved from the
supersede patches whose retiring record has an event_time >= the retired one's (a late import
of an older fact never retires a newer one); among several, the earliest retirement wins.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..model import CorruptFile, OpmemError
from .cache_tables import (
    ADJ_FILL,
    ADJ_SUP,
    DATA_TABLES,
    INDEXES,
    MAX_SEQ,
    RECORD_TABLE,
    ROW_OF,
    ROW_SQL,
    SCHEMA,
    SCHEMA_VERSION,
    TABLE_OF,
    edge_row,
    entity_row,
    event_row,
    name_keys,
)
from .logs import ENTITIES_LOG, TIMELINE_DIR, FileStamp, ReadState, fingerprint, log_names, read_lines
from .records import (
    AliasMerge,
    AliasUnmerge,
    Edge,
    Entity,
    Event,
    Patch,
    parse_edge_line,
    parse_entity_line,
    parse_timeline_line,
)
from .sqlite_files import remove_database
from .sqlite_tx import immediate_transaction

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; json writes arrays json_each reads alike
    orjson = None  # type: ignore[assignment]

FULL_CHECK_S = 1.0
CACHE_NAME = ".cache.sqlite"

_TEXT = {str}

MemoryRecord = Event | Entity | Edge | Patch | AliasMerge | AliasUnmerge


class CacheError(OpmemError):
    """The cache (memory/cache.sqlite, derived from the logs) cannot be written: a full disk."""


@dataclass(slots=True)
class _Touched:
    """What an ingest changed, so folding work is limited to it."""

    retire: dict[str, set[str]] = field(default_factory=lambda: {"event": set(), "edge": set()})
    added: dict[str, set[str]] = field(default_factory=lambda: {"event": set(), "edge": set()})
    aliases: bool = False
    changed: bool = False


def log_kind(name: str) -> str:
    if name.startswith(f"{TIMELINE_DIR}/"):
        return "timeline"
    return "entities" if name == ENTITIES_LOG else "edges"


_PARSERS = {"timeline": parse_timeline_line, "entities": parse_entity_line, "edges": parse_edge_line}


def parse_log_line(name: str, raw: bytes, where: str) -> MemoryRecord:
    """One line of log `name` as its record; CorruptFile, ValueError or RecursionError when bad."""
    return _PARSERS[log_kind(name)](json.loads(raw.decode("utf-8")), where)


class MemoryCache:
    """One SQLite connection over the cache, shared by the store's threads under one lock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / CACHE_NAME
        self.lock = threading.RLock()
        self.generation = ""
        self._seen: dict[str, FileStamp | None] | None = None
        self._paths: dict[str, str] = {}  # log name -> full path, as problems and patches name it
        self._version = -1  # PRAGMA data_version at the last look
        self._checked = 0.0  # time.monotonic() of the last stat of the logs
        self._touched = _Touched()
        self._bulk = False  # a rebuild fills the adjacency table once at its end
        self.db = self._open()

    # -- opening -------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        self.root.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            try:
                _rollback_journal(db)
                db.execute("PRAGMA synchronous=OFF")  # derived data: a torn cache is rebuilt
                db.execute("PRAGMA mmap_size=1073741824")  # reads from the OS cache, no syscall a page
                db.execute("PRAGMA cache_size=-32768")
                if self._schema_ok(db):
                    self.generation = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                    return db
                db.execute("BEGIN IMMEDIATE")
                if not self._schema_ok(db):  # another process may have made it meanwhile
                    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
                        db.execute(f'DROP TABLE IF EXISTS "{name}"')
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [("schema", SCHEMA_VERSION), ("generation", uuid.uuid4().hex)],
                    )
                db.execute("COMMIT")
                self.generation = db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                return db
            except sqlite3.DatabaseError as exc:
                db.close()
                if attempt == 2:
                    raise CacheError(
                        f"{self.path}: cannot create the memory cache ({exc}); the logs are intact"
                    ) from None
                remove_database(self.path)  # unreadable cache: it is only derived data
        raise AssertionError("unreachable")

    @staticmethod
    def _schema_ok(db: sqlite3.Connection) -> bool:
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.OperationalError:
            return False
        return row is not None and row[0] == SCHEMA_VERSION

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # -- transactions ----------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[_Touched]:
        """One write transaction: caught up with the logs first, folded and committed at the end."""
        with self.lock, self._transaction():
            try:
                self._touched = _Touched()
                self._catch_up()
                yield self._touched
                self._fold(self._touched)
            finally:
                self._seen = None  # our own appends moved the logs: check again next time

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE .. COMMIT; a database error (a full disk) names the cache file. The
        logs are the truth: whatever they gained is folded in at the next look."""
        try:
            with immediate_transaction(self.db):
                yield
        except sqlite3.OperationalError as exc:
            raise CacheError(f"{self.path}: cannot write the memory cache ({exc}); the logs are intact") from None

    def sync(self, *, force: bool = False) -> bool:
        """Bring the cache up to the logs; True when a log had changed since the last look.

        Writers (any process) fold what they append into the cache in the same transaction, so
        SQLite's data_version tells at once when one has written. Changes made to the logs by
        anything else (a hand edit, a crashed writer's tail) are looked for by stat-ing the logs
        at most every FULL_CHECK_S seconds, or now with `force`.
        """
        with self.lock:
            if self._seen is not None:
                version = self.db.execute("PRAGMA data_version").fetchone()[0]
                now = time.monotonic()
                if not force and version == self._version and now - self._checked < FULL_CHECK_S:
                    return False
                self._version, self._checked = version, now
                if self._stamps() == self._seen:
                    return False
            try:
                with self._transaction():
                    self._touched = touched = _Touched()
                    stamps = self._catch_up()
                    self._fold(touched)
            except BaseException:
                self._seen = None
                raise
            self._seen = stamps  # taken before reading: a log grown since is seen as changed
            self._version = self.db.execute("PRAGMA data_version").fetchone()[0]
            self._checked = time.monotonic()
            return True

    def rebuild(self) -> None:
        """Forget everything derived and read every log again."""
        with self.lock, self._transaction():
            try:
                self._touched = _Touched()
                self._rebuild()
                self._fold(self._touched)
            finally:
                self._seen = None

    def _stamps(self) -> dict[str, FileStamp | None]:
        return {name: FileStamp.of(self.root / name) for name in log_names(self.root)}

    # -- catching up with the logs --------------------------------------------------------------

    def _catch_up(self) -> dict[str, FileStamp | None]:
        """Read what the logs gained since the cache last read them; returns the stamps it started from."""
        stamps = self._stamps()
        rows = {r[0]: r for r in self.db.execute("SELECT name, offset, lines, size, mtime_ns, ino, fp FROM files")}
        if any(name not in stamps for name in rows) or (not rows and stamps):
            return self._rebuild()  # a log vanished, or a cache with nothing yet: read all in bulk
        plan: list[tuple[str, int, int]] = []
        for name, stamp in stamps.items():
            row = rows.get(name)
            if stamp is None:
                continue
            if row is None:
                plan.append((name, 0, 0))
                continue
            _, offset, lines, size, mtime_ns, ino, fp = row
            if stamp.size == size and stamp.mtime_ns == mtime_ns and stamp.ino == ino:
                continue
            if stamp.ino != ino or stamp.size < offset or stamp.size == size:
                return self._rebuild()  # replaced, shrunk or rewritten in place
            if fingerprint(self.root / name, offset) != fp:
                return self._rebuild()
            plan.append((name, offset, lines))
        for name, offset, lines in plan:
            self.ingest_file(name, ReadState(offset, lines), stamps[name])
        return stamps

    def _rebuild(self) -> dict[str, FileStamp | None]:
        for table in (*DATA_TABLES, "files"):
            self.db.execute(f"DELETE FROM {table}")
        self.generation = uuid.uuid4().hex
        self.db.execute("UPDATE meta SET value=? WHERE key='generation'", (self.generation,))
        self._touched.aliases = True
        self._touched.changed = True
        self._touched.retire = {"event": {"*"}, "edge": {"*"}}
        stamps = self._stamps()
        for index_name, _ in INDEXES:  # bulk load, then build each index once (sorted, not row by row)
            self.db.execute(f"DROP INDEX IF EXISTS {index_name}")
        self._bulk = True
        try:
            for name, stamp in stamps.items():
                if stamp is not None:
                    self.ingest_file(name, ReadState(0, 0), stamp)
        finally:
            self._bulk = False
            for _, statement in INDEXES:
                self.db.execute(statement.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
        fill = ADJ_FILL.format(where="1").replace("INSERT OR IGNORE INTO adj ", "")
        self.db.execute(f"INSERT OR IGNORE INTO adj SELECT * FROM ({fill}) ORDER BY 1, 2, 3")  # in key order
        return stamps

    def ingest_file(self, name: str, state: ReadState, stamp: FileStamp | None = None) -> None:
        """Read log `name` on from `state`, folding each good line and noting each bad one."""
        path = self.root / name
        parse = _PARSERS[log_kind(name)]
        where_base = str(path)
        for raw in read_lines(path, state):
            if not raw.data.strip():
                continue
            where = f"{where_base}:{raw.number}"
            try:
                record = parse(json.loads(raw.data.decode("utf-8")), where)
            except CorruptFile as exc:
                self._problem(where_base, raw.number, exc.problem)
                continue
            except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
                self._problem(where_base, raw.number, _json_problem(exc))
                continue
            self.insert(record, name, raw.number)
        self.record_file(name, state, stamp)

    def record_file(self, name: str, state: ReadState, stamp: FileStamp | None = None) -> None:
        """Remember how far log `name` has been read (after reading it, or after appending to it)."""
        stamp = stamp or FileStamp.of(self.root / name)
        if stamp is None:
            return
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                state.offset,
                state.lines,
                stamp.size,
                stamp.mtime_ns,
                stamp.ino,
                fingerprint(self.root / name, state.offset),
                int(state.torn),
            ),
        )
        self._touched.changed = True

    def file_state(self, name: str) -> ReadState:
        row = self.db.execute("SELECT offset, lines FROM files WHERE name=?", (name,)).fetchone()
        return ReadState(row[0], row[1]) if row else ReadState(0, 0)

    def _problem(self, path: str, line: int | None, message: str) -> None:
        self.db.execute("INSERT INTO problems VALUES (?, ?, ?)", (path, line, message))

    # -- inserting records ---------------------------------------------------------------------

    def has(self, record: MemoryRecord) -> bool:
        """Whether a record with this identity is already held (appending it again adds nothing)."""
        return (type(record), record.id) in self.held([record])

    def held(self, records: list[MemoryRecord]) -> set[tuple[type, str]]:
        """(type, id) of those `records` already held; patches are checked apart (has_patch)."""
        by_type: dict[type, list[str]] = {}
        for record in records:
            if not isinstance(record, Patch):
                by_type.setdefault(type(record), []).append(record.id)
        found: set[tuple[type, str]] = set()
        for kind, ids in by_type.items():
            table = TABLE_OF[kind]
            for chunk in _chunks(ids, 5000):
                sql = f"SELECT id FROM {table} WHERE id IN (SELECT value FROM json_each(?))"
                found.update((kind, r[0]) for r in self.db.execute(sql, (_json_texts(chunk),)))
        return found

    def held_patches(self, pairs: Iterable[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """Those of the (kind, old, new) `pairs` held as patches: has_patch() for many."""
        pairs = set(pairs)
        by_kind: dict[str, list[str]] = {}
        for kind, old in sorted({(kind, old) for kind, old, _ in pairs}):
            by_kind.setdefault(kind, []).append(old)
        found: set[tuple[str, str, str]] = set()
        for kind, ids in by_kind.items():
            for chunk in _chunks(ids, 500):
                sql = f"SELECT id, by FROM patches WHERE kind=? AND id IN ({','.join('?' * len(chunk))})"
                found.update((kind, old, new) for old, new in self.db.execute(sql, (kind, *chunk)))
        return found & pairs

    def times_of(self, kind: str, ids: Iterable[str]) -> dict[str, float]:
        """The event_time of each of `ids` held as a record of `kind` ("event", "edge")."""
        table = RECORD_TABLE[kind]
        found: dict[str, float] = {}
        for chunk in _chunks(list(ids), 500):
            found.update(
                self.db.execute(f"SELECT id, t FROM {table} WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            )
        return found

    def has_patch(self, kind: str, old: str, new: str) -> bool:
        row = self.db.execute("SELECT 1 FROM patches WHERE kind=? AND id=? AND by=?", (kind, old, new))
        return row.fetchone() is not None

    def insert(self, record: MemoryRecord, name: str, line: int) -> bool:
        """Fold one record read from (or just appended to) log `name` at `line`; False if already held."""
        try:
            return self._insert(record, name, line)
        except UnicodeEncodeError:  # lone surrogates: SQLite takes UTF-8 only; the log keeps them exact
            return self._insert(_scrubbed(record, name), name, line)

    def insert_appended(self, records: Iterable[tuple[MemoryRecord, str, int]]) -> None:
        """insert() each of these (record, log name, line) just appended to the logs: a run of
        events, edges or entities in one statement per table, and the adjacency rows of their
        edges by one statement at the end instead of one per edge."""
        items = list(records)
        bulk = self._bulk  # a rebuild fills the adjacency table at its own end
        before = 0 if bulk else self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM edges").fetchone()[0]
        self._bulk = True
        try:
            start = 0
            while start < len(items):
                kind = type(items[start][0])
                end = start + 1
                while end < len(items) and type(items[end][0]) is kind:
                    end += 1
                if kind in ROW_SQL and end - start > 1:
                    self._insert_many(kind, items[start:end])
                else:
                    for record, name, line in items[start:end]:
                        self.insert(record, name, line)
                start = end
        finally:
            self._bulk = bulk
        if not bulk:  # an edge's seq is above every older one (INTEGER PRIMARY KEY): these are the rows just added
            self.db.execute(ADJ_FILL.format(where="seq > ?"), (before, before))

    def _insert_many(self, kind: type, items: list[tuple[MemoryRecord, str, int]]) -> None:
        """What insert() does for each of these records of one kind, with one executemany a table."""
        db = self.db
        table = TABLE_OF[kind]
        before = db.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {table}").fetchone()[0]
        row_of = ROW_OF[kind]
        changes = db.total_changes
        db.execute("SAVEPOINT insert_many")
        try:
            db.executemany(ROW_SQL[kind], (row_of(record) for record, _, _ in items))  # no list of rows to hold
        except UnicodeEncodeError:  # lone surrogates somewhere: each record on its own (insert() scrubs)
            db.execute("ROLLBACK TO insert_many")
            db.execute("RELEASE insert_many")
            for record, name, line in items:
                self.insert(record, name, line)
            return
        db.execute("RELEASE insert_many")
        fresh: list[MemoryRecord]
        seqs: Iterable[int]
        if db.total_changes - changes == len(items) and before + len(items) < MAX_SEQ:
            # every row went in, each with seq one above the table's largest (SQLite's rowid rule below its maximum)
            fresh, seqs = [record for record, _, _ in items], range(before + 1, before + len(items) + 1)
        else:
            found = dict(db.execute(f"SELECT id, seq FROM {table} WHERE seq > ?", (before,)))
            if not found:
                return
            fresh, seqs = [], []
            for record, _, _ in items:
                if record.id in found:  # the first of an id given twice went in
                    fresh.append(record)
                    seqs.append(found.pop(record.id))
        touched = self._touched
        if kind is Event:
            db.executemany(
                "INSERT INTO mentions VALUES (?, ?)",
                ((e, seq) for record, seq in zip(fresh, seqs, strict=True) for e in dict.fromkeys(record.entities)),
            )
            touched.added["event"].update(record.id for record in fresh)
        elif kind is Edge:
            touched.added["edge"].update(record.id for record in fresh)
        else:
            db.executemany(
                "INSERT OR IGNORE INTO names VALUES (?, ?)",
                [(k, record.id) for record in fresh for k in name_keys(record)],
            )
        touched.changed = True

    def _insert(self, record: MemoryRecord, name: str, line: int) -> bool:
        db = self.db
        path = self._paths.get(name) or self._paths.setdefault(name, str(self.root / name))
        touched = self._touched
        if isinstance(record, Event):
            cur = db.execute(ROW_SQL[Event], event_row(record))
            if cur.rowcount != 1:
                return False
            seq = cur.lastrowid
            db.executemany("INSERT INTO mentions VALUES (?, ?)", [(e, seq) for e in dict.fromkeys(record.entities)])
            touched.added["event"].add(record.id)
        elif isinstance(record, Edge):
            cur = db.execute(ROW_SQL[Edge], edge_row(record))
            if cur.rowcount != 1:
                return False
            if not self._bulk:
                db.execute(ADJ_FILL.format(where="seq = ?"), (cur.lastrowid, cur.lastrowid))
            touched.added["edge"].add(record.id)
        elif isinstance(record, Entity):
            cur = db.execute(ROW_SQL[Entity], entity_row(record))
            if cur.rowcount != 1:
                return False
            db.executemany("INSERT OR IGNORE INTO names VALUES (?, ?)", [(k, record.id) for k in name_keys(record)])
        elif isinstance(record, Patch):
            kind = "event" if log_kind(name) == "timeline" else "edge"
            cur = db.execute(
                "INSERT OR IGNORE INTO patches(kind, id, by, at, reason, path, line) VALUES (?,?,?,?,?,?,?)",
                (kind, record.id, record.by, record.at, record.reason, path, line),
            )
            if cur.rowcount != 1:
                return False
            touched.retire[kind].add(record.id)
        elif isinstance(record, AliasMerge):
            cur = db.execute(
                "INSERT OR IGNORE INTO aliases(id, into_, merged, reason, score, at, path, line)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (record.id, record.into, record.merged, record.reason, record.score, record.at, path, line),
            )
            if cur.rowcount != 1:
                return False
            touched.aliases = True
        else:
            cur = db.execute(
                "INSERT OR IGNORE INTO unmerges(id, at, reason, path, line) VALUES (?,?,?,?,?)",
                (record.id, record.at, record.reason, path, line),
            )
            if cur.rowcount != 1:
                return False
            touched.aliases = True
        touched.changed = True
        return True

    # -- folding supersede patches ---------------------------------------------------------------

    def _fold(self, touched: _Touched) -> None:
        for kind, table in RECORD_TABLE.items():
            ids = set(touched.retire[kind])
            added = touched.added[kind]
            if "*" not in ids and added:
                # records that a patch names as their retirer may only now have arrived
                for chunk in _chunks(sorted(added), 500):
                    ids.update(
                        r[0]
                        for r in self.db.execute(
                            f"SELECT id FROM patches WHERE kind=? AND by IN ({','.join('?' * len(chunk))})",
                            (kind, *chunk),
                        )
                    )
            if not ids:
                continue
            where = (
                "id IN (SELECT id FROM patches WHERE kind=?)"
                if "*" in ids
                else "id IN (SELECT value FROM json_each(?))"
            )
            arg = kind if "*" in ids else _json_texts(sorted(ids))
            self.db.execute(
                f"UPDATE {table} SET (sup_t, sup_by, sup_reason) = ("
                f" SELECT b.t, p.by, p.reason FROM patches p JOIN {table} b ON b.id = p.by"
                f" WHERE p.kind = ? AND p.id = {table}.id AND b.t >= {table}.t"
                f" ORDER BY b.t, p.at, p.by LIMIT 1) WHERE {where}",
                (kind, arg),
            )
            if table == "edges":
                sql = f"SELECT sup_t, sup_by, sup_reason, src, dst, t, seq FROM edges WHERE {where}"
                rows = self.db.execute(sql, (arg,)).fetchall()
                self.db.executemany(ADJ_SUP, [(*r[:3], end, *r[5:]) for r in rows for end in {r[3], r[4]}])


def _rollback_journal(db: sqlite3.Connection) -> None:
    """Rollback journalling, not WAL: a read-only reader (readonly.py) then opens the cache in place
    without creating -wal/-shm files. A cache another process holds open in WAL mode stays WAL."""
    db.execute("PRAGMA busy_timeout=0")  # don't wait for a WAL user to leave: stay WAL meanwhile
    try:
        db.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.OperationalError:
        pass
    finally:
        db.execute("PRAGMA busy_timeout=30000")


def scrub(text: str) -> str:
    """Text SQLite can store: lone surrogates become U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _scrubbed(record: MemoryRecord, name: str) -> MemoryRecord:
    line = json.dumps(record.to_json(), ensure_ascii=False)
    return _PARSERS[log_kind(name)](json.loads(scrub(line)), name)


def _json_texts(texts: list[str]) -> str:
    """A JSON array of `texts` for json_each: orjson's, faster than json.dumps(texts) and read as the
    same texts (it writes UTF-8 where json writes \\u escapes); json's for a lone surrogate."""
    if orjson is not None and set(map(type, texts)) <= _TEXT:
        try:
            return orjson.dumps(texts).decode()
        except TypeError:  # a lone surrogate: json escapes it
            pass
    return json.dumps(texts)


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 ({exc.reason} at byte {exc.start})"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at column {exc.colno}: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return f"invalid line: {exc}"
