"""Usage reports over the usage index: by day, week, month, session, project, agent and model.

Each report is a tuple of `UsageRow`s (one per group, with its per-model breakdown) and a total,
summed in SQL over the index. `report_json` gives ccusage's JSON shape (docs/usage.md):
``{"daily": [{"date", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens",
"totalTokens", "totalCost", "modelsUsed", "modelBreakdowns": [...]}], "totals": {...}}``, with
opmem's additions: ``reasoningTokens``, ``costComplete`` (false when some replies were of a model
the price table lacks; their tokens count, their cost is not guessed) and ``unpricedModels``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from .index import UsageIndex

REPORTS = ("daily", "weekly", "monthly", "session", "project", "agent", "model")
# report -> (the JSON list's key, each row's key field)
JSON_KEYS = {
    "daily": ("daily", "date"),
    "weekly": ("weekly", "week"),
    "monthly": ("monthly", "month"),
    "session": ("sessions", "sessionId"),
    "project": ("projects", "project"),
    "agent": ("agents", "agent"),
    "model": ("models", "model"),
}
_GROUP_COLUMN = {"session": "session_id", "project": "project_id", "agent": "source", "model": "model"}


@dataclass(frozen=True, slots=True)
class Filters:
    since: str = ""  # YYYY-MM-DD, inclusive
    until: str = ""
    project: str = ""  # project id
    agent: str = ""  # source name

    def where(self) -> tuple[str, list[Any]]:
        parts, args = [], []
        for clause, value in (
            ("day >= ?", self.since),
            ("day <= ?", self.until),
            ("project_id = ?", self.project),
            ("source = ?", self.agent),
        ):
            if value:
                parts.append(clause)
                args.append(value)
        return (" WHERE " + " AND ".join(parts)) if parts else "", args


@dataclass(frozen=True, slots=True)
class Usage:
    """Summed counts and cost; cost None when no reply in it had a known price."""

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    reasoning: int = 0
    cost: float | None = None
    replies: int = 0
    priced: int = 0  # replies with a known price

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read

    @property
    def cost_complete(self) -> bool:
        return self.priced == self.replies

    @property
    def cache_share(self) -> float:
        """Share of the input served from the cache (0..1)."""
        seen = self.input + self.cache_write + self.cache_read
        return self.cache_read / seen if seen else 0.0

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_write + other.cache_write,
            self.cache_read + other.cache_read,
            self.reasoning + other.reasoning,
            cost,
            self.replies + other.replies,
            self.priced + other.priced,
        )


@dataclass(frozen=True, slots=True)
class UsageRow:
    key: str  # the day, week (its Monday), month, session id, project id, agent or model
    usage: Usage
    models: Mapping[str, Usage] = field(default_factory=dict)
    last: float = 0.0  # the last reply's time

    @property
    def unpriced_models(self) -> tuple[str, ...]:
        return tuple(sorted(m or "(unnamed)" for m, u in self.models.items() if not u.cost_complete))


@dataclass(frozen=True, slots=True)
class UsageReport:
    kind: str
    rows: tuple[UsageRow, ...]
    total: Usage


_SUMS = (
    "sum(input), sum(output), sum(cache_write), sum(cache_read), sum(reasoning), sum(cost), sum(replies),"
    " sum(priced), max(last_ts)"
)


def _usage(values: tuple) -> Usage:
    return Usage(*(int(v or 0) for v in values[:5]), values[5], int(values[6]), int(values[7]))


def report(index: UsageIndex, kind: str, filters: Filters = Filters()) -> UsageReport:
    if kind not in REPORTS:
        raise ValueError(f"unknown usage report {kind!r} (one of {', '.join(REPORTS)})")
    with index.connect() as conn:
        return query(conn, kind, filters)


def query(conn: sqlite3.Connection, kind: str, filters: Filters = Filters()) -> UsageReport:
    """The report `kind` from an open index connection: one GROUP BY over the index's per
    session-day sums (`daily`), not over every reply."""
    column = _GROUP_COLUMN.get(kind, "day")
    where, args = filters.where()
    sql = f"SELECT {column}, model, {_SUMS} FROM daily{where} GROUP BY {column}, model"
    groups: dict[str, dict[str, Usage]] = {}
    last: dict[str, float] = {}
    for row in conn.execute(sql, args):
        key = _fold(kind, row[0])
        models = groups.setdefault(key, {})
        models[row[1]] = models.get(row[1], Usage()) + _usage(row[2:10])
        last[key] = max(last.get(key, 0.0), row[10] or 0.0)
    rows = []
    for key in sorted(groups):
        models = groups[key]
        total = Usage()
        for usage in models.values():
            total += usage
        rows.append(UsageRow(key, total, dict(sorted(models.items(), key=lambda kv: -kv[1].total)), last[key]))
    if kind in ("session", "project", "agent", "model"):
        rows.sort(key=lambda r: (-(r.usage.cost or 0.0), -r.usage.total, r.key))
    grand = Usage()
    for row in rows:
        grand += row.usage
    return UsageReport(kind, tuple(rows), grand)


def _fold(kind: str, day: str) -> str:
    if kind == "weekly":
        first = date.fromisoformat(day)
        return (first - timedelta(days=first.weekday())).isoformat()  # its Monday
    if kind == "monthly":
        return day[:7]
    return day


# -- JSON ------------------------------------------------------------------------------------


def usage_json(usage: Usage) -> dict[str, Any]:
    return {
        "inputTokens": usage.input,
        "outputTokens": usage.output,
        "cacheCreationTokens": usage.cache_write,
        "cacheReadTokens": usage.cache_read,
        "reasoningTokens": usage.reasoning,
        "totalTokens": usage.total,
        "totalCost": None if usage.cost is None else round(usage.cost, 6),
        "costComplete": usage.cost_complete,
    }


def row_json(kind: str, row: UsageRow, labels: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {JSON_KEYS[kind][1]: row.key}
    if labels and row.key in labels:
        out.update(labels[row.key])
    out.update(usage_json(row.usage))
    out["modelsUsed"] = [m for m in row.models if m]
    out["unpricedModels"] = list(row.unpriced_models)
    out["modelBreakdowns"] = [
        {
            "modelName": model,
            "inputTokens": u.input,
            "outputTokens": u.output,
            "cacheCreationTokens": u.cache_write,
            "cacheReadTokens": u.cache_read,
            "reasoningTokens": u.reasoning,
            "cost": None if u.cost is None else round(u.cost, 6),
        }
        for model, u in row.models.items()
    ]
    return out


def report_json(result: UsageReport, labels: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """ccusage's shape: the rows under the report's name, then "totals". `labels`: extra fields per key."""
    totals = usage_json(result.total)
    totals.pop("costComplete")
    totals["costComplete"] = result.total.cost_complete
    return {JSON_KEYS[result.kind][0]: [row_json(result.kind, r, labels) for r in result.rows], "totals": totals}


def session_costs(index: UsageIndex, session_id: str | None = None) -> dict[str, Usage]:
    """Each session's summed usage (or one session's), for the session list and a session's
    header. Read from the index as it is: {} while there is none or it is due a rebuild (the
    Activity tab or `opmem usage` builds it; a listing never waits for that)."""
    if index.stale():
        return {}
    where, args = (" WHERE session_id = ?", [session_id]) if session_id else ("", [])
    sql = (
        "SELECT session_id, input, output, cache_write, cache_read, reasoning, cost, replies, priced"
        f" FROM session_totals{where}"
    )
    with index.read() as conn:
        return {row[0]: _usage(row[1:]) for row in conn.execute(sql, args)}
