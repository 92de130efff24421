"""The app's data layer over a real store: what a cold open shows first is what the whole read
shows last."""

from __future__ import annotations

from opmem_tui.data import StoreData

from .sample_store import fresh_home


def test_last_turn_is_the_replays_last_turn_and_count_cold_and_warm(sample_path):
    cold = StoreData(fresh_home(sample_path))
    listing = cold.listing()
    ids = [meta.id for meta in listing.listing.sessions]
    assert {"fix-login", "hostile", "many-tools"} <= set(ids)
    for session_id in ids:
        first = cold.last_turn(session_id, listing.projects)  # nothing of the session read yet
        whole = cold.replay(session_id, None, listing.projects)
        again = cold.last_turn(session_id, listing.projects)  # the session is open now
        for quick in (first, again):
            assert quick.meta.id == session_id
            assert quick.turn_total == whole.turn_total == len(whole.turns)
            assert list(quick.turns) == list(whole.turns[-1:])
            assert quick.project == whole.project
