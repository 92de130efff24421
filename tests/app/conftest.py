"""App-test fixtures: a deterministic sample store in tmp_path, UTC clock, a settle helper."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from opmem_tui.app import OpmemApp

from .sample_store import NOW, build_sample_store, fresh_home


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch):
    """Times on screen are local time; pin the zone so snapshots match everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


DEMO_NOW = NOW  # the demo store's sessions are dated over the week before this


@pytest.fixture(scope="session")
def demo_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `opmem demo` store, built once per test process; tests must only read it."""
    from opmem_tui.backend.demo import build_demo

    path = tmp_path_factory.mktemp("demo")
    build_demo(path, now=DEMO_NOW)
    return path


@pytest.fixture
def demo_home(demo_path: Path):
    return fresh_home(demo_path / "home")


@pytest.fixture
def sample_path(tmp_path: Path) -> Path:
    path = tmp_path / "opmem"
    build_sample_store(path, projects_root=Path.home())  # $HOME is a tmp folder here
    return path


@pytest.fixture
def sample_home(sample_path: Path):
    return fresh_home(sample_path)


def make_app(home, **kwargs) -> OpmemApp:
    kwargs.setdefault("now", lambda: NOW)
    kwargs.setdefault("poll_interval", 0)
    return OpmemApp(home, **kwargs)


@pytest.fixture
def app(sample_home) -> OpmemApp:
    return make_app(sample_home)


async def settle(pilot, rounds: int = 4) -> None:
    """Let worker chains finish (listing -> highlight -> replay load) and the screen repaint."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot, 2)


__all__ = ["NOW", "make_app", "press", "settle"]
