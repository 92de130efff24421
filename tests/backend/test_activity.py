"""Activity counting: sessions, turns, tokens and cost per day, per project, source and model,
from the usage index of a real store (caught up incrementally with its listing)."""

from __future__ import annotations

import itertools
from datetime import UTC, date, timedelta, timezone
from pathlib import Path

import pytest

from opmem_tui.backend.activity import ActivityCounter, DayCount, node_tokens
from opmem_tui.backend.home import Home
from opmem_tui.backend.model import Node
from opmem_tui.backend.usage.index import UsageIndex

DAY = 86_400.0
T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC


def _turn(store, sid, at, *, usage=None, meta=None, tools=0):
    user = store.append_message(sid, "user", "question", created_at=at, session_meta=meta)
    reply = store.append_message(sid, "assistant", "answer", created_at=at + 5, metadata=usage)
    for i in range(tools):
        store.append_message(sid, "tool", "out", called_by=reply.id, name="Bash", created_at=at + 6 + i)
    store.commit_turn(sid)
    return user


_INDEXES = itertools.count()


def _counter(store, zone) -> ActivityCounter:
    """A counter over a usage index of its own (a fresh one reads every session)."""
    name = f"usage-{next(_INDEXES)}.sqlite"
    return ActivityCounter(UsageIndex(store.root.parent / "memory" / name, store, zone=zone))


def _home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    return home


def test_counts_per_day_project_and_source(tmp_path: Path) -> None:
    home = _home(tmp_path)
    store = home.sessions
    claude = {
        "model": "claude-sonnet-4-5",
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 5},
    }
    _turn(store, "a", T0 + 3600, usage=claude, meta={"source": "claude-code", "project_id": "p1"}, tools=3)
    _turn(store, "a", T0 + 7200, usage=claude)
    _turn(store, "a", T0 + DAY + 60, usage=claude)
    codex = {
        "model": "gpt-5",
        "token_usage": {"last_token_usage": {"input_tokens": 40, "output_tokens": 2, "total_tokens": 42}},
    }
    _turn(store, "b", T0 + 2 * DAY, usage=codex, meta={"source": "codex"})
    listing = home.sessions.list_sessions().sessions

    activity = _counter(store, UTC).count(listing, {"p1": "weather"})

    d0 = date(2026, 1, 1)
    assert activity.first == d0 and activity.last == d0 + timedelta(days=2)
    # Claude Sonnet 4.5: $3 in, $0.30 cache read, $15 out per MTok; GPT-5: $1.25 in, $10 out (providers' pages)
    sonnet, gpt5 = (10 * 3 + 100 * 0.30 + 5 * 15) / 1e6, (40 * 1.25 + 2 * 10) / 1e6
    assert activity.total.days[d0] == DayCount(sessions=1, turns=2, tokens=230, cost=pytest.approx(2 * sonnet))
    assert activity.total.days[d0 + timedelta(days=1)] == DayCount(1, 1, 115, pytest.approx(sonnet))
    assert activity.total.days[d0 + timedelta(days=2)] == DayCount(1, 1, 42, pytest.approx(gpt5))
    assert activity.total.total == DayCount(
        2, 4, 387, pytest.approx(3 * sonnet + gpt5)
    )  # a, active on two days, is one session
    assert [s.key for s in activity.by_model] == ["claude-sonnet-4-5", "gpt-5"]
    assert activity.usage.cache_share == pytest.approx(300 / (30 + 300 + 40))
    assert [(s.key, s.label) for s in activity.by_project] == [("p1", "weather")]
    assert [s.key for s in activity.by_source] == ["claude-code", "codex"]  # most turns first
    assert activity.total.values("turns", d0 - timedelta(days=1), d0 + timedelta(days=3)) == [0, 2, 1, 1, 0]


def test_days_follow_the_zone(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _turn(home.sessions, "a", T0 - 1800)  # 23:30 UTC on 31 December: 00:30 on 1 January at UTC+1
    listing = home.sessions.list_sessions().sessions
    assert _counter(home.sessions, UTC).count(listing).first == date(2025, 12, 31)
    plus_one = timezone(timedelta(hours=1))
    assert _counter(home.sessions, plus_one).count(listing).first == date(2026, 1, 1)


def test_counts_grow_with_new_files_and_forget_deleted_sessions(tmp_path: Path) -> None:
    home = _home(tmp_path)
    store = home.sessions
    _turn(store, "a", T0)
    _turn(store, "b", T0)
    counter = _counter(store, UTC)
    first = counter.count(store.list_sessions().sessions)
    assert first.total.days[date(2026, 1, 1)] == DayCount(sessions=2, turns=2, tokens=0)

    _turn(store, "a", T0 + 60)
    store.delete_session("b")
    second = counter.count(store.list_sessions().sessions)
    assert second.total.days[date(2026, 1, 1)] == DayCount(1, 2, 0)
    # the same answer as a counter that reads everything afresh
    assert _counter(store, UTC).count(store.list_sessions().sessions) == second


def test_unreadable_node_file_is_a_problem_not_an_error(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _turn(home.sessions, "a", T0)
    history = home.sessions.path_for("a") / "history"
    (history / "000099-u-broken.json").write_text("{not json")
    activity = _counter(home.sessions, UTC).count(home.sessions.list_sessions().sessions)
    assert activity.total.total.turns == 1
    assert any("000099-u-broken.json" in p for p in activity.problems)


def test_empty_store(tmp_path: Path) -> None:
    activity = _counter(_home(tmp_path).sessions, UTC).count(())
    assert activity.empty and activity.total.total == DayCount()


def test_token_formats() -> None:
    def node(**metadata):
        return Node(id="n", seq=1, role="assistant", metadata=metadata)

    assert node_tokens(node(usage={"input_tokens": 3, "output_tokens": 4, "cache_creation_input_tokens": 5})) == 12
    assert node_tokens(node(token_usage={"last_token_usage": {"input_tokens": 7, "output_tokens": 1}})) == 8
    assert node_tokens(node(tokens="2.3k sent, 150 received. Cost: $0.01")) == 2450
    assert node_tokens(node(usage={"input_tokens": True, "output_tokens": -4})) == 0  # nonsense counts nothing
    assert node_tokens(node()) == 0


def test_a_session_active_on_several_days_is_one_session_in_the_totals(tmp_path: Path) -> None:
    """The Activity tab's totals (55 sessions for a store of 51): a session counted once per
    day it was active is still one session in a total; the days keep their own counts."""
    home = _home(tmp_path)
    store = home.sessions
    for day in range(3):
        _turn(store, "long", T0 + day * DAY + 60, meta={"source": "claude-code", "project_id": "p1"})
    _turn(store, "short", T0 + 60, meta={"source": "codex"})
    store.flush()
    activity = _counter(store, UTC).count(store.list_sessions().sessions)
    assert activity.total.total == DayCount(sessions=2, turns=4, tokens=0)
    assert activity.total.days[date(2026, 1, 1)].sessions == 2  # both were active that day
    assert [(s.key, s.total.sessions) for s in activity.by_project] == [("p1", 1)]
    assert {s.key: s.total.sessions for s in activity.by_source} == {"claude-code": 1, "codex": 1}
