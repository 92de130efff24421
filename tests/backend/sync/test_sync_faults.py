"""SIGKILL in the middle of a push and of a pull: the store is never corrupt, the next sync completes."""

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


def kill_midway(home: Path, rng: random.Random) -> None:
    """A sync killed at a random point of its run (it may also finish first: then it is whole)."""
    proc = start_sync(home)
    time.sleep(rng.uniform(0.3, 2.5))
    proc.send_signal(signal.SIGKILL)
    proc.communicate()


def check_whole(home: Home) -> None:
    report = home.sessions.verify(repair=False)
    assert report.ok and not report.problems, report.problems
    assert home.memory.problems() == ()


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(3))
def test_sigkill_during_push_and_pull_never_corrupts(tmp_path: Path, trial: int) -> None:
    rng = random.Random(trial)
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    for i in range(SESSIONS):
        add_turn(a, f"s{i:03d}", f"prompt {i} " + "x" * 2000, f"reply {i}", at=T0 + i)
        add_turn(a, f"s{i:03d}", f"second {i}", f"reply two {i}", at=T0 + i + 0.5)
    add_event(a, "a remembered fact", "s000")
    kill_midway(a.path, rng)  # the push side
    check_whole(Home(a.path, durable=False))
    Sync(Home(a.path, durable=False)).run()  # the next sync completes
    kill_midway(b.path, rng)  # the pull side
    check_whole(Home(b.path, durable=False))
    Sync(Home(b.path, durable=False)).run()
    b2 = Home(b.path, durable=False)
    check_whole(b2)
    assert len(b2.sessions.list_sessions().sessions) == SESSIONS
    assert turns(b2, "s007") == turns(Home(a.path, durable=False), "s007")
    assert [h.snippet for h in b2.search("remembered fact")][:1] == ["a remembered fact"]
    assert not list((b.path / "sessions").glob(".*syncing*"))
