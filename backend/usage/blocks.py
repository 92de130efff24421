"""Claude's 5-hour billing blocks, as ccusage draws them (`ccusage blocks`).

A block starts at the hour of its first reply and lasts five hours; a reply past the block's end,
or more than five hours after the previous reply, starts a new block (the quiet time between is a
gap block). The block that holds now is active: its burn rate is its tokens and cost over the
minutes from its first to its last reply, and its projection carries that rate to the block's end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .index import UsageIndex
from .reports import Filters, Usage, usage_json

BLOCK_SECONDS = 5 * 3600
DEFAULT_AGENT = "claude-code"  # the 5-hour window is Claude's subscription limit


@dataclass(frozen=True, slots=True)
class Block:
    start: float
    end: float
    actual_end: float  # the last reply's time (start for a gap)
    usage: Usage
    models: tuple[str, ...] = ()
    gap: bool = False
    active: bool = False

    @property
    def entries(self) -> int:
        return self.usage.replies

    def burn_rate(self) -> tuple[float, float] | None:
        """(tokens per minute, dollars per hour) from first to last reply; None for a gap or a single instant."""
        minutes = (self.actual_end - self.start_of_use) / 60
        if self.gap or minutes <= 0:
            return None
        return self.usage.total / minutes, (self.usage.cost or 0.0) / minutes * 60

    @property
    def start_of_use(self) -> float:
        return self.first if self.first else self.start

    first: float = 0.0  # the first reply's time


def blocks(index: UsageIndex, now: float, filters: Filters | None = None) -> tuple[Block, ...]:
    """The blocks of the replies `filters` select (Claude Code's by default)."""
    filters = filters if filters is not None else Filters(agent=DEFAULT_AGENT)
    where, args = filters.where()
    sql = f"SELECT ts, model, input, output, cache_write, cache_read, reasoning, cost FROM usage{where} ORDER BY ts"
    with index.connect() as conn:
        rows = conn.execute(sql, args).fetchall()
    out: list[Block] = []
    current: list[tuple] = []
    start = 0.0
    for row in rows:
        ts = row[0]
        if current and (ts - start > BLOCK_SECONDS or ts - current[-1][0] > BLOCK_SECONDS):
            out.append(_block(start, current, now))
            if ts - current[-1][0] > BLOCK_SECONDS:
                out.append(Block(current[-1][0], ts, current[-1][0], Usage(), gap=True))
            current = []
        if not current:
            start = ts - ts % 3600  # the hour (UTC hours; every zone but a few half-hour ones agrees)
        current.append(row)
    if current:
        out.append(_block(start, current, now))
    return tuple(out)


def _block(start: float, rows: list[tuple], now: float) -> Block:
    usage = Usage()
    models: dict[str, None] = {}
    for _ts, model, *counts, cost in rows:
        usage += Usage(*counts, cost, 1, 0 if cost is None else 1)
        models[model] = None
    end = start + BLOCK_SECONDS
    last = rows[-1][0]
    active = now < end and now - last < BLOCK_SECONDS
    return Block(start, end, last, usage, tuple(m for m in models if m), active=active, first=rows[0][0])


def block_json(block: Block, now: float) -> dict[str, Any]:
    from datetime import UTC, datetime

    def iso(ts: float) -> str:
        return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")

    u = block.usage
    out: dict[str, Any] = {
        "id": iso(block.start),
        "startTime": iso(block.start),
        "endTime": iso(block.end),
        "actualEndTime": None if block.gap else iso(block.actual_end),
        "isActive": block.active,
        "isGap": block.gap,
        "entries": block.entries,
        "tokenCounts": {
            "inputTokens": u.input,
            "outputTokens": u.output,
            "cacheCreationInputTokens": u.cache_write,
            "cacheReadInputTokens": u.cache_read,
        },
        "totalTokens": u.total,
        "costUSD": usage_json(u)["totalCost"],
        "costComplete": u.cost_complete,
        "models": list(block.models),
        "burnRate": None,
        "projection": None,
    }
    rate = block.burn_rate() if block.active else None
    if rate is not None:
        per_minute, per_hour = rate
        remaining = max(block.end - now, 0) / 60
        out["burnRate"] = {"tokensPerMinute": round(per_minute, 2), "costPerHour": round(per_hour, 4)}
        out["projection"] = {
            "totalTokens": round(u.total + per_minute * remaining),
            "totalCost": round((u.cost or 0.0) + per_hour * remaining / 60, 4),
            "remainingMinutes": round(remaining),
        }
    return out
