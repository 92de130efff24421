"""memory_search: ranked hits over sessions and distilled records, each with its pointer."""

from __future__ import annotations

from typing import Any

from ..memory.index import SearchIndexError
from ..memory.search import MAX_K, SearchHit
from .context import Recall
from .dates import iso, parse_when
from .errors import BAD_ARGUMENT, STORE_ERROR, RecallError
from .reply import page_of

MAX_RESULTS = 50
NO_INDEX = "there is no search index yet: `opmem index rebuild` builds it (imports keep it up to date)"


def memory_search(
    recall: Recall,
    query: str,
    k: int = 10,
    since: str | None = None,
    until: str | None = None,
    page: int = 0,
) -> dict[str, Any]:
    """The k best hits for a question or keywords: session turns and tool calls, timeline events,
    entities and facts, fused by rank; each hit says where it comes from (session, turn, commit)."""
    if not query.strip():
        raise RecallError(BAD_ARGUMENT, "query is empty")
    if not 1 <= k <= min(MAX_K, MAX_RESULTS):
        raise RecallError(BAD_ARGUMENT, f"k must be 1..{min(MAX_K, MAX_RESULTS)}, got {k}")
    since_ts = parse_when(since, "since", now=recall.now) if since else None
    until_ts = parse_when(until, "until", now=recall.now) if until else None
    if since_ts is not None and until_ts is not None and since_ts > until_ts:
        raise RecallError(BAD_ARGUMENT, "since is after until")
    envelope: dict[str, Any] = {"query": query}
    if recall.scope.memory_scope:
        envelope["scope"] = recall.scope.memory_scope
    hits: tuple[SearchHit, ...] = ()
    try:
        searcher = recall.search.searcher()
        if searcher is None:
            envelope["note"] = NO_INDEX
        else:
            hits = searcher.search(query, recall.scope.memory_scopes, k, since_ts, until_ts)
    except SearchIndexError as exc:
        raise RecallError(STORE_ERROR, str(exc)) from None
    hits = tuple(h for h in hits if not recall.withheld_session(h.session_id))  # an index not caught up yet
    reply, _ = page_of(envelope, "hits", [_hit(h) for h in hits], page, recall.max_reply_bytes)
    return reply


def _hit(hit: SearchHit) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": hit.kind, "snippet": hit.snippet}
    if hit.session_id:
        out["source"] = hit.pointer
    if hit.turn is not None:
        out["turn"] = hit.turn
    if hit.commit:
        out["commit"] = hit.commit[:12]
    if hit.node_ids:
        out["node"] = hit.node_ids[0]
    if hit.time:
        out["time"] = iso(hit.time)
    if hit.speaker:
        out["speaker"] = hit.speaker
    if hit.record_id:
        out["record"] = hit.record_id
    if hit.via:
        out["via"] = list(hit.via[:3])
    out["score"] = round(hit.score, 4)
    return out
