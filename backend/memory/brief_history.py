"""The brief's history lines: decisions with what they replaced, and errors with what fixed them."""

from __future__ import annotations

import re

from .brief_line import BriefLine, day, newest
from .records import GLOBAL
from .results import GraphEdge
from .store import MemoryStore

DECISIONS = 4

FIXES = 2


def fix_edges(memory: MemoryStore, scope: str) -> list[GraphEdge]:
    return [g for g in memory.edges(scope=scope, relations=["fixed-by"], limit=200) if g.edge.scope == scope]


def fix_lines(memory: MemoryStore, edges: list[GraphEdge]) -> list[BriefLine]:
    """Errors seen and what fixed them (`error ──fixed-by──► file` when the failing command passed
    again after those edits, or the commands run between), newest first."""
    if not edges:
        return []
    refs = memory.entity_refs({x for g in edges for x in (g.source, g.target)})
    failing = {  # (command, error): the command failed with it; that command passing again is the fix we know of
        (g.source, g.target)
        for g in memory.edges(scope=edges[0].edge.scope, relations=["fails-with"], include_superseded=True, limit=None)
        if g.target in refs
    }
    by_error: dict[str, list[GraphEdge]] = {}
    for g in edges:
        by_error.setdefault(g.source, []).append(g)
    ranked = sorted(by_error.items(), key=lambda item: -newest(item[1]).edge.event_time)[:FIXES]
    out = []
    for rank, (error, gs) in enumerate(ranked):
        if error not in refs:
            continue
        fixes = ", ".join(
            dict.fromkeys(
                file_name(refs[g.target].name) for g in gs if g.target in refs and (g.target, error) not in failing
            )
        )
        passes = ", ".join(dict.fromkeys(refs[g.target].name for g in gs if (g.target, error) in failing))
        latest = newest(gs)
        how = f"by {fixes[:80]}" if fixes else f"{passes[:80]} passes since"
        text = f"· fixed {day(latest.edge.event_time)}: {refs[error].name[:90]} ({how})"
        out.append(BriefLine(text, latest.edge.provenance.session_id, 0.7 - rank * 0.02, "state"))
    return out


def file_name(name: str) -> str:
    """A file by its name (`/Users/me/dev/app/.taskmaster/state.json` is `state.json`): the session has the path."""
    absolute = name.startswith(("/", "~")) or re.match(r"^[A-Za-z]:\\", name) is not None
    return re.split(r"[/\\]", name.rstrip("/\\"))[-1] if absolute else name


def decision_lines(memory: MemoryStore, scope: str) -> list[BriefLine]:
    page = memory.timeline(kinds=["decision"], scope=scope, limit=DECISIONS * 3)
    out = []
    said: set[str] = set()
    events = [ev for ev in page.events if ev.scope != GLOBAL]
    for rank, ev in enumerate(events[:DECISIONS]):
        summary = ev.summary
        for prefix in ("Decided: ", "Changed: "):
            if summary.startswith(prefix):
                summary = summary[len(prefix) :]
        if summary in said:  # planned, then done: "FastAPI replaces Flask" once, its newest
            continue
        said.add(summary)
        out.append(
            BriefLine(
                f"· decided {day(ev.event_time)}: {summary}", ev.provenance.session_id, 0.75 - rank * 0.03, "decision"
            )
        )
    return out
