"""The write side of the memory store: records and patches appended to the logs, folded into the cache.

Used through MemoryStore.batch() (or the store's one-call shortcuts), which hold the memory
lock and make the appends durable; store.py documents what each call does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..model import OpmemError
from ..store.files import dump_json_line
from . import graph
from .aliases import AliasIndex
from .cache import MemoryRecord
from .logs import EDGES_LOG, ENTITIES_LOG, FileStamp, LogAppender, ReadState, month_log
from .records import EVENT_KINDS, AliasMerge, AliasUnmerge, Edge, Entity, Event, Patch, check_scope
from .results import AppendResult, RecordNotFound

if TYPE_CHECKING:
    from .store import MemoryStore


class InvalidRecord(OpmemError, ValueError):
    """A record or patch that cannot be stored as given (bad scope, kind, times, or a self-supersede)."""


def _validate(record: MemoryRecord) -> None:
    if not isinstance(record, (Event, Entity, Edge)):
        raise InvalidRecord(f"cannot append {type(record).__name__}: only Event, Entity and Edge")
    if not isinstance(record.id, str) or not record.id:
        raise InvalidRecord(f"{type(record).__name__} without an id")
    try:
        check_scope(record.scope)
    except OpmemError as exc:
        raise InvalidRecord(f"{record.id}: {exc}") from None
    if isinstance(record, Event) and record.kind not in EVENT_KINDS:
        raise InvalidRecord(f"{record.id}: unknown event kind {record.kind!r}")
    if isinstance(record, (Event, Edge)):
        p = record.provenance
        if not (math.isfinite(p.event_time) and math.isfinite(p.ingestion_time)):
            raise InvalidRecord(f"{record.id}: event_time and ingestion_time must be finite numbers")


def _line(record: MemoryRecord) -> bytes:
    """One log line: compact JSON, UTF-8 (orjson where it writes what json would; lone surrogates escaped)."""
    return dump_json_line(record.to_json())


def _log_for(record: MemoryRecord) -> str:
    if isinstance(record, Event):
        return month_log(record.event_time)
    return ENTITIES_LOG if isinstance(record, Entity) else EDGES_LOG


class MemoryWriter:
    """The write side of one batch: every call appends under the lock the batch holds."""

    def __init__(self, store: MemoryStore, appender: LogAppender) -> None:
        self._store = store
        self._cache = store.cache
        self._appender = appender

    def append(self, records: Iterable[MemoryRecord]) -> AppendResult:
        counts = {Event: 0, Entity: 0, Edge: 0}
        skipped = 0
        pending: dict[str, list[tuple[MemoryRecord, bytes]]] = {}
        records = list(records)
        for record in records:
            _validate(record)
        with self._cache.writing():
            held = self._cache.held(records)
            fresh: set[tuple[type, str]] = set()
            for record in records:
                key = (type(record), record.id)
                if key in fresh or key in held:
                    skipped += 1
                    continue
                fresh.add(key)
                counts[type(record)] += 1
                pending.setdefault(_log_for(record), []).append((record, _line(record)))
            for name in sorted(pending):
                self._write(name, pending[name])
        self._store._changed()
        return AppendResult(counts[Event], counts[Entity], counts[Edge], skipped)

    def supersede(self, old: str, new: str, reason: str = "", *, at: float | None = None) -> Patch | None:
        if old == new:
            raise InvalidRecord(f"{old} cannot supersede itself")
        with self._cache.writing():
            patch = self._supersede(old, new, reason, at)
        self._store._changed()
        return patch

    def supersede_many(self, patches: Iterable[tuple[str, str, str, float | None]]) -> list[Patch | None]:
        """supersede() each (old, new, reason, at) in turn, in one cache transaction; a pair whose
        record is not held gives None there (where supersede() raises RecordNotFound)."""
        patches = list(patches)
        for old, new, _, _ in patches:
            if old == new:
                raise InvalidRecord(f"{old} cannot supersede itself")
        out: list[Patch | None] = []
        with self._cache.writing():
            for old, new, reason, at in patches:
                try:
                    out.append(self._supersede(old, new, reason, at))
                except RecordNotFound:
                    out.append(None)
        self._store._changed()
        return out

    def _supersede(self, old: str, new: str, reason: str, at: float | None) -> Patch | None:
        kind, t_old, t_new = self._pair(old, new)
        if t_new < t_old:  # the later fact retires the earlier, whichever came in last
            old, new, t_old, t_new = new, old, t_new, t_old
        if self._cache.has_patch(kind, old, new):
            return None
        patch = Patch(old, new, time.time() if at is None else at, reason)
        self._write(month_log(t_new) if kind == "event" else EDGES_LOG, [(patch, _line(patch))])
        return patch

    def merge(
        self, into: str, merged: str, reason: str, score: float = 1.0, *, at: float | None = None
    ) -> AliasMerge | None:
        with self._cache.writing():
            for entity_id in (into, merged):
                if graph.entity_record(self._cache.db, entity_id) is None:
                    raise RecordNotFound("entity", entity_id)
            view = AliasIndex.load(self._cache.db).view()
            root_into, root_merged = view.canonical(into), view.canonical(merged)
            if root_into == root_merged:
                return None
            record = AliasMerge(
                AliasMerge.make_id(root_into, root_merged),
                root_into,
                root_merged,
                reason,
                time.time() if at is None else at,
                score,
            )
            if self._cache.has(record):
                return None  # merged once and undone: the unmerge stands
            self._write(ENTITIES_LOG, [(record, _line(record))])
        self._store._changed()
        return record

    def unmerge(self, alias_id: str, reason: str = "", *, at: float | None = None) -> AliasUnmerge | None:
        with self._cache.writing():
            index = AliasIndex.load(self._cache.db)
            if index.merge_of(alias_id) is None:
                raise RecordNotFound("alias merge", alias_id)
            if alias_id in index.unmerges:
                return None
            record = AliasUnmerge(alias_id, time.time() if at is None else at, reason)
            self._write(ENTITIES_LOG, [(record, _line(record))])
        self._store._changed()
        return record

    def _pair(self, old: str, new: str) -> tuple[str, float, float]:
        db = self._cache.db
        for kind, table in (("event", "events"), ("edge", "edges")):
            times = {r[0]: r[1] for r in db.execute(f"SELECT id, t FROM {table} WHERE id IN (?, ?)", (old, new))}
            if len(times) == 2:
                return kind, times[old], times[new]
            if times:
                missing = new if old in times else old
                raise RecordNotFound(kind, missing)
        raise RecordNotFound("event or edge", old)

    def _write(self, name: str, items: list[tuple[MemoryRecord, bytes]]) -> None:
        """Append to log `name` and fold the same records into the cache (inside its transaction)."""
        cache = self._cache
        state = cache.file_state(name)
        before = FileStamp.of(cache.root / name)
        clean = (before.size if before else 0) == state.offset
        size = self._appender.write(name, [line for _, line in items])
        if not clean:  # a torn tail was sealed: read it (a bad line) and ours back from the log
            cache.ingest_file(name, state)
            return
        cache.insert_appended((record, name, number) for number, (record, _) in enumerate(items, start=state.lines + 1))
        cache.record_file(name, ReadState(size, state.lines + len(items)))
