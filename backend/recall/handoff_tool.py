"""memory_handoff: a session's brief for a fresh agent, within a token budget (backend/handoff)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..handoff import DEFAULT_BUDGET, handoff
from ..model import OpmemError
from .context import Recall, recall_for
from .core_block import core_block
from .errors import RecallError

if TYPE_CHECKING:
    from ..home import Home


def core_for(home: Home, session_id: str, recall: Recall | None = None) -> str:
    """The core block of the session's project (the global one when it has none), for its brief."""
    project_id = home.sessions.get_meta(session_id).project_id or None
    try:
        recall = recall or recall_for(home, project=project_id, cwd=home.path)
        return core_block(recall, project_id)
    except (RecallError, OpmemError, OSError):
        return ""


def memory_handoff(recall: Recall, session_id: str, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    # the same lookup as memory_open_session: the pointer form, unknown ids with did_you_mean,
    # private or excluded sessions refused
    sid = recall.sessions.open(recall.home, session_id).id
    brief = handoff(recall.home, sid, budget, core_for(recall.home, sid, recall))
    return {
        "session_id": sid,
        "brief": brief.text,
        "tokens": brief.tokens,
        "budget": brief.budget,
        "left_out": brief.left_out,
        "token_estimate": "UTF-8 bytes / 3, rounded up",
    }
