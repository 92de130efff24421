"""memory_usage: tokens and cost from the usage index, for "what did this project cost this week?".

The report is `opmem usage --json`'s (ccusage's shape, docs/usage.md), in the caller's project by
default. The index is read as it is (imports keep it current); the tool builds nothing. A private
or excluded session counts in the sums (this machine's totals) but is never named: its row in a
session report shows neither its id nor its title.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..usage.index import UsageIndexError
from ..usage.labels import PRIVATE_TITLE, agent_source, labels
from ..usage.reports import JSON_KEYS, REPORTS, Filters, query, report_json
from .context import Recall
from .dates import parse_when
from .errors import BAD_ARGUMENT, STORE_ERROR, RecallError
from .reply import page_of

NO_INDEX = "there is no usage index yet: `opmem usage` builds it (imports keep it up to date)"
ALL = "all"


def memory_usage(
    recall: Recall,
    report: str = "daily",
    since: str | None = None,
    until: str | None = None,
    project_id: str | None = None,
    agent: str | None = None,
    page: int = 0,
) -> dict[str, Any]:
    if report not in REPORTS:
        raise RecallError(BAD_ARGUMENT, f"report must be one of {', '.join(REPORTS)}, got {report!r}")
    first = _day(recall, since, "since")
    last = _day(recall, until, "until")
    if first and last and first > last:
        raise RecallError(BAD_ARGUMENT, "since is after until")
    project = ""
    if project_id != ALL and (project_id or recall.scope.project_id):
        project = recall.project(project_id).id
    envelope: dict[str, Any] = {"report": report, "project": project or ALL}
    index = recall.home.usage
    if index.stale():
        envelope["note"] = NO_INDEX
        return {**envelope, JSON_KEYS[report][0]: []}
    try:
        with index.read() as conn:  # no rebuild here: a recall tool writes nothing
            result = query(conn, report, Filters(first, last, project, agent_source(agent or "")))
    except (UsageIndexError, OSError) as exc:
        raise RecallError(STORE_ERROR, str(exc)) from None
    data = report_json(result, labels(recall.home, result))
    rows = data[JSON_KEYS[report][0]]
    if report == "session":
        for row in rows:
            if row.get("title") == PRIVATE_TITLE:
                row["sessionId"] = "(private)"
    envelope["totals"] = data["totals"]
    reply, _ = page_of(envelope, JSON_KEYS[report][0], rows, page, recall.max_reply_bytes)
    return reply


def _day(recall: Recall, text: str | None, field: str) -> str:
    if not text:
        return ""
    return datetime.fromtimestamp(parse_when(text, field, now=recall.now)).date().isoformat()
