"""The Activity tab's turns are `opmem sessions list`'s: the current branch's prompts only."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.activity import ActivityCounter
from opmem_tui.backend.home import Home

from .helpers import at, utc_index


def turns_of_activity(home: Home) -> int:
    listing = home.sessions.list_sessions()
    total = ActivityCounter(utc_index(home)).count(listing.sessions, {}).total
    return sum(day.turns for day in total.days.values())


def test_a_prompt_on_another_branch_is_no_turn_of_the_activity(tmp_path: Path) -> None:
    home = Home(tmp_path / "h", durable=False)
    store = home.sessions
    first = store.append_message("s", "user", "first", created_at=at("2026-02-20 10:00"))
    reply = store.append_message("s", "assistant", "ok", parent_id=first.id, created_at=at("2026-02-20 10:01"))
    store.commit_turn("s", reply.id)
    for n, when in ((1, "2026-02-20 11:00"), (2, "2026-02-21 11:00")):  # two tries of the second prompt
        again = store.append_message("s", "user", f"second, take {n}", parent_id=reply.id, created_at=at(when))
        answer = store.append_message("s", "assistant", "done", parent_id=again.id, created_at=at(when) + 60)
        store.commit_turn("s", answer.id)
    fresh = Home(home.path, durable=False)
    (meta,) = fresh.sessions.list_sessions().sessions
    assert meta.turn_count == 2  # the current branch: first, then take 2
    assert turns_of_activity(fresh) == 2
    days = ActivityCounter(utc_index(fresh)).count(fresh.sessions.list_sessions().sessions, {}).total.days
    assert {str(day): count.turns for day, count in days.items()} == {"2026-02-20": 1, "2026-02-21": 1}


def test_the_activity_counts_the_turns_the_session_list_does_on_the_fixtures(tmp_path: Path) -> None:
    """Every agent fixture imported as `opmem import FIXTURES` does: each session's turns in the
    usage index are its listed turns (the Activity tab said 148 for the list's 146)."""
    from opmem_tui.backend.importers import SOURCES, run_import
    from opmem_tui.backend.importers.detect import detect_sources

    fixtures = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
    if not fixtures.is_dir():
        pytest.skip("../shared/fixtures is absent")
    home = Home(tmp_path / "h", durable=False)
    for name, units in detect_sources([fixtures], SOURCES).sessions.items():
        run_import(home, name, units, bind=False, exact=True)
    listing = home.sessions.list_sessions()
    index = utc_index(home)
    index.update()
    with index.connect() as conn:
        counted = dict(conn.execute("SELECT session_id, count(*) FROM turns GROUP BY session_id"))
    listed = {meta.id: meta.turn_count for meta in listing.sessions}
    timed = {sid for sid in listed if counted.get(sid)}  # a session with no time has no day to count on
    assert len(timed) > 40
    assert {sid: counted[sid] for sid in timed} == {sid: listed[sid] for sid in timed}
    assert "cc-agent-sessions-claude-small" in timed  # its two prompts off the current branch are none
