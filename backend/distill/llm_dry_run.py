"""`opmem distill --dry-run-llm`: what the LLM extractor would send, sent nowhere, written nowhere.

The sessions a real run would distil (the same cursors, the same privacy exclusions) are collected
and put through the extractor with a chat that records each request (redacted, as it would leave)
and answers that it found nothing. No memory record is written and no cursor moves, so the real
run that follows sends the same requests.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..llm import LLMStopped, TokenBudget
from ..llm_cli import AgentChat, Request, agent_chat
from ..model import OpmemError
from ..privacy.exclusions import read_meta
from .collect import collect_session, pending_sessions
from .state import load_state

if TYPE_CHECKING:
    from ..home import Home


@dataclass(frozen=True, slots=True)
class DryRun:
    via: str
    requests: tuple[Request, ...]
    sessions: int
    stopped: str  # why the real run would stop early ("" when it would not)

    @property
    def tokens(self) -> int:
        return sum(r.estimated_tokens for r in self.requests)

    @property
    def prompt_bytes(self) -> int:
        return sum(len(r.prompt.encode("utf-8")) for r in self.requests)


def dry_run(home: Home, sessions: Sequence[str] | None = None) -> DryRun:
    from .extract.llm import extract_llm

    settings = home.config.llm
    chat = agent_chat(settings, home.path, dry_run=True)
    assert isinstance(chat, AgentChat)
    budget = TokenBudget(settings.token_budget)
    state = load_state(home.memory_dir)
    rules = home.exclusions()
    try:
        projects = home.projects
    except OpmemError:
        projects = None
    seen = 0
    now = time.time()
    for pending in pending_sessions(home.sessions, state, only=sessions):
        meta = read_meta(home, pending.session_id)
        if meta is None or rules.reason(meta) is not None:
            continue  # private or excluded: a real run never sends it either
        batches = collect_session(home.sessions, projects, pending)
        seen += bool(batches)
        for batch in batches:
            extract_llm(batch, chat, budget, ingestion_time=now, batch_size=settings.batch_size)  # type: ignore[arg-type]
            if chat.stopped is not None:
                break
        if chat.stopped is not None:
            break
    why = str(chat.stopped) if isinstance(chat.stopped, LLMStopped) else ""
    return DryRun(settings.via or "openai", tuple(chat.requests), seen, why)
