"""_fuse builds candidates for the hits asked for only: its top equals a full fusion's top."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given
from hypothesis import strategies as st

from backend.memory.search import LIST_WEIGHTS, RRF_K, _Candidate, _fuse

_KEYS = st.tuples(st.sampled_from(["d", "r"]), st.integers(1, 40))
_LISTS = st.dictionaries(st.sampled_from([*LIST_WEIGHTS, "extra"]), st.lists(_KEYS, max_size=30))


def _fuse_all(lists, via):
    """Every pool key a candidate, all sorted: what _fuse did before it stopped at `depth`."""
    cands: dict[tuple[str, int], _Candidate] = {}
    scores: defaultdict[tuple[str, int], float] = defaultdict(float)
    for name, ranked_keys in lists.items():
        weight = LIST_WEIGHTS.get(name, 0.5)
        for rank, key in enumerate(ranked_keys):
            cand = cands.get(key)
            if cand is None:
                cand = cands[key] = _Candidate(key)
            cand.lists.setdefault(name, rank)
            scores[key] += weight / (RRF_K + rank + 1)
    for key, record_ids in via.items():
        if key in cands:
            cands[key].via.extend(record_ids)
    order = sorted(cands, key=lambda key: (-scores[key], key))
    return [(cands[key], scores[key]) for key in order]


def _shown(fused):
    return [(cand.key, cand.lists, cand.via, score) for cand, score in fused]


@given(_LISTS, st.dictionaries(_KEYS, st.lists(st.sampled_from(["ev-1", "ed-2"]), max_size=2)), st.integers(0, 60))
def test_the_top_of_the_fusion_is_the_full_fusions_top(lists, via, depth) -> None:
    assert _shown(_fuse(lists, via, depth)) == _shown(_fuse_all(lists, via)[:depth])
