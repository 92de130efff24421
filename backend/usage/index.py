"""The usage index: one row per reply the agent recorded tokens for, one per user turn, in SQLite.

It lives in its own file, memory/usage.sqlite, not in the search index (memory/index.sqlite):
the search index is swapped whole by its own rebuilds, purges and dense-vector fills, while this
one changes on a different clock (a new price table recomputes its costs) and is read by the
Activity tab while an import writes it; two files keep one's rebuild from blanking the other.
Derived data: delete it and it is rebuilt from the stored sessions (with progress).

Import, watch and sync keep it current where they update the search index (the after-ingest
hook of Home.ingest_hooks; the reindex step of backend/sync/pull.py). Node files are written once
and never change, so a session's update reads only the user and assistant node files past its
last indexed seq, picked out by name (history/NNNNNN-<r>-<id>.json): tool nodes are never read.

Privacy: rows hold counts, model names, project ids and session ids, never text. Private and
excluded sessions are counted here (this machine's totals); the file is not synced (backend/sync
pushes session refs and memory logs only; tests/backend/usage/test_usage_sync.py holds it to that).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from ..model import CorruptFile, Node, OpmemError, SessionMeta, SessionNotFound
from ..store.files import read_json_object
from ..store.node_log import NODE_FILE_RE
from ..store.sessions import SessionStore
from .prices import PriceTable
from .tokens import node_counts, node_model, session_counts

USAGE_FILE = "usage.sqlite"
SCHEMA_VERSION = "7"
BATCH_SESSIONS = 200  # sessions per write transaction
SESSION_TOTAL_SEQ = -1  # the row of a session whose agent records totals only

Progress = Callable[[int, int], Any]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
    session_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, source TEXT NOT NULL,
    project_id TEXT NOT NULL, model TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS usage(
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, ts REAL NOT NULL, day TEXT NOT NULL,
    source TEXT NOT NULL, project_id TEXT NOT NULL, model TEXT NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, reasoning INTEGER NOT NULL, cost REAL,
    PRIMARY KEY(session_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turns(
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, ts REAL NOT NULL, day TEXT NOT NULL,
    source TEXT NOT NULL, project_id TEXT NOT NULL,
    PRIMARY KEY(session_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS daily(
    day TEXT NOT NULL, session_id TEXT NOT NULL, model TEXT NOT NULL, source TEXT NOT NULL,
    project_id TEXT NOT NULL, replies INTEGER NOT NULL, priced INTEGER NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, reasoning INTEGER NOT NULL, cost REAL, last_ts REAL NOT NULL,
    PRIMARY KEY(day, session_id, model)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS daily_session ON daily(session_id);
CREATE TABLE IF NOT EXISTS session_days(
    day TEXT NOT NULL, session_id TEXT NOT NULL, source TEXT NOT NULL, project_id TEXT NOT NULL,
    turns INTEGER NOT NULL, tokens INTEGER NOT NULL, cost REAL NOT NULL, unpriced INTEGER NOT NULL,
    PRIMARY KEY(day, session_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS session_days_session ON session_days(session_id);
CREATE TABLE IF NOT EXISTS slices(
    day TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, sessions INTEGER NOT NULL,
    turns INTEGER NOT NULL, tokens INTEGER NOT NULL, cost REAL NOT NULL, unpriced INTEGER NOT NULL,
    PRIMARY KEY(day, kind, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS model_days(
    day TEXT NOT NULL, model TEXT NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL,
    cache_write INTEGER NOT NULL, cache_read INTEGER NOT NULL, reasoning INTEGER NOT NULL, cost REAL,
    replies INTEGER NOT NULL, priced INTEGER NOT NULL,
    PRIMARY KEY(day, model)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_totals(
    session_id TEXT PRIMARY KEY, input INTEGER NOT NULL, output INTEGER NOT NULL,
    cache_write INTEGER NOT NULL, cache_read INTEGER NOT NULL, reasoning INTEGER NOT NULL, cost REAL,
    replies INTEGER NOT NULL, priced INTEGER NOT NULL) WITHOUT ROWID;
"""
# What `daily`, `session_days` and `session_totals` hold: a session's rows summed per day (and
# model), and in all, recomputed from `usage` and `turns` whenever the session changes, so the
# reports, the Activity tab and the session list sum a few rows per session-day instead of every
# reply. `unpriced`: tokens of replies with no price.
_ROLL_DAILY = """INSERT INTO daily SELECT day, session_id, model, source, project_id, count(*), count(cost),
    sum(input), sum(output), sum(cache_write), sum(cache_read), sum(reasoning), sum(cost), max(ts)
    FROM usage WHERE session_id = ? GROUP BY day, model"""
