"""A sync every [sync] every_minutes from a watch's idle tick (a clock the test moves)."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.sync.periodic import PeriodicSync
from opmem_tui.cli_import import _with_periodic_sync

from .helpers import add_turn, bare_remote, machine_home, refs_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_syncs_when_due_and_says_why_when_it_cannot(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    home = machine_home(tmp_path / "a", "laptop", str(remote))
    add_turn(home, "sa1", "one", "first")
    clock, results = Clock(), []
    tick = PeriodicSync(home, 5, lambda report, error: results.append((report, error)), clock=clock)
    tick()
    assert len(results) == 1 and results[0][1] is None and results[0][0].pushed_refs == 3
    assert "refs/opmem/sessions/sa1/heads/main" in refs_of(remote)
    clock.now += 299
    tick()
    assert len(results) == 1  # not due yet
    clock.now += 1
    tick()
    assert len(results) == 2 and results[1][0].pushed_refs == 0
    (remote / "HEAD").unlink()  # the remote is no repository any more
    clock.now += 300
    tick()
    assert results[2][0] is None and "cannot reach the sync remote" in results[2][1]


def test_the_watch_adds_the_tick_only_with_a_remote_and_a_period(tmp_path: Path) -> None:
    home = machine_home(tmp_path / "a", "laptop", "")
    hooks = home.ingest_hooks()
    assert _with_periodic_sync(home, hooks) is hooks
    home.config.set("sync.remote", str(tmp_path / "r.git"))
    home.config.set("sync.every_minutes", 10)
    home.config.save()
    home = Home(home.path, durable=False)
    extended = _with_periodic_sync(home, hooks)
    assert len(extended.on_idle) == len(hooks.on_idle) + 1
    assert isinstance(extended.on_idle[-1], PeriodicSync) and extended.on_idle[-1].every == 600
