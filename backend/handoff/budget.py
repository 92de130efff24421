"""Fitting a brief's lines into a token budget (tokens as backend/token_estimate counts them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..token_estimate import estimate_tokens

__all__ = ["Line", "estimate_tokens", "fit"]


@dataclass(frozen=True, slots=True)
class Line:
    section: str  # the heading it goes under
    text: str  # the whole line, pointer included
    rank: int  # lower keeps first when the budget is short
    order: int  # position within its section when shown


def fit(header: str, sections: Sequence[str], lines: Sequence[Line], budget: int) -> tuple[str, int]:
    """The text of `header` plus the best-ranked lines that fit `budget` tokens, under their
    headings in `sections` order (a heading only when one of its lines is kept); and how many
    lines were left out."""
    kept: list[Line] = []
    used = estimate_tokens(header + "\n")
    headed: set[str] = set()
    for line in sorted(lines, key=lambda item: (item.rank, item.order)):
        cost = estimate_tokens(line.text + "\n")
        if line.section not in headed:
            cost += estimate_tokens(f"\n## {line.section}\n")
        if used + cost > budget:
            continue
        used += cost
        headed.add(line.section)
        kept.append(line)
    out = [header]
    for section in sections:
        mine = sorted((item for item in kept if item.section == section), key=lambda item: item.order)
        if mine:
            out.append(f"\n## {section}")
            out.extend(item.text for item in mine)
    return "\n".join(out) + "\n", len(lines) - len(kept)
