"""The derived layers kept in line with the privacy exclusions: the search index rows of sessions
withheld from the memory, their distillation cursors, and the entities whose views show them.
The distillation runs it when `[memory]` exclusions change (pipeline.py); a session made private
or public again runs it through backend/orchestration.py."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..memory.index import SearchIndexError
from ..memory.records import project_scope
from ..model import OpmemError
from ..privacy.exclusions import Exclusions, hidden_sessions

if TYPE_CHECKING:
    from ..home import Home


def touched_entities(home: Home, session_ids: list[str]) -> set[str]:
    """The entities whose views show something of these sessions (the views to render again)."""
    return set(home.memory.session_entities(session_ids))


def sync_exclusions(home: Home, state: Any, rules: Exclusions, touched: set[str] | None = None) -> list[str]:
    """After `[memory]` exclusions changed (the caller holds the distillation lock and saves
    `state`): newly excluded sessions and projects leave the index, sessions no longer excluded
    get their cursors reset and their records back. core.md and the views are the caller's:
    `touched` gets the entities whose views show something of those sessions."""
    hidden = hidden_sessions(home, rules=rules)
    newly = sorted(sid for sid in hidden if sid not in state.withheld)
    back = sorted(sid for sid in state.withheld if sid not in hidden)
    projects = _projects(home)
    excluded_scopes = [
        project_scope(pid) for pid, name, workdir in projects if rules.project_reason(pid, name, workdir)
    ]
    other_scopes = [
        project_scope(pid) for pid, name, workdir in projects if not rules.project_reason(pid, name, workdir)
    ]
    notes = forget_in_index(home, newly, excluded_scopes) if newly or excluded_scopes else []
    notes.extend(reset_cursors(state, back))
    state.withheld = dict(hidden)
    if back:
        notes.extend(readmit_to_index(home, back, other_scopes))
    if touched is not None and (newly or back):
        touched.update(touched_entities(home, newly + back))
    return notes


def _projects(home: Home) -> list[tuple[str, str, str]]:
    try:
        return [(p.id, p.name, p.workdir) for p in home.projects.list_projects()]
    except OpmemError:
        return []


def forget_in_index(home: Home, ids: list[str], scopes: Iterable[str] = ()) -> list[str]:
    try:
        dropped = home.search_index.forget_sessions(ids, scopes)
    except SearchIndexError as exc:
        return [f"search index not updated: {exc}"]
    return [f"{dropped} search index rows withdrawn"] if dropped else []


def readmit_to_index(home: Home, ids: list[str], scopes: Iterable[str] = ()) -> list[str]:
    try:
        report = home.search_index.readmit_sessions(ids, scopes)
    except SearchIndexError as exc:
        return [f"search index not updated: {exc}"]
    return list(report.problems[:5])


def reset_cursors(state: Any, ids: list[str]) -> list[str]:
    reset = [sid for sid in ids if state.sessions.pop(sid, None) is not None]
    for sid in ids:
        state.withheld.pop(sid, None)
    if ids:
        state.token = ""  # a whole run scans again instead of trusting the store's change token
    return [f"{len(reset)} distillation cursor{'s' if len(reset) != 1 else ''} reset"] if reset else []
