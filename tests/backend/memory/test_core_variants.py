"""core.md's layout with a brief line offered whole and cut to its newest item: one of them, never both."""

from __future__ import annotations

from datetime import date

from opmem_tui.backend.memory.core import CoreLine, compose_core

DAY = date(2026, 6, 1)
FULL = "· done: add the poll system; wire the search grounding; move the docs under docs/; add admin prompts"
SHORT = "· done: add the poll system"


def _brief(filler: int) -> list[CoreLine]:
    lines = [CoreLine(f"· conventions: rule {i} " + "x" * 150, "s-1", 5.0) for i in range(filler)]
    return [*lines, CoreLine(FULL, "s-1", 1.0), CoreLine(SHORT, "s-1", 0.5)]


def test_the_whole_line_when_it_fits_and_never_its_cut_beside_it():
    block = compose_core("demo", DAY, [], [], brief=_brief(0), brief_label="[Project · demo]")
    assert FULL in block and block.count("add the poll system") == 1, block


def test_the_newest_item_alone_when_the_whole_line_does_not_fit():
    blocks = [compose_core("demo", DAY, [], [], brief=_brief(n), brief_label="[Project · demo]") for n in range(12)]
    cut = [b for b in blocks if FULL not in b and SHORT in b]
    assert cut, "no block had room for the cut line only"
    assert all(b.count("add the poll system") <= 1 for b in blocks)
