"""Keeping the search index up to date: sessions since their cursors, memory logs since their offsets.

`IndexUpdater.update()` looks at every session (one stat of its history folder and meta.json
each), indexes the nodes written since its cursor, marks deleted sessions dead and reads what
the memory logs gained. `update(sessions=...)` touches only those sessions (the after-ingest
hook of import/watch passes the ones a batch wrote). `rebuild()` builds a new file beside the
old one and swaps it in, so searches keep working meanwhile.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Node, OpmemError, SessionMeta, SessionNotFound
from ..privacy import redact_text
from ..safe_text import plain
from ..store.sessions import SessionStore
from .index import KIND_MESSAGE, KIND_TOOL, SearchIndex, SearchIndexError, TurnRow
from .index_records import RecordFilter, reindex_sessions, update_records
from .records import project_scope
from .sqlite_files import remove_database

CTX_CHARS = 200  # of each earlier message kept as the `ctx` of a row
CTX_MESSAGES = 2
TOOL_CHARS = 600
# Each input string is cut to this before the secrets are masked and the whole cut to TOOL_CHARS:
# a value cut in half at _ITEM_CHARS lies past TOOL_CHARS, so no half-secret reaches the index.
_ITEM_CHARS = 4 * TOOL_CHARS
COMPACT_DEAD_SHARE = 0.25
_TOOL_KEYS = frozenset(
    {"file_path", "path", "paths", "notebook_path", "command", "cmd", "pattern", "glob", "url", "query", "file"}
)

BATCH_ROWS = 2000  # rows per write transaction in a bulk update
Progress = Callable[[int, int], Any]
# Why a session is kept out of the index (backend/privacy/exclusions.py), None when it is not; and
# whether a project is. Asked once per update: `rules()` returns the current exclusions.
Rules = Callable[[], Any]
# The scope a session's turns are indexed under: the project it belongs to as the distiller
# decides (distill/collect.session_info), so a project's search holds its own sessions only.
ScopeOf = Callable[[SessionMeta, Sequence[Node]], str]


@dataclass(slots=True)
class _SessionWork:
    session_id: str
    scope: str = ""
    after: int = -1
    cursor: int = -1
    stamp: str = ""
    rows: list[TurnRow] = field(default_factory=list)
    new: bool = False
    turns: Mapping[str, tuple[int, str | None]] = field(default_factory=dict)
    drop: bool = False
    excluded: bool = False  # dropped as private / excluded: its records leave the index too


@dataclass(slots=True)
class UpdateReport:
    sessions_seen: int = 0
    sessions_updated: int = 0
    sessions_dropped: int = 0
    rows: int = 0
    records: int = 0
    dense_rows: int = 0  # vectors written for the dense signal (dense_rerank.py)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    compacted: bool = False


def tool_text(node: Node) -> str:
    """What a tool call is found by: its name, the paths and commands in its input, what it read."""
    parts: list[str] = [node.name or ""]
    _collect(node.input, parts, depth=0)
    parts.extend(node.reads)
    # redacted before the cut: a value cut in half is no longer found, yet still half a secret
    return redact_text(plain(" ".join(p for p in parts if p)))[:TOOL_CHARS]


def _collect(value: Any, out: list[str], depth: int) -> None:
    if depth > 3:
        return
    if isinstance(value, str):
        if depth == 0:
            out.append(value[:_ITEM_CHARS])
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in _TOOL_KEYS and isinstance(item, str):
                out.append(item[:_ITEM_CHARS])
            elif isinstance(item, (Mapping, list, tuple)) or (key in _TOOL_KEYS and isinstance(item, list)):
                _collect(item, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value[:20]:
            if isinstance(item, str) and depth > 0:
                out.append(item[:_ITEM_CHARS])
            else:
                _collect(item, out, depth + 1)


def _speaker(node: Node) -> str:
    speaker = node.metadata.get("speaker")
    return speaker if isinstance(speaker, str) and speaker else node.role


def turn_map(store: SessionStore, session_id: str, wanted: set[str]) -> dict[str, tuple[int, str | None]]:
    """node id -> (turn number along its branch, turn commit) for the head's branch and the others."""
    out: dict[str, tuple[int, str | None]] = {}
    for turn in store.get_turns(session_id):
        for node in turn.nodes:
            out[node.id] = (turn.number, turn.commit)
    if wanted <= out.keys():
        return out
    for leaf in store.leaves(session_id):
        if leaf in out:
            continue
        for turn in store.get_turns(session_id, head_id=leaf):
            for node in turn.nodes:
                out.setdefault(node.id, (turn.number, turn.commit))
        if wanted <= out.keys():
            break
    return out


