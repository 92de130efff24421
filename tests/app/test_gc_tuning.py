"""The terminal app runs with fewer, larger young collections (opmem_tui/gc_tuning.py)."""

from __future__ import annotations

import gc

from opmem_tui.gc_tuning import YOUNG_THRESHOLD

from .conftest import make_app


def test_running_the_app_sets_the_young_collection_threshold(sample_home):
    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    seen: list[tuple[int, int, int]] = []

    async def look_and_quit(pilot) -> None:
        seen.append(gc.get_threshold())
        pilot.app.exit()

    try:
        make_app(sample_home).run(headless=True, auto_pilot=look_and_quit)
    finally:
        gc.set_threshold(*before)
    assert seen == [(YOUNG_THRESHOLD, before[1], before[2])]
