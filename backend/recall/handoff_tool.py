"""memory_handoff: a session's brief for a fresh agent, within a token budget (backend/handoff)."""

from __future__ import annotations

from typing import Any

from ..handoff import DEFAULT_BUDGET, handoff
from .context import Recall
from .errors import BAD_ARGUMENT, RecallError
from .session_access import POINTER_PREFIX


def memory_handoff(recall: Recall, session_id: str, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    sid = session_id.removeprefix(POINTER_PREFIX)
    if not recall.home.sessions.exists(sid):
        raise RecallError(BAD_ARGUMENT, f"no session {sid!r}")
    if recall.withheld_session(sid):
        raise RecallError(BAD_ARGUMENT, f"session {sid!r} is private or excluded from the memory")
    brief = handoff(recall.home, sid, budget)
    return {
        "session_id": sid,
        "brief": brief.text,
        "tokens": brief.tokens,
        "budget": brief.budget,
        "left_out": brief.left_out,
        "token_estimate": "UTF-8 bytes / 3, rounded up",
    }
