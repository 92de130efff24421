"""How tokens and a cost read on screen: 1.2k / 2.5M tokens; "$1.23", "$1.23+" when some
replies had no known price, "cost unknown" (or "?" in a narrow cell) when none had: never $0
for a model the price table lacks."""

from __future__ import annotations

from opmem_tui.backend.usage.reports import Usage


def money(cost: float, complete: bool = True, *, unknown: bool = False) -> str:
    if unknown:
        return "cost unknown"
    return f"${cost:,.2f}" + ("" if complete else "+")


def usage_cost(usage: Usage) -> str:
    """A session's or a slice's cost; "" when it recorded no tokens."""
    if usage.total == 0:
        return ""
    if usage.cost is None:
        return "?"
    return money(usage.cost, usage.cost_complete)


def short_number(value: int) -> str:
    """1234 -> 1.2k, 2500000 -> 2.5M."""
    for size, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if value >= size:
            return f"{value / size:.1f}{suffix}".replace(".0", "")
    return str(value)