def session_rows(nodes: list[Node], after_seq: int, turns: Mapping[str, tuple[int, str | None]]) -> list[TurnRow]:
    """The index rows of the nodes written after `after_seq` (system nodes and empty messages skipped)."""
    by_id = {n.id: n for n in nodes}
    shown: dict[str, str] = {}  # node id -> its text as indexed: plain, secrets masked

    def text_of(node: Node) -> str:
        text = shown.get(node.id)
        if text is None:
            text = shown[node.id] = redact_text(plain(node.content)).strip()
        return text

    rows: list[TurnRow] = []
    for node in nodes:
        if node.seq <= after_seq or node.role == "system":
            continue
        turn, commit = turns.get(node.called_by or node.id, (None, None))
        if node.called_by is not None:
            body = tool_text(node)
            if body:
                rows.append(
                    TurnRow(
                        KIND_TOOL,
                        node.id,
                        node.seq,
                        node.role,
                        turn,
                        commit,
                        node.created_at,
                        node.name or "tool",
                        body,
                        "",
                        None,
                    )
                )
            continue
        # as the screen shows it: "\x1b[31mredis" indexed raw is the token "31mredis"
        body = text_of(node)
        if not body:
            continue
        earlier = _earlier_messages(node, by_id)
        ctx = " ".join(text_of(m)[:CTX_CHARS] for m in earlier)
        prev = earlier[0].id if earlier else None
        rows.append(
            TurnRow(
                KIND_MESSAGE,
                node.id,
                node.seq,
                node.role,
                turn,
                commit,
                node.created_at,
                _speaker(node),
                body,
                ctx,
                prev,
            )
        )
    return rows


def _earlier_messages(node: Node, by_id: Mapping[str, Node]) -> list[Node]:
    out: list[Node] = []
    seen = {node.id}
    cur = by_id.get(node.parent_id) if node.parent_id else None
    while cur is not None and len(out) < CTX_MESSAGES and cur.id not in seen:
        seen.add(cur.id)
        if cur.called_by is None and cur.role in ("user", "assistant") and cur.content.strip():
            out.append(cur)
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    return out


def _stamp(path: Path) -> str:
    parts = []
    for item in (path / "history", path / "meta.json"):
        try:
            st = os.stat(item)
            parts.append(f"{st.st_mtime_ns}.{st.st_size}.{st.st_ino}")
        except OSError:
            parts.append("-")
    return ":".join(parts)


