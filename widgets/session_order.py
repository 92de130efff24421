"""How the session list orders and filters sessions: the sort keys, and the type-to-filter match
(every word must occur, exactly or with a typo, by rapidfuzz)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils

from opmem_tui.backend.model import SessionMeta


@dataclass(frozen=True)
class SortKey:
    name: str
    key: Callable[[SessionMeta], object]
    descending: bool


def last_active(meta: SessionMeta) -> float:
    return meta.updated_at or meta.created_at


SORT_KEYS: tuple[SortKey, ...] = (
    SortKey("updated", last_active, True),
    SortKey("created", lambda m: m.created_at, True),
    SortKey("title", lambda m: m.display_title.casefold(), False),
    SortKey("turns", lambda m: m.turn_count, True),
    SortKey("source", lambda m: (m.source, -last_active(m)), False),
    SortKey("project", lambda m: (m.project_id == "", m.project_id, -last_active(m)), False),
)


FUZZY_MIN_LENGTH = 5  # shorter words must appear as typed
FUZZY_CUTOFF = 80  # rapidfuzz partial_ratio a typo'd word must reach


def word_hits(word: str, haystacks: Sequence[str]) -> dict[int, float]:
    """{index: score} of haystacks holding `word`. Where any haystack holds it exactly, only
    those count ("codex" does not also find "code" in claude-code); typos are a fallback for
    words of FUZZY_MIN_LENGTH letters or more ("prser" finds parser)."""
    exact = {index: 100.0 for index, hay in enumerate(haystacks) if word in hay}
    if exact or len(word) < FUZZY_MIN_LENGTH:
        return exact
    found = process.extract(
        word, haystacks, scorer=fuzz.partial_ratio, processor=None, limit=None, score_cutoff=FUZZY_CUTOFF
    )
    return {index: score for _, score, index in found}


SEARCH_PREFIX = "?"  # `/?words`: full-text search over every message instead of the title filter


def fuzzy_filter(query: str, haystacks: Sequence[str]) -> list[int]:
    """Indexes of haystacks where every word of `query` occurs (exactly or, failing that, with
    a typo), best first."""
    words = utils.default_process(query).split()
    if not words:
        return list(range(len(haystacks)))
    scores: dict[int, float] | None = None
    for word in words:
        hits = word_hits(word, haystacks)
        scores = hits if scores is None else {i: scores[i] + s for i, s in hits.items() if i in scores}
        if not scores:
            return []
    assert scores is not None
    return sorted(scores, key=lambda i: (-scores[i], i))