_ROLL_DAYS = """INSERT INTO session_days SELECT day, ?1, ?2, ?3, sum(turns), sum(tokens), sum(cost), sum(unpriced)
    FROM (SELECT day, 0 AS turns, input + output + cache_write + cache_read AS tokens, coalesce(cost, 0) AS cost,
              CASE WHEN cost IS NULL THEN input + output + cache_write + cache_read ELSE 0 END AS unpriced
          FROM usage WHERE session_id = ?1
          UNION ALL SELECT day, 1, 0, 0, 0 FROM turns WHERE session_id = ?1)
    GROUP BY day"""
_ROLL_SESSION = """INSERT INTO session_totals SELECT session_id, sum(input), sum(output), sum(cache_write),
    sum(cache_read), sum(reasoning), sum(cost), sum(replies), sum(priced) FROM daily WHERE session_id = ?
    GROUP BY session_id"""
TABLES = ("usage", "turns", "daily", "session_days", "session_totals", "sessions")  # by session
# Per day over every session (the Activity tab reads only these): `slices` holds each day's
# sessions, turns, tokens and cost in total ("total", ""), per project ("project", id) and per
# agent ("source", name); `model_days` each day's sums per model. Recomputed for the days a
# batch touched, from `session_days` and `daily`.
DAY_TABLES = ("slices", "model_days")
_SLICE_SUMS = "count(*), sum(turns), sum(tokens), sum(cost), sum(unpriced) FROM session_days WHERE day IN ({days})"
ROLL_DAY_SUMS = (
    f"INSERT INTO slices SELECT day, 'total', '', {_SLICE_SUMS} GROUP BY day",
    f"INSERT INTO slices SELECT day, 'project', project_id, {_SLICE_SUMS} GROUP BY day, project_id",
    f"INSERT INTO slices SELECT day, 'source', source, {_SLICE_SUMS} GROUP BY day, source",
    """INSERT INTO model_days SELECT day, model, sum(input), sum(output), sum(cache_write), sum(cache_read),
        sum(reasoning), sum(cost), sum(replies), sum(priced) FROM daily WHERE day IN ({days}) GROUP BY day, model""",
)
DAYS_PER_STATEMENT = 400  # below SQLite's bound on a statement's variables

USAGE_COLUMNS = (
    "session_id, seq, ts, day, source, project_id, model, input, output, cache_write, cache_read, reasoning, cost"
)


class UsageIndexError(OpmemError):
    pass


@dataclass(slots=True)
class UpdateReport:
    sessions: int = 0  # sessions looked at
    replies: int = 0  # reply rows added
    turns: int = 0  # turn rows added
    removed: int = 0  # sessions gone from the store, dropped
    rebuilt: bool = False
    problems: list[str] = field(default_factory=list)


def zone_name(zone: tzinfo | None) -> str:
    """What the stored days were computed in; a change recomputes them."""
    if zone is not None:
        return f"tz:{zone!r}"
    import time

    return f"local:{time.tzname}:{time.timezone}:{time.altzone}"


def day_of(ts: float, zone: tzinfo | None) -> str:
    return datetime.fromtimestamp(ts, zone).date().isoformat()


