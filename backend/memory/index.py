"""The search index: SQLite FTS5 in memory/index.sqlite, derived from the sessions and the memory logs.

Delete the file and `opmem index rebuild` (or the next update) makes it again. Two kinds of rows:

- Turn rows (`docs` + `turns_fts`): one per user or assistant message and one per tool call
  (tool name, paths, commands), carrying their provenance (session, node id, turn, commit,
  time, speaker). `turns_fts` is contentless (the text stays in the session store; snippets are
  read back from the node files of the top hits only), with two columns: `body` (the message)
  and `ctx` (the start of the two messages before it on its branch: a reply is found by the
  question it answers). detail=full, so bm25() works without stored content.
- Record rows (`records` + `records_fts`): timeline events, entities (name and aliases) and
  edges rendered as sentences, each with the provenance of the record (a distilled fact that
  points at a turn is a second key for that turn).

A contentless FTS5 table cannot forget a row without its text, and a deleted session's text is
gone: its rows are marked dead (never returned) and the table is compacted by a rebuild when dead
rows pass a quarter of the index. Per-session cursors (last indexed seq and a stamp of the
history folder) make an update read only what is new.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..model import OpmemError
from .sqlite_tx import immediate_transaction
from .term_counts import TermCounts

SCHEMA_VERSION = "4"  # 3: secrets masked (backend/privacy); 4: a session's turns under its project's scope
# (a folder project too, as the distiller decides); an older index is rebuilt whole
INDEX_FILE = "index.sqlite"
# Reads through a memory map, not a read() per page: a search's CPU p95 at 500,000 turns fell
# from 8.2 to 7.3 ms (bench/search_bench.py). SQLite writes through write() still (no mmap'd
# writes), remaps as the file grows, and a rebuild's rename leaves old maps on the old file.
MMAP_BYTES = 1 << 30
TOKENIZER = "porter unicode61 remove_diacritics 2"

KIND_MESSAGE = 0
KIND_TOOL = 1
KIND_EVENT = 2
KIND_ENTITY = 3
KIND_EDGE = 4
KIND_NAMES = {
    KIND_MESSAGE: "turn",
    KIND_TOOL: "tool",
    KIND_EVENT: "event",
    KIND_ENTITY: "entity",
    KIND_EDGE: "edge",
}

ROLE_NAMES = frozenset({"user", "assistant", "tool", "system"})

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    cursor INTEGER NOT NULL DEFAULT -1,
    stamp TEXT NOT NULL DEFAULT '',
    dead INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS docs(
    id INTEGER PRIMARY KEY,
    kind INTEGER NOT NULL,
    sess INTEGER NOT NULL,
    node TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    turn INTEGER,
    commit_id TEXT,
    time REAL NOT NULL,
    speaker TEXT,
    prev INTEGER
);
CREATE INDEX IF NOT EXISTS docs_node ON docs(sess, node);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(body, ctx, content='', tokenize='{TOKENIZER}');
CREATE TABLE IF NOT EXISTS dense_vecs(id INTEGER PRIMARY KEY, vecs BLOB NOT NULL);  -- dense_rerank.py
CREATE TABLE IF NOT EXISTS records(
    id INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL UNIQUE,
    kind INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    node_ids TEXT NOT NULL,
    turn INTEGER,
    commit_id TEXT,
    time REAL NOT NULL,
    scope TEXT NOT NULL,
    body TEXT NOT NULL,
    entities TEXT NOT NULL,
    source TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    body, content='records', content_rowid='id', tokenize='{TOKENIZER}'
);
CREATE TABLE IF NOT EXISTS record_entities(entity_id TEXT NOT NULL, rec INTEGER NOT NULL, PRIMARY KEY(entity_id, rec))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS record_entities_rec ON record_entities(rec);
CREATE TABLE IF NOT EXISTS superseded(record_id TEXT PRIMARY KEY, by TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS aliases(
    alias_id TEXT PRIMARY KEY, into_id TEXT NOT NULL, merged_id TEXT NOT NULL, active INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS names(key TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY(key, entity_id))
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS participants(name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_cursors(path TEXT PRIMARY KEY, offset INTEGER NOT NULL, ident TEXT NOT NULL);
"""


