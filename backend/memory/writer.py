"""The write side of the memory store: records and patches appended to the logs, folded into the cache.

Used through MemoryStore.batch() (or the store's one-call shortcuts), which hold the memory
lock and make the appends durable; store.py documents what each call does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING

from ..model import OpmemError, Provenance
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
    return dump_json_line(record.to_json(), plain=_plain(record))


_TEXT = {str}


def _plain(record: MemoryRecord) -> bool:
    """Whether record.to_json() holds nothing but exact str, int, bool and None, floats that are 0
    or finite from 1e-4 up, lists and dicts (what dump_json_line may then keep from orjson
    unchecked): told from the fields to_json writes, of an Edge, an Event or a Patch; False for
    the others, which are few. The fields are read again here: a sequence must be a tuple (an
    iterator would be empty by now)."""
    cls = record.__class__
    if cls is Edge:
        return _strs(_EDGE_TEXTS(record)) and _number(record.confidence) and _plain_provenance(record.provenance)
    if cls is Event:
        return (
            _strs(_EVENT_TEXTS(record))
            and _number(record.importance)
            and _texts(record.entities)
            and _plain_provenance(record.provenance)
        )
    if cls is Patch:
        return _strs(_PATCH_TEXTS(record)) and _number(record.at)
    return False


_EDGE_TEXTS = attrgetter("id", "from_id", "to_id", "relation", "scope")
_EVENT_TEXTS = attrgetter("id", "summary", "kind", "scope", "key")
_PATCH_TEXTS = attrgetter("op", "id", "by", "reason")
_PROVENANCE_TEXTS = attrgetter("project_id", "session_id")


def _strs(values: tuple[object, ...]) -> bool:
    """Every one an exact str."""
    return all(value.__class__ is str for value in values)


def _plain_provenance(p: Provenance) -> bool:
    return (
        p.__class__ is Provenance
        and _strs(_PROVENANCE_TEXTS(p))
        and _texts(p.node_ids)
        and (p.turn is None or p.turn.__class__ is int)
        and (p.commit is None or p.commit.__class__ is str)
        and _number(p.event_time)
        and _number(p.ingestion_time)
    )


def _texts(values: object) -> bool:
    """A tuple of exact str (one, mostly)."""
    if values.__class__ is not tuple:
        return False
    if len(values) == 1:  # type: ignore[arg-type]
        return values[0].__class__ is str  # type: ignore[index]
    return set(map(type, values)) <= _TEXT  # type: ignore[call-overload]


def _number(value: object) -> bool:
    """An exact int, or an exact float orjson writes as json does: 0 or finite from 1e-4 up (not
    NaN or an infinity, written as null, nor a tiny one, written `1e-7` for json's `1e-07`)."""
    cls = value.__class__
    if cls is float:
        return 1e-4 <= value < math.inf or value == 0.0 or -math.inf < value <= -1e-4  # type: ignore[operator]
    return cls is int


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
        with self._cache.writing():
            out = self._supersede_together(patches)
            if out is None:
                out = []
                for old, new, reason, at in patches:
                    try:
                        out.append(self._supersede(old, new, reason, at))
                    except RecordNotFound:
                        out.append(None)
        self._store._changed()
        return out

    def _supersede_together(self, patches: list[tuple[str, str, str, float | None]]) -> list[Patch | None] | None:
        """What _supersede() one by one writes, with one append per log; None (nothing written)
        when a log it goes to has a torn tail: reading that back may add records or patches that
        the later pairs of a one-by-one run see, so those go one by one."""
        times = self._times({x for old, new, _, _ in patches for x in (old, new)})
        planned: list[tuple[str, str, str, str] | None] = []  # (kind, old, new, log) after the swap
        for old, new, _, _ in patches:
            try:
                kind, t_old, t_new = _pair_of(times, old, new)
            except RecordNotFound:
                planned.append(None)
                continue
            if t_new < t_old:  # as in _supersede
                old, new, t_new = new, old, t_old
            planned.append((kind, old, new, month_log(t_new) if kind == "event" else EDGES_LOG))
        logs = {p[3] for p in planned if p is not None}
        if not all(self._clean(name) for name in logs):
            return None
        held = self._cache.held_patches({p[:3] for p in planned if p is not None})
        out: list[Patch | None] = []
        pending: dict[str, list[tuple[MemoryRecord, bytes]]] = {}
        for plan, (_, _, reason, at) in zip(planned, patches, strict=True):
            if plan is None or plan[:3] in held:
                out.append(None)
                continue
            held.add(plan[:3])  # a pair given twice is written once, as one by one
            kind, old, new, name = plan
            patch = Patch(old, new, time.time() if at is None else at, reason)
            pending.setdefault(name, []).append((patch, _line(patch)))
            out.append(patch)
        for name in sorted(pending):
            self._write(name, pending[name])
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
        return _pair_of(self._times((old, new)), old, new)

    def _times(self, ids: Collection[str]) -> dict[str, dict[str, float]]:
        """The event_time of each of `ids` held, by kind ("event", "edge")."""
        return {kind: self._cache.times_of(kind, ids) for kind in ("event", "edge")}

    def _clean(self, name: str, state: ReadState | None = None) -> bool:
        """Whether log `name` ends where the cache stopped reading it (`state`, its read state,
        when the caller has it): no torn tail to read back."""
        stamp = FileStamp.of(self._cache.root / name)
        offset = (state or self._cache.file_state(name)).offset
        return (stamp.size if stamp else 0) == offset

    def _write(self, name: str, items: list[tuple[MemoryRecord, bytes]]) -> None:
        """Append to log `name` and fold the same records into the cache (inside its transaction)."""
        cache = self._cache
        state = cache.file_state(name)
        clean = self._clean(name, state)
        size = self._appender.write(name, [line for _, line in items])
        if not clean:  # a torn tail was sealed: read it (a bad line) and ours back from the log
            cache.ingest_file(name, state)
            return
        cache.insert_appended((record, name, number) for number, (record, _) in enumerate(items, start=state.lines + 1))
        cache.record_file(name, ReadState(size, state.lines + len(items)))


def _pair_of(times: dict[str, dict[str, float]], old: str, new: str) -> tuple[str, float, float]:
    """(kind, event_time of old, of new), both events or both edges; else RecordNotFound naming one missing."""
    for kind in ("event", "edge"):
        found = times[kind]
        if old in found and new in found:
            return kind, found[old], found[new]
        if old in found or new in found:
            raise RecordNotFound(kind, new if old in found else old)
    raise RecordNotFound("event or edge", old)
