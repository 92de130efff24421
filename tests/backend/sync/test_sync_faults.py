"""SIGKILL in the middle of a push and of a pull: the store is never corrupt, the next sync completes.
Two machines syncing to one remote at the same time: nothing is lost.

`bench/reliability.py --suite sync --long` runs 20 kill trials of each side; CI runs 3."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.sync import Sync

from .helpers import T0, add_event, add_turn, bare_remote, machine_home, turns

SESSIONS = 40


def start_sync(home: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, OPMEM_HOME=str(home))
    code = "from opmem_tui.cli import main; main(['sync'])"
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def kill_midway(home: Path, rng: random.Random) -> bool:
    """A sync killed at a random point of its run; False when it finished first (then it is whole)."""
    proc = start_sync(home)
    time.sleep(rng.uniform(0.3, 3.0))
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    return not finished


def whole(home: Home) -> list[str]:
    report = home.sessions.verify(repair=False)
    problems = [*report.problems, *(f"unreadable session {s}" for s in report.unreadable)]
    problems += [str(p) for p in home.memory.problems()]
    return problems


def kill_trial(base: Path, seed: int) -> list[str]:
    """One push killed midway and one pull killed midway, each followed by a sync that must complete.
    Returns what went wrong (nothing, when all is well)."""
    rng = random.Random(seed)
    remote = bare_remote(base / "remote.git")
    a = machine_home(base / "a", "laptop", str(remote))
    b = machine_home(base / "b", "desk", str(remote))
    for i in range(SESSIONS):
        add_turn(a, f"s{i:03d}", f"prompt {i} " + "x" * 2000, f"reply {i}", at=T0 + i)
        add_turn(a, f"s{i:03d}", f"second {i}", f"reply two {i}", at=T0 + i + 0.5)
    add_event(a, "a remembered fact", "s000")
    problems: list[str] = []
    for side, home in (("push", a), ("pull", b)):
        kill_midway(home.path, rng)
        problems += [f"{side}, after the kill: {p}" for p in whole(Home(home.path, durable=False))]
        try:
            Sync(Home(home.path, durable=False)).run()
        except Exception as exc:
            problems.append(f"{side}: the next sync failed: {type(exc).__name__}: {exc}")
    b2 = Home(b.path, durable=False)
    problems += [f"at the end: {p}" for p in whole(b2)]
    if len(b2.sessions.list_sessions().sessions) != SESSIONS:
        problems.append(f"the pulling machine has {len(b2.sessions.list_sessions().sessions)} of {SESSIONS} sessions")
    elif turns(b2, "s007") != turns(Home(a.path, durable=False), "s007"):
        problems.append("session s007 differs between the machines")
    if [h.snippet for h in b2.search("remembered fact")][:1] != ["a remembered fact"]:
        problems.append("the pulled memory is not found by search")
    if list((b.path / "sessions").glob(".*syncing*")):
        problems.append("a staging folder was left after the next sync")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(3))
def test_sigkill_during_push_and_pull_never_corrupts(tmp_path: Path, trial: int) -> None:
    assert kill_trial(tmp_path, trial) == []


def test_two_machines_syncing_at_the_same_time_lose_nothing(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    homes = [machine_home(tmp_path / m, m, str(remote)) for m in ("laptop", "desk")]
    for n, home in enumerate(homes):
        for i in range(5):
            add_turn(home, f"{home.path.name}-{i}", f"work {n}.{i}", "ok", at=T0 + i)
        add_event(home, f"fact from the {home.path.name}", f"{home.path.name}-0")
    procs = [start_sync(h.path) for h in homes]
    for proc in procs:
        proc.communicate()
    for home in (*homes, *homes):
        Sync(Home(home.path, durable=False)).run()
    for home in homes:
        fresh = Home(home.path, durable=False)
        assert len(fresh.sessions.list_sessions().sessions) == 10
        for other in ("laptop", "desk"):
            assert [h.snippet for h in fresh.search(f"fact from the {other}")][:1] == [f"fact from the {other}"]
        assert not whole(fresh)
