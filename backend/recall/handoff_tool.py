"""memory_handoff: a session's brief for a fresh agent, within a token budget (backend/handoff)."""

from __future__ import annotations

from typing import Any

from ..handoff import DEFAULT_BUDGET, handoff
from .context import Recall


def memory_handoff(recall: Recall, session_id: str, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    # the same lookup as memory_open_session: the pointer form, unknown ids with did_you_mean,
    # private or excluded sessions refused
    sid = recall.sessions.open(recall.home, session_id).id
    brief = handoff(recall.home, sid, budget)
    return {
        "session_id": sid,
        "brief": brief.text,
        "tokens": brief.tokens,
        "budget": brief.budget,
        "left_out": brief.left_out,
        "token_estimate": "UTF-8 bytes / 3, rounded up",
    }
