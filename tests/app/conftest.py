"""App-test fixtures: a deterministic sample store in the test's own $HOME, UTC clock, helpers that wait
for events (workers done, messages handled, a condition met), never for a stretch of time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.notifications import SeverityLevel

from opmem_tui.app import OpmemApp
from opmem_tui.workers import FOLLOW_GROUP, SEARCH_GROUP

from .memory_sample import distil_sample
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
def sample_path() -> Path:
    # Under $HOME (a fresh tmp folder per test): paths on screen read ~/store/..., the same
    # whatever the length of the temp folder's path.
    path = Path.home() / "store"
    build_sample_store(path, projects_root=Path.home())
    return path


@pytest.fixture
def sample_home(sample_path: Path):
    return fresh_home(sample_path)


@pytest.fixture
def memory_home(sample_home):
    """The sample store distilled (memory_sample.py): a graph, core.md and a timeline."""
    distil_sample(sample_home)
    return sample_home


@dataclass(frozen=True)
class Note:
    message: str
    title: str
    severity: SeverityLevel


# Textual drops a notification once its timeout has passed on the wall clock; on a loaded
# machine a test (or a snapshot) can take longer than that. Tests read `app.notes` instead,
# and toasts stay up until cleared.
TOAST_TIMEOUT = 3600.0


class RecordingApp(OpmemApp):
    """OpmemApp that keeps every notification it was asked to show, in order."""

    def __init__(self, home, **kwargs) -> None:
        super().__init__(home, **kwargs)
        self.notes: list[Note] = []

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.notes.append(Note(message, title, severity))
        super().notify(message, title=title, severity=severity, timeout=TOAST_TIMEOUT, markup=markup)


def notes(app: RecordingApp) -> list[str]:
    return [note.message for note in app.notes]


def make_app(home, **kwargs) -> RecordingApp:
    kwargs.setdefault("now", lambda: NOW)
    kwargs.setdefault("watch", False)  # tests that follow the store turn it on
    kwargs.setdefault("poll_interval", 0)
    kwargs.setdefault("idle_distil", 0)  # tests that want the idle distillation turn it on
    return RecordingApp(home, **kwargs)


@pytest.fixture
def app(sample_home) -> OpmemApp:
    return make_app(sample_home)


async def workers_done(app) -> None:
    """Every worker has ended, however: a cancelled or failed one ends too (its error is the
    app's business: a notification), and must not raise here. The one that follows the store
    runs as long as the app, the search screen's search thread as long as the screen: neither
    is waited for (tests wait for the search results they expect)."""
    running = [worker for worker in list(app.workers) if worker.group not in (FOLLOW_GROUP, SEARCH_GROUP)]
    await asyncio.gather(*(worker.wait() for worker in running), return_exceptions=True)


async def settle(pilot, rounds: int = 4) -> None:
    """Let worker chains finish (listing -> highlight -> replay load) and the screen repaint."""
    for _ in range(rounds):
        await pilot.pause()
        await workers_done(pilot.app)
    await pilot.pause()


HANG_GUARD = 60.0  # seconds: only a broken app gets here; nothing is timed by it


async def wait_until(pilot, predicate: Callable[[], bool], what: str) -> None:
    """Let the app run until `predicate()` holds: for things that arrive from outside the app
    (another process writes the store, a file watcher reports it), or from a worker that the
    test holds on purpose (so this does not wait for workers to end)."""
    deadline = time.monotonic() + HANG_GUARD
    while not predicate():
        if time.monotonic() > deadline:
            # Name where the app stands, so a failure seen once under load says what happened.
            app = pilot.app
            tabs = [node.active for node in app.screen.query("TabbedContent")]
            raise AssertionError(f"never happened: {what} (focused: {app.focused!r}, tab: {tabs})")
        await pilot.pause()
        await pilot.pause(0.02)


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot, 2)


__all__ = ["NOW", "RecordingApp", "make_app", "notes", "press", "settle", "wait_until", "workers_done"]
