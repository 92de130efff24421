"""`opmem handoff`: a brief of a session for a fresh agent, within a token budget.

    brief.py   what the brief says (goal, done, files, decisions, failed, open), one pointer a line
    budget.py  the tokenizer-free token estimate and fitting lines into the budget

The brief is made from the session as the export selects it, redacted, plus the project's core
block the caller passes (backend/recall/handoff_tool.core_for); every line under a heading ends with `↪ session:<id>#turn N`
(the core block's lines with their own `↪ session:<id>`). `agent_command` is how each agent takes
it as its first prompt (docs/resume.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..export.session import select
from ..model import OpmemError
from ..privacy import redact_text
from ..safe_text import plain
from .brief import gather, one_line
from .budget import Line, estimate_tokens, fit

if TYPE_CHECKING:
    from ..home import Home

DEFAULT_BUDGET = 2000
MIN_BUDGET = 60
SECTIONS = ("Goal", "Open", "Failed", "Decisions", "Files touched", "Done", "Project memory")
# Each agent's own way to start with a first prompt and stay interactive.
AGENT_COMMANDS: dict[str, tuple[str, ...]] = {
    "claude": ("claude",),  # `claude "query"`: an interactive session that starts with the query
    "codex": ("codex",),  # `codex "prompt"`: the TUI with a first prompt
    "gemini": ("gemini", "--prompt-interactive"),  # -i: run the prompt, then stay interactive
    "opencode": ("opencode", "--prompt"),  # the TUI's "prompt to use"
}


class HandoffError(OpmemError):
    """A handoff that cannot be made as asked."""


@dataclass(frozen=True, slots=True)
class Handoff:
    session_id: str
    text: str
    tokens: int  # by budget.estimate_tokens
    budget: int
    left_out: int  # lines the budget had no room for
    cwd: str


def agent_command(agent: str, brief: str) -> tuple[str, ...]:
    base = AGENT_COMMANDS.get(agent)
    if base is None:
        raise HandoffError(f"unknown agent {agent!r} (one of {', '.join(AGENT_COMMANDS)})")
    return (*base, brief)


def _decisions(home: Home, sid: str) -> list[tuple[str, int]]:
    """Decision events the memory holds from this session, oldest first (none when not distilled)."""
    try:
        page = home.memory_readonly().timeline(kinds=["decision"], limit=None, newest_first=False)
    except (OpmemError, OSError):
        return []
    out = []
    for event in getattr(page, "events", ()):
        prov = event.provenance
        if prov.session_id == sid:
            out.append((event.summary, int(getattr(prov, "turn", None) or 1)))
    return out


def _core_lines(block: str) -> list[Line]:
    pointed = [line for line in block.splitlines() if "↪ session:" in line]
    return [Line("Project memory", "- " + line.lstrip("· ").strip(), 4, i) for i, line in enumerate(pointed)]


def handoff(home: Home, session_id: str, budget: int = DEFAULT_BUDGET, core: str = "") -> Handoff:
    """The brief of `session_id` within `budget` tokens (estimate_tokens), redacted. `core`: the
    project's core block (backend/recall/handoff_tool.core_for gives it), whose pointed lines join."""
    if budget < MIN_BUDGET:
        raise HandoffError(f"--budget {budget}: a brief needs at least {MIN_BUDGET} tokens")
    if not home.visible(session_id):
        raise HandoffError(f"session {session_id} is private or excluded from the memory: no brief is made of it")
    chosen = select(home.sessions, session_id, raw=False)
    turns = [t for t in chosen.turns if t.nodes]
    meta = chosen.meta
    facts = gather(session_id, turns, _decisions(home, session_id))
    lines = [*facts.goal, *facts.lines, *_core_lines(core)]
    lines = [Line(x.section, redact_text(plain(x.text)), x.rank, x.order) for x in lines]
    cwd = meta.extra.get("cwd") if isinstance(meta.extra.get("cwd"), str) else ""
    where = f", in {cwd}" if cwd else ""
    title = one_line(redact_text(plain(meta.display_title)), 90)
    header = (
        f"# Handoff: {title}\n"
        f"Session from {meta.source}, {chosen.total_turns} turn{'' if chosen.total_turns == 1 else 's'}{where}. Continue the work; a turn opens with "
        f'memory_open_session("{session_id}", turn=N).  ↪ session:{session_id}'
    )
    header = redact_text(plain(header))
    if estimate_tokens(header + "\n") > budget:
        raise HandoffError(
            f"--budget {budget}: the brief's header alone needs {estimate_tokens(header + chr(10))} tokens"
        )
    text, left_out = fit(header, SECTIONS, lines, budget)
    return Handoff(session_id, text, estimate_tokens(text), budget, left_out, cwd or "")
