"""Activity: sessions, turns and tokens per day, in total, per project and per agent source.

A turn is a user message; a session counts on every day it has a message; tokens are what the
agents reported for their replies (input, cached input and output, as each format gives them;
a format that reports none counts zero). Days are calendar days in the zone given (local time
by default).

`ActivityCounter` keeps, per session, the node files it has read: node files are written once
and never change, so a later count reads only the files added since (and drops sessions that
are gone). The counter is the app's (one per store); it is thread-safe.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from types import MappingProxyType
from typing import Any

from .model import Node, SessionMeta
from .store.node_log import NodeLog
from .store.sessions import SessionStore

METRICS = ("sessions", "turns", "tokens")


@dataclass(frozen=True, slots=True)
class DayCount:
    sessions: int = 0
    turns: int = 0
    tokens: int = 0

    def get(self, metric: str) -> int:
        return int(getattr(self, metric))

    def __add__(self, other: DayCount) -> DayCount:
        return DayCount(self.sessions + other.sessions, self.turns + other.turns, self.tokens + other.tokens)


@dataclass(frozen=True, slots=True)
class ActivitySeries:
    """Counts per day for one slice of the store (all of it, a project, a source)."""

    key: str  # "" for the whole store, else the project id or the source name
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
            out = DayCount(self.session_count, out.turns, out.tokens)
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
    first: date | None = None  # the first and last day with any message
    last: date | None = None
    problems: tuple[str, ...] = ()  # node files that could not be read

    @property
    def empty(self) -> bool:
        return self.first is None


# -- tokens ----------------------------------------------------------------------------------

_AIDER_TOKENS = re.compile(r"([\d.,]+)\s*([km]?)\s+(sent|received)", re.IGNORECASE)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _aider_number(text: str, suffix: str) -> int:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return 0
    return int(value * {"": 1, "k": 1_000, "m": 1_000_000}[suffix.lower()])


def node_tokens(node: Node) -> int:
    """Tokens the agent reported for this message (0 when its format reports none)."""
    meta = node.metadata
    if not meta:
        return 0
    usage = meta.get("usage")  # Claude Code: per reply
    if isinstance(usage, Mapping):
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
        return sum(_int(usage.get(key)) for key in keys)
    codex = meta.get("token_usage")  # Codex: the last call's usage
    if isinstance(codex, Mapping):
        last = codex.get("last_token_usage")
        if isinstance(last, Mapping):
            total = _int(last.get("total_tokens"))
            return total or _int(last.get("input_tokens")) + _int(last.get("output_tokens"))
        return 0
    aider = meta.get("tokens")  # aider: "2.3k sent, 150 received."
    if isinstance(aider, str):
        return sum(_aider_number(number, suffix) for number, suffix, _ in _AIDER_TOKENS.findall(aider))
    return 0


# -- counting --------------------------------------------------------------------------------


class _SessionDays:
    """One session's counts by day, grown file by file."""

    def __init__(self, history: NodeLog) -> None:
        self.log = history
        self.days: dict[date, list[int]] = {}  # day -> [messages, turns, tokens]

    def add(self, nodes: Iterable[Node], zone: tzinfo | None) -> None:
        for node in nodes:
            if node.created_at <= 0:
                continue  # a message with no time has no day
            day = datetime.fromtimestamp(node.created_at, zone).date()
            counts = self.days.setdefault(day, [0, 0, 0])
            counts[0] += 1
            if node.role == "user" and not node.is_tool:
                counts[1] += 1
            if node.role == "assistant":
                counts[2] += node_tokens(node)


class ActivityCounter:
    """Counts over one SessionStore, reading only node files it has not read before."""

    def __init__(self, store: SessionStore, *, zone: tzinfo | None = None) -> None:
        self.store = store
        self.zone = zone  # None: local time
        self._sessions: dict[str, _SessionDays] = {}
        self._lock = threading.Lock()

    def count(self, sessions: Sequence[SessionMeta], project_names: Mapping[str, str] | None = None) -> Activity:
        """Activity of `sessions` (a listing): total, per project, per source."""
        names = project_names or {}
        with self._lock:
            wanted = {meta.id for meta in sessions}
            for gone in set(self._sessions) - wanted:
                del self._sessions[gone]
            total: dict[date, DayCount] = {}
            projects: dict[str, dict[date, DayCount]] = {}
            sources: dict[str, dict[date, DayCount]] = {}
            counted: dict[str, set[str]] = {}  # slice key ("" all, "p:<id>", "s:<source>") -> sessions in it
            problems: list[str] = []
            for meta in sessions:
                days = self._read(meta.id)
                problems.extend(days.log.problems)
                source = meta.source or "unknown"
                for day, (messages, turns, tokens) in days.days.items():
                    count = DayCount(1 if messages else 0, turns, tokens)
                    _add(total, day, count)
                    if meta.project_id:
                        _add(projects.setdefault(meta.project_id, {}), day, count)
                    _add(sources.setdefault(source, {}), day, count)
                if any(messages for messages, _, _ in days.days.values()):
                    for key in ("", f"p:{meta.project_id}" if meta.project_id else "", f"s:{source}"):
                        counted.setdefault(key, set()).add(meta.id)
        present = sorted(total)

        def distinct(key: str) -> int:
            return len(counted.get(key, ()))

        return Activity(
            total=ActivitySeries("", "all sessions", MappingProxyType(total), distinct("")),
            by_project=_ranked(
                (pid, names.get(pid) or pid, days, distinct(f"p:{pid}")) for pid, days in projects.items()
            ),
            by_source=_ranked((source, source, days, distinct(f"s:{source}")) for source, days in sources.items()),
            first=present[0] if present else None,
            last=present[-1] if present else None,
            problems=tuple(dict.fromkeys(problems)),
        )

    def _read(self, session_id: str) -> _SessionDays:
        days = self._sessions.get(session_id)
        if days is None:
            days = _SessionDays(NodeLog(self.store.path_for(session_id) / "history", durable=False))
            self._sessions[session_id] = days
        days.add(days.log.scan(()), self.zone)
        return days


def _add(table: dict[date, DayCount], day: date, count: DayCount) -> None:
    table[day] = table.get(day, _ZERO) + count


def _ranked(rows: Iterable[tuple[str, str, dict[date, DayCount], int]]) -> tuple[ActivitySeries, ...]:
    series = [ActivitySeries(key, label, MappingProxyType(days), sessions) for key, label, days, sessions in rows]
    series.sort(key=lambda s: (-s.total.turns, -s.total.sessions, s.label))
    return tuple(series)
