"""Find entities of the memory by a fuzzy name: what the graph explorer's search box asks.

Names and aliases of every entity record are loaded once and kept until graph/entities.jsonl
changes (new entities, alias merges and unmerges are appended there). A query scores names
with rapidfuzz's WRatio, which costs ~1 µs a name: over 40,000 names that is too slow for a
keystroke, so a prefilter picks the few names that can rank (see `candidates`) and only those
are scored. A merged entity's name finds the entity it was merged into.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from pathlib import Path

from rapidfuzz import fuzz, process, utils

from .store import MemoryStore

ENTITIES_LOG = Path("graph") / "entities.jsonl"
MIN_SCORE = 55.0  # rapidfuzz WRatio, 0..100: below this a match is noise
POOL = 4  # candidates looked at per answer wanted (merged names fold onto one entity)
# Names scored in full per query. Chosen on the bench's 40,000 names (bench/tui_graph.py) as
# the most that keeps a query near 5 ms of CPU; tests/backend/memory/test_entity_finder.py
# checks on other name sets that the answers equal a plain scan's.
SCORED = 2_000
# A trigram found in more than this share of the names tells them apart too little to count.
COMMON_SHARE = 0.2
GRAM = 3


@dataclass(frozen=True, slots=True)
class EntityMatch:
    id: str  # the canonical entity
    name: str
    type: str
    matched: str  # the name or alias that matched ("" when it is the name)
    score: float


def grams(text: str) -> set[str]:
    return {text[i : i + GRAM] for i in range(len(text) - GRAM + 1)}


class NameIndex:
    """Processed names (rapidfuzz's default_process) with a trigram index over them."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)
        self.by_length = sorted(range(len(self.keys)), key=lambda i: len(self.keys[i]))
        postings: dict[str, list[int]] = defaultdict(list)
        for index, key in enumerate(self.keys):
            for gram in grams(key):
                postings[gram].append(index)
        self.postings = dict(postings)

    def containing(self, text: str, limit: int) -> list[int]:
        """The shortest names that contain `text` (a short name is the closer match)."""
        keys = self.keys
        return list(islice((i for i in self.by_length if text in keys[i]), limit))

    def sharing(self, text: str, limit: int) -> list[int] | None:
        """The names sharing the most uncommon trigrams with `text`, shorter first among
        equals; None when `text` has no uncommon trigram (all in more than COMMON_SHARE of
        the names, which tell little apart)."""
        common = max(limit, int(len(self.keys) * COMMON_SHARE))
        lists = [p for p in (self.postings.get(g) for g in grams(text)) if p is not None and len(p) <= common]
        if not lists:
            return None
        counts = Counter(chain.from_iterable(lists))
        if len(counts) <= limit:
            return list(counts)
        by_count: dict[int, list[int]] = defaultdict(list)
        for index, shared in counts.items():
            by_count[shared].append(index)
        picked: list[int] = []
        keys = self.keys
        for shared in sorted(by_count, reverse=True):
            tier = by_count[shared]
            if len(picked) + len(tier) > limit:
                tier.sort(key=lambda i: len(keys[i]))
            picked.extend(tier[: limit - len(picked)])
            if len(picked) >= limit:
                break
        return picked

    def candidates(self, wanted: str, limit: int = SCORED) -> Iterable[int]:
        """The names worth a full WRatio score for `wanted`: every name when there are few;
        else the names closest by plain ratio (typos of the whole name), plus the names that
        share the most uncommon trigrams with it (a part of the name, words in another order),
        or for a query of 1-2 characters or of common trigrams only, the shortest names that
        contain it. The strong matches (WRatio >= 90) rank as in a plain scan; among many
        near-equal weak ones (one short word shared) the tail may differ."""
        keys = self.keys
        if len(keys) <= limit:
            return range(len(keys))
        close = process.extract(
            wanted, keys, scorer=fuzz.ratio, processor=None, limit=limit // 4, score_cutoff=MIN_SCORE
        )
        picked = dict.fromkeys(i for _key, _score, i in close)
        shared = self.sharing(wanted, limit) if len(wanted) >= GRAM else None
        picked.update(dict.fromkeys(shared if shared is not None else self.containing(wanted, limit)))
        return picked


def rank(wanted: str, keys: Sequence[str], indexes: Iterable[int], limit: int) -> list[tuple[float, int]]:
    """(score, index) of the best `limit` among `indexes` by WRatio; an exact or prefix match
    beats a fuzzy one of the same score, then the shorter name."""
    choices = {i: keys[i] for i in indexes}
    found = process.extract(wanted, choices, scorer=fuzz.WRatio, processor=None, limit=limit, score_cutoff=MIN_SCORE)
    found.sort(key=lambda hit: (-hit[1], not keys[hit[2]].startswith(wanted), len(keys[hit[2]]), hit[2]))
    return [(score, index) for _key, score, index in found]


class EntityFinder:
    """Fuzzy lookup over one MemoryStore's entity names and aliases; thread-safe."""

    def __init__(self, memory: MemoryStore) -> None:
        self.memory = memory
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._index = NameIndex(())
        self._owners: list[tuple[str, str, str, str]] = []  # (record id, name, type, this name)
        self._canonical: dict[str, str] = {}  # record id -> canonical id, for this stamp

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
        self._index, self._owners, self._canonical, self._stamp = NameIndex(keys), owners, {}, stamp

    def load(self) -> int:
        """Read the names now (the first find would); returns how many there are."""
        with self._lock:
            self._load()
            return len(self._index.keys)

    def _canonical_id(self, record_id: str, memo: dict[str, str]) -> str:
        canonical = memo.get(record_id)
        if canonical is None:
            canonical = memo[record_id] = self.memory.canonical_id(record_id)
        return canonical

    def find(self, query: str, limit: int = 20, *, scan_all: bool = False) -> tuple[EntityMatch, ...]:
        """Best matches first, one per entity; an empty query finds nothing. `scan_all` scores
        every name (no prefilter): the reference the prefilter is checked against."""
        wanted = utils.default_process(query or "")
        if not wanted or limit <= 0:
            return ()
        with self._lock:
            self._load()
            index, owners, memo = self._index, self._owners, self._canonical
        indexes = range(len(index.keys)) if scan_all else index.candidates(wanted)
        out: dict[str, EntityMatch] = {}
        hidden: set[str] = set()
        for score, at in rank(wanted, index.keys, indexes, limit * POOL):
            record_id, name, kind, matched = owners[at]
            canonical = self._canonical_id(record_id, memo)
            if canonical in out or canonical in hidden:
                continue
            if self.memory.entity_hidden(canonical):  # learnt only from a private or excluded session
                hidden.add(canonical)
                continue
            if canonical != record_id:  # a merged record: show the entity it belongs to
                ref = self.memory.entity_refs([canonical])[canonical]
                name, kind = ref.name, ref.type
            out[canonical] = EntityMatch(canonical, name, kind, "" if matched == name else matched, score)
            if len(out) >= limit:
                break
        return tuple(out.values())