class IndexUpdater:
    """Brings one SearchIndex up to date with one SessionStore and one memory folder."""

    def __init__(
        self,
        index: SearchIndex,
        store: SessionStore,
        memory_dir: Path,
        *,
        rules: Rules | None = None,
        scope_of: ScopeOf | None = None,
    ) -> None:
        self.index = index
        self.scope_of = scope_of
        self.store = store
        self.memory_dir = Path(memory_dir)
        # The privacy exclusions: private sessions and excluded projects are never indexed.
        self.rules = rules
        self._rules: Any = None
        # Called with a rebuilt index before it replaces this one (the dense vectors carry over).
        self.before_swap: Callable[[SearchIndex], object] | None = None

    def update(self, sessions: Iterable[str] | None = None, *, progress: Progress | None = None) -> UpdateReport:
        """Index what is new. sessions=None: every session (and drop the deleted ones)."""
        started = time.perf_counter()
        report = UpdateReport()
        self._rules = self.rules() if self.rules is not None else None
        if sessions is None:
            known = self.index.cursors()
            listing = self.store.list_sessions()
            present = [m.id for m in listing.sessions]
            present_ids = set(present)
            gone = [sid for sid in known if sid not in present_ids]
            if gone:
                with self.index.write() as db:
                    for sid in gone:
                        self.index.drop_session(db, sid)
                report.sessions_dropped = len(gone)
            wanted = present
        else:  # an import batch's few sessions: their cursors only (all of them per batch was quadratic)
            wanted = list(dict.fromkeys(sessions))
            known = self.index.cursors(wanted)
        batch: list[_SessionWork] = []
        for done, session_id in enumerate(wanted):
            if progress is not None:
                progress(done, len(wanted))
            report.sessions_seen += 1
            try:
                work = self._read_session(session_id, known.get(session_id))
            except SessionNotFound:
                if session_id in known:
                    batch.append(_SessionWork(session_id, drop=True))
                continue
            except OpmemError as exc:
                report.problems.append(f"{session_id}: {exc}")
                continue
            if work is not None:
                batch.append(work)
            if sum(len(w.rows) for w in batch) >= BATCH_ROWS:
                self._write(batch, report)
                batch = []
        self._write(batch, report)
        report.records = update_records(self.index, self.memory_dir, report.problems, self.record_filter())
        if sessions is None and self._dead_share() > COMPACT_DEAD_SHARE:
            self.rebuild(report=report)
            report.compacted = True
        report.seconds = time.perf_counter() - started
        return report

    def _read_session(self, session_id: str, known: Any) -> _SessionWork | None:
        """What a session adds since its cursor (None: nothing changed), read outside any transaction."""
        try:
            path = self.store.path_for(session_id)
        except OpmemError:
            raise SessionNotFound(session_id) from None
        if not (path / "meta.json").exists():
            raise SessionNotFound(session_id)
        stamp = _stamp(path)
        if known is not None and known.stamp == stamp:
            return None
        meta = self.store.get_meta(session_id)
        if self._excluded(meta):
            return _SessionWork(session_id, drop=True, excluded=True) if known is not None else None
        after = known.cursor if known is not None else -1
        nodes = self.store.get_nodes(session_id)
        new = [n for n in nodes if n.seq > after]
        pending = known is not None and self._has_uncommitted(session_id)
        turns = turn_map(self.store, session_id, {n.called_by or n.id for n in new}) if new or pending else {}
        return _SessionWork(
            session_id,
            scope=self.scope_of(meta, nodes) if self.scope_of is not None else project_scope(meta.project_id),
            after=after,
            cursor=max((n.seq for n in nodes), default=after),
            stamp=stamp,
            rows=session_rows(nodes, after, turns),
            new=bool(new),
            turns=turns if pending else {},
        )

    def _excluded(self, meta: SessionMeta) -> bool:
        return self._rules is not None and self._rules.reason(meta) is not None

    def record_filter(self) -> RecordFilter | None:
        """Whether a memory record (by its session and scope) stays out of the index."""
        rules = self._rules
        if rules is None:
            return None
        known: dict[str, bool] = {}
        listed: dict[str, SessionMeta] | None = None

        def meta_of(session_id: str) -> SessionMeta:
            # The store's listing, read once for the pass (warm: a few stats), names each listed
            # session's meta.json as get_meta does, without opening the session: get_meta loads
            # every node file and the git mirror's coverage, and the reader keeps only a few
            # sessions warm, so a first run over 10,000 sessions opened each one again here.
            nonlocal listed
            if listed is None:
                listed = {m.id: m for m in self.store.list_sessions().sessions}
            meta = listed.get(session_id)
            return meta if meta is not None else self.store.get_meta(session_id)

        def hidden(session_id: str, scope: str) -> bool:
            if session_id:
                found = known.get(session_id)
                if found is None:
                    try:
                        found = rules.reason(meta_of(session_id)) is not None
                    except OpmemError:
                        found = False  # a deleted session: as before, its pointer is skipped on query
                    known[session_id] = found
                if found:
                    return True
            if scope.startswith("project:"):
                key = "\x00" + scope
                found = known.get(key)
                if found is None:
                    found = known[key] = rules.project_reason(scope[len("project:") :]) is not None
                return found
            return False

        return hidden

    def forget_sessions(self, session_ids: Iterable[str], scopes: Iterable[str] = ()) -> int:
        """Drop these sessions' rows and the records they (or these scopes) gave; returns rows dropped."""
        ids = sorted(set(session_ids))
        wanted_scopes = sorted(set(scopes))
        dropped = 0
        with self.index.write() as db:
            for sid in ids:
                dropped += self.index.session_rows(db, sid)
                self.index.drop_session(db, sid)
            dropped += self.index.drop_records(db, ids, wanted_scopes)
        return dropped

    def readmit_sessions(self, session_ids: Iterable[str], scopes: Iterable[str] = ()) -> UpdateReport:
        """These sessions (or scopes) are eligible again: their records read back from the logs, their turns indexed."""
        ids = set(session_ids)
        self._rules = self.rules() if self.rules is not None else None
        problems: list[str] = []
        reindex_sessions(self.index, self.memory_dir, ids, set(scopes), problems, self.record_filter())
        report = self.update(sorted(ids))
        report.problems.extend(problems)
        return report

    def _write(self, batch: list[_SessionWork], report: UpdateReport) -> None:
        """Many sessions in one transaction (FTS5 merges less); each checks its cursor again inside."""
        if not batch:
            return
        with self.index.write() as db:
            for work in batch:
                if work.drop:
                    self.index.drop_session(db, work.session_id)
                    if work.excluded:
                        self.index.drop_records(db, [work.session_id])
                    report.sessions_dropped += 1
                    continue
                current = self.index.cursor(db, work.session_id)
                if current is not None and current.cursor != work.after:
                    continue  # another process indexed it meanwhile
                if work.turns:
                    self.index.fill_commits(db, work.session_id, work.turns)
                if work.rows or work.new:
                    self.index.add_turns(db, work.session_id, work.scope, work.rows, work.cursor, work.stamp)
                else:
                    self.index.set_stamp(db, work.session_id, work.scope, work.stamp)
                report.rows += len(work.rows)
                report.sessions_updated += 1

    def fill_commits(self, commits: Mapping[str, Mapping[str, tuple[int, str]]]) -> list[str]:
        """Commit ids for rows indexed before their turn was committed, as the mirror wrote them.

        A session whose history/ is as indexed gets its stamp again (the mirror rewrote only
        meta.json), so the next update does not read it back for nothing. Returns the sessions
        the index is behind on (never indexed, or nodes since: a writer killed before its index
        update), for an ordinary update."""
        behind: list[str] = []
        with self.index.write() as db:
            for session_id, turns in commits.items():
                self.index.fill_commits(db, session_id, dict(turns))
                current = self.index.cursor(db, session_id)
                try:
                    stamp = _stamp(self.store.path_for(session_id))
                except OpmemError:
                    continue
                if current is not None and stamp.split(":")[0] == current.stamp.split(":")[0]:
                    self.index.set_stamp(db, session_id, current.scope, stamp)
                else:
                    behind.append(session_id)
        return behind

    def _has_uncommitted(self, session_id: str) -> bool:
        return self.index.uncommitted(self.index.db, session_id) > 0

    def _dead_share(self) -> float:
        stats = self.index.stats()
        return stats.dead_rows / stats.turn_rows if stats.turn_rows else 0.0

    def rebuild(self, *, report: UpdateReport | None = None, progress: Progress | None = None) -> UpdateReport:
        """A new index from scratch, swapped in whole when it is complete."""
        target = self.index.path
        fresh_path = target.with_name(target.name + ".new")
        remove_database(fresh_path)
        fresh = SearchIndex(fresh_path)
        try:
            result = IndexUpdater(fresh, self.store, self.memory_dir, rules=self.rules, scope_of=self.scope_of).update(
                progress=progress
            )
            if self.before_swap is not None:
                self.before_swap(fresh)
            fresh.optimize()
            fresh.close()
            os.replace(fresh_path, target)  # fails when index.sqlite is a directory or its folder read-only
        except BaseException as exc:
            fresh.close()
            remove_database(fresh_path)  # the old index stays in use; a half-built copy is only litter
            if isinstance(exc, (SearchIndexError, sqlite3.OperationalError, OSError)):
                raise SearchIndexError(f"{target}: the rebuild failed, the index in use is unchanged: {exc}") from None
            raise
        self.index.close()
        if report is not None:
            report.rows = result.rows
            report.records = result.records
            report.problems.extend(result.problems)
            return report
        return result
