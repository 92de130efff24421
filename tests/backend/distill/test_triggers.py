"""Triggers: the idle rule, the daily sleep (caught up when missed), and the Distiller the app holds."""

from __future__ import annotations

import datetime as dt
import os
import threading

from opmem_tui.backend.distill.state import load_state
from opmem_tui.backend.distill.triggers import Distiller, idle_sessions, last_scheduled, sleep_due
from opmem_tui.backend.home import Home

from .conftest import Chat


def local(*args: int) -> float:
    return dt.datetime(*args).astimezone().timestamp()


def test_the_sleep_is_due_once_a_day_and_a_missed_one_is_caught_up():
    at = dt.time(3, 0)
    assert last_scheduled(at, local(2026, 5, 2, 10, 0)) == local(2026, 5, 2, 3, 0)
    assert last_scheduled(at, local(2026, 5, 2, 2, 59)) == local(2026, 5, 1, 3, 0)
    assert sleep_due(0.0, at, local(2026, 5, 2, 10, 0))  # never slept
    assert not sleep_due(local(2026, 5, 2, 3, 5), at, local(2026, 5, 2, 23, 0))
    assert sleep_due(local(2026, 5, 2, 3, 5), at, local(2026, 5, 3, 3, 0))
    # the machine was off for three days: one sleep at the next start, not three
    assert sleep_due(local(2026, 5, 1, 3, 5), at, local(2026, 5, 4, 12, 0))


def session(home: Home, sid: str, when: float) -> None:
    chat = Chat(home, sid, start=when)
    chat.user("check the build")
    chat.reply("The build is green.")
    chat.commit()
    history = home.sessions.path_for(sid) / "history"
    os.utime(history, (when, when))  # the folder's mtime is when its last node was written


def test_only_sessions_idle_long_enough_are_picked(home: Home):
    now = 1_700_010_000.0
    session(home, "quiet", now - 3600)
    session(home, "busy", now - 60)
    assert idle_sessions(home, 30, now) == ["quiet"]


def test_distiller_ticks_sleep_first_then_idle_sessions(home: Home):
    now = 1_700_010_000.0
    session(home, "quiet", now - 3600)
    seen = []
    distiller = Distiller(home, clock=lambda: now)
    distiller.listeners.append(seen.append)
    assert distiller.tick() == "sleep"  # never slept: caught up first (it distils pending sessions too)
    status = distiller.wait(60)
    assert status.kind == "sleep" and not status.running and not status.error, status.error
    assert load_state(home.memory_dir).last_sleep > 0
    assert load_state(home.memory_dir).cursor("quiet").seq == 1
    assert (home.memory_dir / "core.md").exists()
    assert any(s.progress is not None for s in seen)
    session(home, "later", now - 3600)
    assert distiller.tick() == "distil"
    status = distiller.wait(60)
    assert status.report.sessions == 1 and not status.error
    assert distiller.tick() == ""  # nothing idle and new, and slept today


def test_one_job_at_a_time_and_cancel(home: Home):
    for k in range(3):
        session(home, f"s{k}", 1_700_000_000.0 + k)
    gate = threading.Event()
    distiller = Distiller(home)
    distiller.listeners.append(lambda status: gate.wait(10) if status.progress else None)
    assert distiller.distil()
    assert not distiller.distil() and not distiller.sleep()  # busy
    distiller.cancel()
    gate.set()
    status = distiller.wait(60)
    assert status.report.cancelled and status.report.sessions < 3


def test_opmem_watch_idle_tick_distils_idle_sessions(home: Home):
    from opmem_tui.cli_import import ingest_hooks

    session(home, "quiet", 1_700_000_000.0)  # idle for years
    (tick,) = ingest_hooks(home).on_idle
    tick()
    status = home.distiller.wait(60)
    assert status.kind == "sleep" and not status.error, status.error  # never slept: caught up first
    assert load_state(home.memory_dir).cursor("quiet").seq == 1
    session(home, "later", 1_700_000_000.0)
    tick()
    status = home.distiller.wait(60)
    assert status.kind == "distil" and status.report.sessions == 1 and not status.error, status
    assert load_state(home.memory_dir).cursor("later").seq == 1
