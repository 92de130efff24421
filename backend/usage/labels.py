"""Names for a report's keys (project names, session titles), through the privacy gate.

A usage report is derived output: a session's title passes backend/privacy (its secrets masked),
and a private or excluded session is counted but not named ("private session"), so a report
printed, piped or handed to an agent never shows what the memory keeps out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..model import OpmemError
from ..privacy import redact_text
from ..safe_text import plain
from .reports import UsageReport

if TYPE_CHECKING:
    from ..home import Home

PRIVATE_TITLE = "(private session)"


def project_names(home: Home) -> dict[str, str]:
    try:
        return {p.id: p.name for p in home.projects.list_projects()}
    except OpmemError:
        return {}


def labels(home: Home, result: UsageReport) -> dict[str, Mapping[str, Any]]:
    """Extra JSON fields per row key: a project's name; a session's title, agent, project and last reply."""
    if result.kind == "project":
        names = project_names(home)
        return {r.key: {"projectName": names.get(r.key, r.key or "(no project)")} for r in result.rows}
    if result.kind != "session":
        return {}
    names = project_names(home)
    out: dict[str, Mapping[str, Any]] = {}
    for row in result.rows:
        try:
            meta = home.sessions.get_meta(row.key)
        except OpmemError:
            meta = None
        shown = meta is not None and home.visible(row.key)
        title = plain(redact_text(meta.title)) if shown and meta is not None else PRIVATE_TITLE
        out[row.key] = {
            "title": title,
            "agent": meta.source if meta is not None else "",
            "projectName": names.get(meta.project_id, meta.project_id) if meta is not None else "",
            "lastActivity": datetime.fromtimestamp(row.last, UTC).date().isoformat() if row.last else None,
        }
    return out


def agent_source(name: str) -> str:
    """The source name sessions are stored under for an agent given as an importer name or
    alias ("claude", "cc" -> "claude-code"); anything else as given."""
    if not name:
        return ""
    from ..importers import get_importer

    try:
        source = getattr(get_importer(name), "source", "")
    except OpmemError:
        return name
    return source if isinstance(source, str) and source else name