class SearchIndexError(OpmemError):
    """The index file cannot be opened or is not an opmem index."""


class SchemaMismatch(SearchIndexError):
    """An index written by another version of opmem: derived data, so it is rebuilt."""


_MAX_ROWID = 2**63 - 1  # SQLite's largest rowid


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One message or tool call as it goes into the index."""

    kind: int  # KIND_MESSAGE or KIND_TOOL
    node: str
    seq: int
    role: str
    turn: int | None
    commit: str | None
    time: float
    speaker: str
    body: str
    ctx: str
    prev_node: str | None  # the chain message before it (for the reply-follows-question signal)


@dataclass(frozen=True, slots=True)
class RecordRow:
    """A memory record as it goes into the index."""

    record_id: str
    kind: int  # KIND_EVENT, KIND_ENTITY or KIND_EDGE
    session_id: str
    node_ids: tuple[str, ...]
    turn: int | None
    commit: str | None
    time: float
    scope: str
    body: str
    entities: tuple[str, ...]
    source: str  # the log file it came from (relative to memory/)
    names: tuple[str, ...] = ()  # entity rows: normalized name and aliases, for entity matching


@dataclass(frozen=True, slots=True)
class SessionCursor:
    session_id: str
    scope: str
    cursor: int
    stamp: str


@dataclass(frozen=True, slots=True)
class IndexStats:
    path: str
    bytes: int
    sessions: int
    turn_rows: int
    dead_rows: int
    record_rows: int


class SearchIndex:
    """One index.sqlite. Thread-safe (one connection per thread); many processes may share it."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ connection

    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        ident, size = self._file_state()
        if conn is not None and ident != getattr(self._local, "ident", None):
            conn.close()  # rebuilt by someone (renamed over): read the new file
            conn = None
        elif conn is not None and size < self._local.size:
            # Shrunk in place: SQLite never does that to this file (a rebuild renames a new one
            # over it), something else truncated it. The map still covers the old length and a
            # read past the new end is SIGBUS, which kills the process: drop the map first.
            conn.close()
            conn = None
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            ident, size = self._file_state()
            self._local.ident = ident
            with self._lock:
                self._conns.append(conn)
        self._local.size = size
        return conn

    def term_counts(self) -> TermCounts:
        """This thread's term row counts, kept while the index does not change (term_counts.py)."""
        db = self.db
        counts = getattr(self._local, "counts", None)
        if counts is None or counts.db is not db:
            counts = self._local.counts = TermCounts(db)
        return counts

    def _file_state(self) -> tuple[tuple[int, int] | None, int]:
        """(inode, device) of the file, None when it is missing, and its size."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None, 0
        return (st.st_ino, st.st_dev), st.st_size

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            # A rollback journal, not WAL: rebuild swaps the file by rename, which a WAL file
            # beside it would not survive. Derived data: no fsync (a crash costs a rebuild).
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if row is None:
                    conn.execute("INSERT INTO meta(key, value) VALUES('schema', ?)", (SCHEMA_VERSION,))
                elif row[0] != SCHEMA_VERSION:
                    raise SchemaMismatch(
                        f"{self.path}: index schema {row[0]!r}, this opmem reads {SCHEMA_VERSION!r}: "
                        "run `opmem index rebuild`"
                    )
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except SchemaMismatch:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            raise SearchIndexError(
                f"{self.path}: cannot open the search index ({exc}); run `opmem index rebuild`"
            ) from None
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: a second writer waits for the first)."""
        try:
            with immediate_transaction(self.db) as db:
                yield db
        except sqlite3.OperationalError as exc:
            raise SearchIndexError(
                f"{self.path}: cannot write the search index ({exc}); it catches up at the next update"
            ) from None

    # ------------------------------------------------------------------ sessions

    def cursors(self, session_ids: Sequence[str] | None = None) -> dict[str, SessionCursor]:
        """Every live session's cursor, or these sessions' (those indexed)."""
        sql = "SELECT session_id, scope, cursor, stamp FROM sessions WHERE dead=0"
        if session_ids is None:
            return {r[0]: SessionCursor(*r) for r in self.db.execute(sql)}
        out: dict[str, SessionCursor] = {}
        for start in range(0, len(session_ids), 500):
            chunk = session_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.db.execute(f"{sql} AND session_id IN ({marks})", chunk):
                out[r[0]] = SessionCursor(*r)
        return out

    def cursor(self, db: sqlite3.Connection, session_id: str) -> SessionCursor | None:
        row = db.execute(
            "SELECT session_id, scope, cursor, stamp FROM sessions WHERE session_id=? AND dead=0", (session_id,)
        ).fetchone()
        return SessionCursor(*row) if row else None

    def add_turns(
        self,
        db: sqlite3.Connection,
        session_id: str,
        scope: str,
        rows: Sequence[TurnRow],
        cursor: int,
        stamp: str,
    ) -> int:
        """Append a session's new rows and move its cursor, inside the caller's transaction."""
        sess = self._session_key(db, session_id, scope)
        prev_ids = self._node_rows(db, sess, {r.prev_node for r in rows if r.prev_node})
        # The ids SQLite gives rows inserted one by one (docs.id is an INTEGER PRIMARY KEY without
        # AUTOINCREMENT: the largest id + 1, 1 in an empty table), named here so that one
        # executemany inserts them all (an execute per row was a fifth of an index update).
        top = db.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
        fts_rows = []
        if top + len(rows) < _MAX_ROWID:
            doc_rows = []
            for rowid, row in enumerate(rows, top + 1):
                prev = prev_ids.get(row.prev_node) if row.prev_node else None
                doc_rows.append(
                    (
                        rowid,
                        row.kind,
                        sess,
                        row.node,
                        row.seq,
                        row.role,
                        row.turn,
                        row.commit,
                        row.time,
                        row.speaker,
                        prev,
                    )
                )
                if row.kind == KIND_MESSAGE:
                    prev_ids[row.node] = rowid
                fts_rows.append((rowid, row.body, row.ctx))
            db.executemany(
                "INSERT INTO docs(id, kind, sess, node, seq, role, turn, commit_id, time, speaker, prev) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                doc_rows,
            )
        else:  # past the largest id SQLite picks free ids at random: it names each
            for row in rows:
                prev = prev_ids.get(row.prev_node) if row.prev_node else None
                cur = db.execute(
                    "INSERT INTO docs(kind, sess, node, seq, role, turn, commit_id, time, speaker, prev) "
                    "VALUES(?,?,?,?,?,?,?,?,?,?)",
                    (row.kind, sess, row.node, row.seq, row.role, row.turn, row.commit, row.time, row.speaker, prev),
                )
                rowid = cur.lastrowid
                if row.kind == KIND_MESSAGE:
                    prev_ids[row.node] = rowid
                fts_rows.append((rowid, row.body, row.ctx))
        db.executemany("INSERT INTO turns_fts(rowid, body, ctx) VALUES(?,?,?)", fts_rows)
        names = {r.speaker for r in rows if r.kind == KIND_MESSAGE and r.speaker not in ROLE_NAMES}
        db.executemany("INSERT OR IGNORE INTO participants(name) VALUES(?)", [(n,) for n in names])
        db.execute("UPDATE sessions SET cursor=?, stamp=?, scope=? WHERE id=?", (cursor, stamp, scope, sess))
        return len(rows)

    def set_stamp(self, db: sqlite3.Connection, session_id: str, scope: str, stamp: str) -> None:
        sess = self._session_key(db, session_id, scope)
        db.execute("UPDATE sessions SET stamp=?, scope=? WHERE id=?", (stamp, scope, sess))

    def fill_commits(self, db: sqlite3.Connection, session_id: str, commits: dict[str, tuple[int, str]]) -> None:
        """Rows indexed before their turn was committed get the commit now (no FTS change)."""
        row = db.execute("SELECT id FROM sessions WHERE session_id=? AND dead=0", (session_id,)).fetchone()
        if row is None:
            return
        missing = db.execute("SELECT id, node FROM docs WHERE sess=? AND commit_id IS NULL", (row[0],)).fetchall()
        updates = [(commits[node][1], rid) for rid, node in missing if node in commits and commits[node][1]]
        if updates:
            db.executemany("UPDATE docs SET commit_id=? WHERE id=?", updates)

    def uncommitted(self, db: sqlite3.Connection, session_id: str) -> int:
        row = db.execute(
            "SELECT count(*) FROM docs JOIN sessions s ON s.id=docs.sess "
            "WHERE s.session_id=? AND s.dead=0 AND docs.commit_id IS NULL",
            (session_id,),
        ).fetchone()
        return int(row[0])

    def drop_session(self, db: sqlite3.Connection, session_id: str) -> None:
        """A deleted session: its rows are dead from now on (see the module docstring)."""
        db.execute(
            "UPDATE sessions SET dead=1, session_id=session_id || ':dead:' || id WHERE session_id=?", (session_id,)
        )

    def session_rows(self, db: sqlite3.Connection, session_id: str) -> int:
        row = db.execute(
            "SELECT count(*) FROM docs d JOIN sessions s ON s.id=d.sess WHERE s.session_id=? AND s.dead=0",
            (session_id,),
        ).fetchone()
        return int(row[0])

    def drop_records(self, db: sqlite3.Connection, session_ids: Sequence[str], scopes: Sequence[str] = ()) -> int:
        """Delete the record rows of these sessions (and of records without a session in these scopes)."""
        rids: list[int] = []
        for start in range(0, len(session_ids), 500):
            chunk = list(session_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rids.extend(r[0] for r in db.execute(f"SELECT id FROM records WHERE session_id IN ({marks})", chunk))
        for scope in scopes:
            rids.extend(r[0] for r in db.execute("SELECT id FROM records WHERE scope=? AND session_id=''", (scope,)))
        for rid in rids:
            self._delete_record(db, rid)
        return len(rids)

    def _session_key(self, db: sqlite3.Connection, session_id: str, scope: str) -> int:
        row = db.execute("SELECT id FROM sessions WHERE session_id=? AND dead=0", (session_id,)).fetchone()
        if row is not None:
            return int(row[0])
        cur = db.execute("INSERT INTO sessions(session_id, scope) VALUES(?, ?)", (session_id, scope))
        return int(cur.lastrowid or 0)

    def _node_rows(self, db: sqlite3.Connection, sess: int, nodes: Iterable[str]) -> dict[str, int]:
        wanted = list(nodes)
        out: dict[str, int] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rid, node in db.execute(
                f"SELECT id, node FROM docs WHERE sess=? AND kind={KIND_MESSAGE} AND node IN ({marks})", (sess, *chunk)
            ):
                out[node] = rid
        return out

    # ------------------------------------------------------------------ records

    def log_cursor(self, db: sqlite3.Connection, path: str) -> tuple[int, str]:
        row = db.execute("SELECT offset, ident FROM log_cursors WHERE path=?", (path,)).fetchone()
        return (int(row[0]), str(row[1])) if row else (0, "")

    def set_log_cursor(self, db: sqlite3.Connection, path: str, offset: int, ident: str) -> None:
        db.execute("INSERT OR REPLACE INTO log_cursors(path, offset, ident) VALUES(?,?,?)", (path, offset, ident))

    def forget_log(self, db: sqlite3.Connection, path: str) -> None:
        """A log rewritten under us (smaller, or another file): drop what it gave, read it again."""
        for (rid,) in db.execute("SELECT id FROM records WHERE source=?", (path,)).fetchall():
            self._delete_record(db, rid)
        db.execute("DELETE FROM log_cursors WHERE path=?", (path,))

    def add_record(self, db: sqlite3.Connection, row: RecordRow) -> None:
        """Insert a record, or replace the one with its id (an entity whose aliases grew)."""
        old = db.execute("SELECT id FROM records WHERE record_id=?", (row.record_id,)).fetchone()
        if old is not None:
            self._delete_record(db, old[0])
        cur = db.execute(
            "INSERT INTO records(record_id, kind, session_id, node_ids, turn, commit_id, time, scope, body, "
            "entities, source) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
            (
                row.record_id,
                row.kind,
                row.session_id,
                json.dumps(list(row.node_ids)),
                row.turn,
                row.commit,
                row.time,
                row.scope,
                row.body,
                json.dumps(list(row.entities)),
                row.source,
            ),
        )
        db.execute("INSERT INTO records_fts(rowid, body) VALUES(?, ?)", (cur.lastrowid, row.body))
        db.executemany(
            "INSERT OR IGNORE INTO record_entities(entity_id, rec) VALUES(?, ?)",
            [(entity, cur.lastrowid) for entity in row.entities],
        )
        for key in row.names:
            db.execute("INSERT OR IGNORE INTO names(key, entity_id) VALUES(?, ?)", (key, row.record_id))

    def participants(self) -> frozenset[str]:
        """The names that speak in the indexed sessions (roles left out)."""
        return frozenset(r[0] for r in self.db.execute("SELECT name FROM participants"))

    def record_names(self, db: sqlite3.Connection, record_id: str) -> tuple[str, ...]:
        return tuple(r[0] for r in db.execute("SELECT key FROM names WHERE entity_id=?", (record_id,)))

    def _delete_record(self, db: sqlite3.Connection, rid: int) -> None:
        row = db.execute("SELECT body, record_id FROM records WHERE id=?", (rid,)).fetchone()
        if row is None:
            return
        db.execute("INSERT INTO records_fts(records_fts, rowid, body) VALUES('delete', ?, ?)", (rid, row[0]))
        db.execute("DELETE FROM records WHERE id=?", (rid,))
        db.execute("DELETE FROM record_entities WHERE rec=?", (rid,))
        db.execute("DELETE FROM names WHERE entity_id=?", (row[1],))

    def supersede(self, db: sqlite3.Connection, record_id: str, by: str) -> None:
        db.execute("INSERT OR REPLACE INTO superseded(record_id, by) VALUES(?, ?)", (record_id, by))

    def set_alias(self, db: sqlite3.Connection, alias_id: str, into: str, merged: str) -> None:
        db.execute(
            "INSERT OR REPLACE INTO aliases(alias_id, into_id, merged_id, active) VALUES(?,?,?,1)",
            (alias_id, into, merged),
        )

    def unset_alias(self, db: sqlite3.Connection, alias_id: str) -> None:
        db.execute("UPDATE aliases SET active=0 WHERE alias_id=?", (alias_id,))

    # ------------------------------------------------------------------ upkeep

    def stats(self) -> IndexStats:
        db = self.db
        turn_rows, dead = db.execute(
            "SELECT count(*), coalesce(sum(s.dead), 0) FROM docs d JOIN sessions s ON s.id=d.sess"
        ).fetchone()
        sessions = db.execute("SELECT count(*) FROM sessions WHERE dead=0").fetchone()[0]
        records = db.execute("SELECT count(*) FROM records").fetchone()[0]
        return IndexStats(str(self.path), self.size_bytes(), int(sessions), int(turn_rows), int(dead), int(records))

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-journal"):
            try:
                total += os.path.getsize(f"{self.path}{suffix}")
            except OSError:
                pass
        return total

    def optimize(self) -> None:
        """Merge the FTS segments and give free pages back (after a bulk load)."""
        db = self.db
        db.execute("INSERT INTO turns_fts(turns_fts) VALUES('optimize')")
        db.execute("INSERT INTO records_fts(records_fts) VALUES('optimize')")
        db.execute("VACUUM")
