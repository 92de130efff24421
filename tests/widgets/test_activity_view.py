"""The activity widget's drawing helpers: shade levels, sparklines, short numbers."""

from __future__ import annotations

from opmem_tui.widgets.activity_view import level, sparkline
from opmem_tui.widgets.cost_text import short_number


def test_levels_and_sparklines_draw_what_the_counts_say() -> None:
    assert [level(v, 8, 5) for v in (0, 1, 2, 4, 8)] == [0, 1, 1, 2, 4]
    assert sparkline([0, 1, 4, 8]) == " ▁▄█"
    assert sparkline([0, 0]) == "▁▁"
    assert short_number(999) == "999" and short_number(1_200) == "1.2k" and short_number(2_000_000) == "2M"
