"""Activity: sessions, turns, tokens and cost per day, in total, per project, agent and model.

Counted from the usage index (backend/usage/index.py), never from the session files: a turn is a
user message, a session counts on every day it has a turn or a reply, tokens and cost are what the
agents recorded for their replies, priced offline (backend/usage/prices.py). Days are calendar
days in the index's zone (local time by default). `ActivityCounter.count` first catches the index
up with the listing (only sessions whose meta.json changed are read), then sums in SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from types import MappingProxyType

from .model import Node, SessionMeta
from .usage.index import Progress, UsageIndex
from .usage.reports import Usage
from .usage.tokens import node_counts

METRICS = ("sessions", "turns", "tokens", "cost")


@dataclass(frozen=True, slots=True)
class DayCount:
    sessions: int = 0
    turns: int = 0
    tokens: int = 0
    cost: float = 0.0  # dollars, of the replies whose model the price table knows
    unpriced: int = 0  # tokens of replies whose model has no known price (not in `cost`)

    def get(self, metric: str) -> int:
        if metric == "cost":
            return round(self.cost * 100)  # cents: the charts draw integers
        return int(getattr(self, metric))

    def __add__(self, other: DayCount) -> DayCount:
        return DayCount(
            self.sessions + other.sessions,
            self.turns + other.turns,
            self.tokens + other.tokens,
            self.cost + other.cost,
            self.unpriced + other.unpriced,
        )


@dataclass(frozen=True, slots=True)
class ActivitySeries:
    """Counts per day for one slice of the store (all of it, a project, an agent, a model)."""

    key: str  # "" for the whole store, else the project id, the source name or the model
    label: str
    days: Mapping[date, DayCount] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def total(self) -> DayCount:
        out = DayCount()
        for count in self.days.values():
            out += count
        return out

    def values(self, metric: str, first: date, last: date) -> list[int]:
        """The metric for every day from `first` to `last`, zero where nothing happened."""
        span = (last - first).days + 1
        return [self.days.get(first + timedelta(days=i), _ZERO).get(metric) for i in range(max(span, 0))]


_ZERO = DayCount()


@dataclass(frozen=True, slots=True)
class Activity:
    total: ActivitySeries
    by_project: tuple[ActivitySeries, ...] = ()  # most turns first
    by_source: tuple[ActivitySeries, ...] = ()
    by_model: tuple[ActivitySeries, ...] = ()  # most cost first
    first: date | None = None  # the first and last day with any message
    last: date | None = None
    problems: tuple[str, ...] = ()  # node files that could not be read
    usage: Usage = field(default_factory=Usage)  # tokens by kind and cost over everything counted
    unpriced_models: tuple[str, ...] = ()  # models whose replies have no price

    @property
    def empty(self) -> bool:
        return self.first is None


def node_tokens(node: Node) -> int:
    """Tokens the agent recorded for this reply (0 when its format records none)."""
    counts = node_counts(node)
    return counts.total if counts is not None else 0


class ActivityCounter:
    """Counts over one usage index; thread-safe (the index serialises its writes)."""

    def __init__(self, index: UsageIndex) -> None:
        self.index = index

    def count(
        self,
        sessions: Sequence[SessionMeta],
        project_names: Mapping[str, str] | None = None,
        *,
        progress: Progress | None = None,
    ) -> Activity:
        """Activity of `sessions` (a listing): total, per project, per source, per model. The index
        is first caught up with the listing (sessions it lacks or whose meta changed are read, the
        ones the listing no longer has dropped), then summed in SQL, one query per slice."""
        names = project_names or {}
        report = self.index.refresh(sessions, progress=progress)
        with self.index.connect() as conn:
            total = _series(conn.execute(_SLICE.format(key="''")))
            projects = _series(conn.execute(_SLICE.format(key="project_id")))
            sources = _series(conn.execute(_SLICE.format(key="source")))
            models: dict[str, dict[date, DayCount]] = {}
            usage, unpriced = Usage(), set()
            for model, day, *sums in conn.execute(_MODELS):
                row = Usage(*(int(v or 0) for v in sums[:5]), sums[5], sums[6], sums[7])
                usage += row
                if not row.cost_complete:
                    unpriced.add(model or "(unnamed)")
                count = DayCount(0, 0, row.total, row.cost or 0.0, 0 if row.cost_complete else row.total)
                _add(models.setdefault(model or "(unnamed)", {}), date.fromisoformat(day), count)
        days = total.get("", {})
        present = sorted(days)
        projects.pop("", None)  # sessions in no project: in the total, not a row of their own
        by_model = [ActivitySeries(m, m, MappingProxyType(d)) for m, d in models.items()]
        by_model.sort(key=lambda s: (-s.total.cost, -s.total.tokens, s.label))
        return Activity(
            total=ActivitySeries("", "all sessions", MappingProxyType(days)),
            by_project=_ranked((pid, names.get(pid) or pid, d) for pid, d in projects.items()),
            by_source=_ranked((source or "unknown", source or "unknown", d) for source, d in sources.items()),
            by_model=tuple(by_model),
            first=present[0] if present else None,
            last=present[-1] if present else None,
            problems=tuple(dict.fromkeys(report.problems)),
            usage=usage,
            unpriced_models=tuple(sorted(unpriced)),
        )


# One slice of the index per day: its sessions, turns, tokens, cost, and the tokens of replies
# whose model has no price; from the per session-day sums (a session is in one project and agent).
_SLICE = """SELECT {key}, day, count(*), sum(turns), sum(tokens), sum(cost), sum(unpriced) FROM session_days
    GROUP BY {key}, day"""
_MODELS = """SELECT model, day, sum(input), sum(output), sum(cache_write), sum(cache_read), sum(reasoning),
    sum(cost), sum(replies), sum(priced) FROM daily GROUP BY model, day"""


def _series(rows: Iterable[tuple]) -> dict[str, dict[date, DayCount]]:
    out: dict[str, dict[date, DayCount]] = {}
    for key, day, sessions, turns, tokens, cost, unpriced in rows:
        out.setdefault(key, {})[date.fromisoformat(day)] = DayCount(
            sessions, turns, tokens or 0, cost or 0.0, unpriced or 0
        )
    return out


def _add(table: dict[date, DayCount], day: date, count: DayCount) -> None:
    table[day] = table.get(day, _ZERO) + count


def _ranked(rows: Iterable[tuple[str, str, dict[date, DayCount]]]) -> tuple[ActivitySeries, ...]:
    series = [ActivitySeries(key, label, MappingProxyType(days)) for key, label, days in rows]
    series.sort(key=lambda s: (-s.total.turns, -s.total.sessions, s.label))
    return tuple(series)