class UsageIndex:
    """memory/usage.sqlite for one store: `update`, `rebuild`, and `connect()` for the reports."""

    def __init__(
        self, path: Path, store: SessionStore, *, prices: PriceTable | None = None, zone: tzinfo | None = None
    ) -> None:
        self.path = Path(path)
        self.store = store
        self.prices = prices or PriceTable()
        self.zone = zone
        self._write = threading.Lock()
        # One writer connection, kept: opening and closing one per import batch cost a WAL
        # checkpoint each time. `_inode` is the file it (and the last staleness check) saw.
        self._conn: sqlite3.Connection | None = None
        self._conn_inode = 0  # the file the writer connection has open
        self._inode = 0
        self._current = False  # the file at `_inode` was checked current (or built) here
        self._touched: set[str] = set()  # days whose per-day sums are due (under `_write`)

    # -- connections --------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise UsageIndexError(f"{self.path}: cannot open the usage index ({exc})") from None
        return conn

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to an index that is current with the store's sessions (built when missing or old)."""
        self.ensure()
        conn = self._open()
        try:
            yield conn
        except sqlite3.Error as exc:
            raise UsageIndexError(f"{self.path}: cannot read the usage index ({exc})") from None
        finally:
            conn.close()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection to the index as it is (no rebuild, whatever its age): for readers that write nothing."""
        conn = self._open()
        try:
            yield conn
        except sqlite3.Error as exc:
            raise UsageIndexError(f"{self.path}: cannot read the usage index ({exc})") from None
        finally:
            conn.close()

    def _writer(self) -> sqlite3.Connection:
        """The kept writer connection (under `_write`), opened again when the file was replaced."""
        inode = _inode(self.path)
        if self._conn is not None and inode == self._conn_inode:
            return self._conn
        if self._conn is not None:
            self._conn.close()
        self._conn = self._open()
        self._conn_inode = self._inode = _inode(self.path)
        self._current = False
        return self._conn

    def close(self) -> None:
        with self._write:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _meta(self, conn: sqlite3.Connection) -> dict[str, str]:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    def stale(self) -> bool:
        """Missing, or written by another schema, price table or time zone: a rebuild is due."""
        inode = _inode(self.path)
        if not inode:
            return True
        if self._current and inode == self._inode:
            return False
        conn = self._open()
        try:
            meta = self._meta(conn)
        finally:
            conn.close()
        fresh = meta == self._wanted_meta()
        if fresh:
            self._current, self._inode = True, inode
        return not fresh

    def _wanted_meta(self) -> dict[str, str]:
        return {"schema": SCHEMA_VERSION, "prices": self.prices.version, "zone": zone_name(self.zone)}

    def ensure(self, *, progress: Progress | None = None) -> UpdateReport | None:
        """Rebuild a missing or old index (None when it was current)."""
        if self.stale():
            return self.rebuild(progress=progress)
        return None

    # -- writing ------------------------------------------------------------------------------
    def rebuild(self, *, progress: Progress | None = None) -> UpdateReport:
        """Every session read again (the old rows go first)."""
        with self._write:
            conn = self._writer()
            with conn:  # dropped, not emptied: an older schema's tables go too
                for table in (*TABLES, *DAY_TABLES, "meta"):
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.executescript(SCHEMA)
            report = self._update(conn, None, progress)
            with conn:
                conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", self._wanted_meta().items())
            self._current = True
        report.rebuilt = True
        return report

    def update(self, sessions: Iterable[str] | None = None, *, progress: Progress | None = None) -> UpdateReport:
        """Index what the sessions gained since their last update (None: every session, and drop the gone)."""
        if self.stale():
            return self.rebuild(progress=progress)
        with self._write:
            return self._update(self._writer(), sessions, progress)

    def refresh(self, metas: Iterable[SessionMeta], *, progress: Progress | None = None) -> UpdateReport:
        """Catch up with a listing: the sessions whose meta.json changed since (one query, no file
        read for the others), and drop the ones it no longer has. A stale index is rebuilt."""
        metas = list(metas)
        if self.stale():
            return self.rebuild(progress=progress)
        with self._write:
            conn = self._writer()
            known = dict(conn.execute("SELECT session_id, updated FROM sessions"))
            changed = [m.id for m in metas if known.get(m.id) != m.updated_at]
            gone = set(known) - {m.id for m in metas}
            if gone:
                with conn:
                    for sid in gone:
                        self._drop(conn, sid)
                    self._roll_days(conn)
            report = self._update(conn, changed, progress) if changed else UpdateReport()
            report.removed = len(gone)
            return report

    def after_ingest(self, sessions: frozenset[str]) -> None:
        """The import/watch hook (Home.ingest_hooks)."""
        self.update(sessions)

    def _update(
        self, conn: sqlite3.Connection, sessions: Iterable[str] | None, progress: Progress | None
    ) -> UpdateReport:
        report = UpdateReport()
        metas = self._metas(sessions, report)
        sql = "SELECT session_id, last_seq, source, project_id, model, updated FROM sessions"
        if sessions is None or len(metas) > BATCH_SESSIONS:
            known = {row[0]: row[1:] for row in conn.execute(sql)}
        else:  # an import batch: its few sessions, not the whole table
            rows = (conn.execute(f"{sql} WHERE session_id = ?", (m.id,)).fetchone() for m in metas)
            known = {row[0]: row[1:] for row in rows if row is not None}
        if sessions is None:
            gone = set(known) - {meta.id for meta in metas}
            with conn:
                for sid in gone:
                    self._drop(conn, sid)
            report.removed = len(gone)
        total = len(metas)
        for start in range(0, total, BATCH_SESSIONS):
            batch = metas[start : start + BATCH_SESSIONS]
            with conn:
                for meta in batch:
                    self._session(conn, meta, known.get(meta.id), report)
                if sessions is not None:  # a whole pass sums the days once, at its end
                    self._roll_days(conn)
            report.sessions += len(batch)
            if progress is not None:
                progress(report.sessions, total)
        with conn:
            self._roll_days(conn)
        return report

    def _roll_days(self, conn: sqlite3.Connection) -> None:
        """The per-day sums of the days touched since the last call, recomputed."""
        days = sorted(self._touched)
        self._touched.clear()
        for start in range(0, len(days), DAYS_PER_STATEMENT):
            chunk = days[start : start + DAYS_PER_STATEMENT]
            marks = ", ".join("?" * len(chunk))
            for table in DAY_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE day IN ({marks})", chunk)
            for statement in ROLL_DAY_SUMS:
                conn.execute(statement.format(days=marks), chunk)

    def _session_days(self, conn: sqlite3.Connection, session_id: str) -> None:
        self._touched.update(
            day for (day,) in conn.execute("SELECT day FROM session_days WHERE session_id = ?", (session_id,))
        )

    def _drop(self, conn: sqlite3.Connection, session_id: str) -> None:
        self._session_days(conn, session_id)
        for table in TABLES:
            conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    def _metas(self, sessions: Iterable[str] | None, report: UpdateReport) -> list[SessionMeta]:
        if sessions is None:
            listing = self.store.list_sessions()
            report.problems.extend(listing.problems)
            return list(listing.sessions)
        out = []
        for sid in sessions:
            try:
                out.append(self.store.get_meta(sid))
            except SessionNotFound:
                continue
            except OpmemError as exc:
                report.problems.append(str(exc))
        return out

    def _session(self, conn: sqlite3.Connection, meta: SessionMeta, known: tuple | None, report: UpdateReport) -> None:
        last_seq = known[0] if known else -1
        source, project, model = meta.source or "unknown", meta.project_id, _text(meta.extra.get("model"))
        changed = known is None or tuple(known[1:4]) != (source, project, model)
        if known and changed:
            for table in ("usage", "turns"):  # the session was bound to a project, or renamed, since
                conn.execute(
                    f"UPDATE {table} SET source = ?, project_id = ? WHERE session_id = ?",
                    (source, project, meta.id),
                )
        replies, turns, top = [], [], last_seq
        for node in self._new_nodes(meta.id, last_seq, report):
            top = max(top, node.seq)
            if node.created_at <= 0:
                continue  # a message with no time has no day
            day = day_of(node.created_at, self.zone)
            if node.role == "user":
                if not node.is_tool:
                    turns.append((meta.id, node.seq, node.created_at, day, source, project))
                continue
            counts = node_counts(node)
            if counts is None:
                continue
            answered = node_model(node, model)
            cost = self.prices.cost(answered, counts, node.created_at)
            replies.append(
                (meta.id, node.seq, node.created_at, day, source, project, answered, counts.input, counts.output,
                 counts.cache_write, counts.cache_read, counts.reasoning, cost)
            )  # fmt: skip
        conn.executemany(f"INSERT OR REPLACE INTO usage ({USAGE_COLUMNS}) VALUES ({', '.join('?' * 13)})", replies)
        conn.executemany("INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?, ?)", turns)
        report.replies += len(replies)
        report.turns += len(turns)
        changed = self._session_total(conn, meta, source, project, model) or changed or bool(replies)
        if changed:
            conn.execute("DELETE FROM daily WHERE session_id = ?", (meta.id,))
            conn.execute(_ROLL_DAILY, (meta.id,))
            conn.execute("DELETE FROM session_totals WHERE session_id = ?", (meta.id,))
            conn.execute(_ROLL_SESSION, (meta.id,))
        if changed or turns:
            self._session_days(conn, meta.id)  # the days it was in, and below those it is in now
            conn.execute("DELETE FROM session_days WHERE session_id = ?", (meta.id,))
            conn.execute(_ROLL_DAYS, (meta.id, source, project))
            self._session_days(conn, meta.id)
        row = (top, source, project, model, meta.updated_at)
        if known is None or tuple(known) != row:  # nothing new: nothing written
            conn.execute("INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?)", (meta.id, *row))

    def _session_total(
        self, conn: sqlite3.Connection, meta: SessionMeta, source: str, project: str, model: str
    ) -> bool:
        """Agents that keep totals per session only (Crush, Factory Droid): one row, replaced each
        time. True when the session has (or had) such a row."""
        extra = meta.extra.get("source_extra")
        totals = session_counts(extra) if isinstance(extra, dict) else None
        key = (meta.id, SESSION_TOTAL_SEQ)
        had = conn.execute("SELECT 1 FROM usage WHERE session_id = ? AND seq = ?", key).fetchone() is not None
        if had:
            conn.execute("DELETE FROM usage WHERE session_id = ? AND seq = ?", key)
        if totals is None or meta.updated_at <= 0:
            return bool(had)
        if conn.execute("SELECT 1 FROM usage WHERE session_id = ? LIMIT 1", (meta.id,)).fetchone():
            return bool(had)  # per-reply counts win over a session's total
        when = meta.updated_at
        cost = self.prices.cost(model, totals, when)
        conn.execute(
            f"INSERT INTO usage ({USAGE_COLUMNS}) VALUES ({', '.join('?' * 13)})",
            (meta.id, SESSION_TOTAL_SEQ, when, day_of(when, self.zone), source, project, model, totals.input,
             totals.output, totals.cache_write, totals.cache_read, totals.reasoning, cost),
        )  # fmt: skip
        return True

    def _new_nodes(self, session_id: str, after: int, report: UpdateReport) -> list[Node]:
        """User and assistant nodes past seq `after`, picked by file name (tool nodes are not read)."""
        folder = self.store.path_for(session_id) / "history"
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        nodes = []
        for name in names:
            match = NODE_FILE_RE.match(name)
            if match is None or match.group(2) not in "ua" or int(match.group(1)) <= after:
                continue
            path = folder / name
            if path.is_symlink():
                continue
            try:
                nodes.append(Node.from_json(read_json_object(path), path))
            except CorruptFile as exc:
                report.problems.append(str(exc))
        return nodes


def _inode(path: Path) -> int:
    """The file's inode (0: no file): a rebuilt or replaced file is another file."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
