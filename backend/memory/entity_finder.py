"""Find entities of the memory by a fuzzy name: what the graph explorer's search box asks.

Names and aliases of every entity record are loaded once and kept until graph/entities.jsonl
changes (new entities and alias merges are appended there); a query is one rapidfuzz pass over
them. A merged entity's name finds the entity it was merged into.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz, process, utils

from .store import MemoryStore

ENTITIES_LOG = Path("graph") / "entities.jsonl"
MIN_SCORE = 55.0  # rapidfuzz WRatio, 0..100: below this a match is noise
POOL = 4  # candidates looked at per answer wanted (merged names fold onto one entity)


@dataclass(frozen=True, slots=True)
class EntityMatch:
    id: str  # the canonical entity
    name: str
    type: str
    matched: str  # the name or alias that matched ("" when it is the name)
    score: float


class EntityFinder:
    """Fuzzy lookup over one MemoryStore's entity names and aliases; thread-safe."""

    def __init__(self, memory: MemoryStore) -> None:
        self.memory = memory
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._keys: list[str] = []  # processed names, one per (entity record, name or alias)
        self._owners: list[tuple[str, str, str, str]] = []  # (record id, name, type, this name)

    def _log_stamp(self) -> tuple[int, int]:
        try:
            info = (self.memory.root / ENTITIES_LOG).stat()
        except OSError:
            return (0, 0)
        return (info.st_mtime_ns, info.st_size)

    def _load(self) -> None:
        stamp = self._log_stamp()
        if stamp == self._stamp:
            return
        keys: list[str] = []
        owners: list[tuple[str, str, str, str]] = []
        for entity in self.memory.entity_records():
            for name in dict.fromkeys((entity.name, *entity.aliases)):
                key = utils.default_process(name)
                if key:
                    keys.append(key)
                    owners.append((entity.id, entity.name, entity.type, name))
        self._keys, self._owners, self._stamp = keys, owners, stamp

    def find(self, query: str, limit: int = 20) -> tuple[EntityMatch, ...]:
        """Best matches first, one per entity; an empty query finds nothing."""
        wanted = utils.default_process(query or "")
        if not wanted or limit <= 0:
            return ()
        with self._lock:
            self._load()
            keys, owners = self._keys, self._owners
        found = process.extract(
            wanted, keys, scorer=fuzz.WRatio, processor=None, limit=limit * POOL, score_cutoff=MIN_SCORE
        )
        # an exact or prefix match beats a fuzzy one of the same score
        found.sort(key=lambda hit: (-hit[1], not keys[hit[2]].startswith(wanted), len(keys[hit[2]])))
        out: dict[str, EntityMatch] = {}
        for _key, score, index in found:
            record_id, name, kind, matched = owners[index]
            canonical = self.memory.canonical_id(record_id)
            if canonical in out:
                continue
            if canonical != record_id:  # a merged record: show the entity it belongs to
                ref = self.memory.entity_refs([canonical])[canonical]
                name, kind, matched = ref.name, ref.type, matched
            out[canonical] = EntityMatch(canonical, name, kind, "" if matched == name else matched, score)
            if len(out) >= limit:
                break
        return tuple(out.values())
