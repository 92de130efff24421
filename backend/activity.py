"""Activity: sessions, turns, tokens and cost per day, in total, per project, agent and model.

Counted from the usage index (backend/usage/index.py), never from the session files: a turn is a
user message, a session counts on every day it has a turn or a reply, tokens and cost are what the
agents recorded for their replies, priced offline (backend/usage/prices.py). Days are calendar
days in the index's zone (local time by default). `ActivityCounter.count` first catches the index
up with the listing (only sessions whose meta.json changed are read), then reads its per-day sums.
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
    session_count: int | None = None  # distinct sessions; None: the days' sum

    @property
    def total(self) -> DayCount:
        """The slice's totals: a session active on three days is one session, not three."""
        out = DayCount()
        for count in self.days.values():
            out += count
        if self.session_count is not None:
            out = DayCount(self.session_count, out.turns, out.tokens, out.cost, out.unpriced)
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
        ones the listing no longer has dropped); then its per-day sums are read as they are."""
        names = project_names or {}
        report = self.index.refresh(sessions, progress=progress)
        slices: dict[str, dict[str, dict[date, DayCount]]] = {"total": {}, "project": {}, "source": {}}
        models: dict[str, dict[date, DayCount]] = {}
        usage, unpriced = Usage(), set()
        parsed: dict[str, date] = {}
        with self.index.connect() as conn:
            for day, kind, key, sessions_, turns, tokens, cost, unpriced_tokens in conn.execute(_SLICES):
                when = parsed.get(day) or parsed.setdefault(day, date.fromisoformat(day))
                count = DayCount(sessions_, turns, tokens or 0, cost or 0.0, unpriced_tokens or 0)
                slices.setdefault(kind, {}).setdefault(key, {})[when] = count
            distinct = dict(conn.execute(_DISTINCT).fetchall())
            for day, model, *sums in conn.execute(_MODELS):
                row = Usage(*(int(v or 0) for v in sums[:5]), sums[5], sums[6], sums[7])
                usage += row
                if not row.cost_complete:
                    unpriced.add(model or "(unnamed)")
                when = parsed.get(day) or parsed.setdefault(day, date.fromisoformat(day))
                count = DayCount(0, 0, row.total, row.cost or 0.0, 0 if row.cost_complete else row.total)
                models.setdefault(model or "(unnamed)", {})[when] = count
        total, projects, sources = slices["total"], slices["project"], slices["source"]
        days = total.get("", {})
        present = sorted(days)
        projects.pop("", None)  # sessions in no project: in the total, not a row of their own
        by_model = [ActivitySeries(m, m, MappingProxyType(d)) for m, d in models.items()]
        by_model.sort(key=lambda s: (-s.total.cost, -s.total.tokens, s.label))
        return Activity(
            total=ActivitySeries("", "all sessions", MappingProxyType(days), distinct.get("", 0)),
            by_project=_ranked(
                (pid, names.get(pid) or pid, d, distinct.get(f"p:{pid}", 0)) for pid, d in projects.items()
            ),
            by_source=_ranked(
                (source or "unknown", source or "unknown", d, distinct.get(f"s:{source}", 0))
                for source, d in sources.items()
            ),
            by_model=tuple(by_model),
            first=present[0] if present else None,
            last=present[-1] if present else None,
            problems=tuple(dict.fromkeys(report.problems)),
            usage=usage,
            unpriced_models=tuple(sorted(unpriced)),
        )


# The index's per-day sums (backend/usage/index.py keeps them): each day's sessions, turns, tokens,
# cost and the tokens of replies whose model has no price, in total, per project and per agent;
# and each day's sums per model.
_SLICES = "SELECT day, kind, key, sessions, turns, tokens, cost, unpriced FROM slices"
# Distinct sessions per slice: one active on several days counts once in a slice's total.
_DISTINCT = """SELECT '', count(DISTINCT session_id) FROM session_days
    UNION ALL SELECT 'p:' || project_id, count(DISTINCT session_id) FROM session_days GROUP BY project_id
    UNION ALL SELECT 's:' || source, count(DISTINCT session_id) FROM session_days GROUP BY source"""
_MODELS = """SELECT day, model, input, output, cache_write, cache_read, reasoning, cost, replies, priced
    FROM model_days"""


def _ranked(rows: Iterable[tuple[str, str, dict[date, DayCount], int]]) -> tuple[ActivitySeries, ...]:
    series = [ActivitySeries(key, label, MappingProxyType(days), sessions) for key, label, days, sessions in rows]
    series.sort(key=lambda s: (-s.total.turns, -s.total.sessions, s.label))
    return tuple(series)
