"""The sync in the app: two stores and a bare remote in tmp_path; the app of one syncs at start
(with `[sync] every_minutes`) or on the palette's "Sync now", in a worker, and the footer says
how it went. Waits are on the app's state, bounded; nothing is timed."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.sync import Sync
from opmem_tui.widgets.sync_status import FAILED, NEVER, SYNCED, SyncStatus, describe
from tests.backend.sync.helpers import T0, add_turn, bare_remote, machine_home

from .conftest import make_app, settle, wait_until
from .test_palette import run_command


def machines(tmp_path: Path, remote: Path, every: int = 0) -> tuple[Home, Home]:
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    for home in (a, b):
        home.config.set("sync.every_minutes", every)
        home.config.save()
    return Home(a.path, durable=False), Home(b.path, durable=False)


def listed(app) -> set[str]:
    view = app.screen.sessions.listing_view
    return {m.id for m in view.listing.sessions} if view is not None else set()


def titles(app) -> list[str]:
    return [c.title for c in app.screen.palette_commands()]


def synced(app, status: SyncStatus, state: str = SYNCED):
    return lambda: not app.screen.syncing and status.state == state


async def test_the_app_syncs_at_start_and_says_so_in_the_footer(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = machines(tmp_path, remote, every=5)
    add_turn(b, "sb1", "from the desk", "ok")
    Sync(Home(b.path, durable=False)).run()
    add_turn(a, "sa1", "from the laptop", "ok", at=T0 + 5)
    app = make_app(a, offer_import=False)
    async with app.run_test(size=(140, 36)) as pilot:
        status = app.screen.query_one(SyncStatus)
        await wait_until(pilot, synced(app, status), "the first sync, at start")
        assert status.text == "synced just now"  # the app's clock is pinned: the sync ended at its now
        assert str(status.render()) == "synced just now"
        await wait_until(pilot, lambda: "sb1" in listed(app), "the pulled session in the list")
        assert not app.notes  # a periodic sync that went well is only the footer's
    Sync(Home(b.path, durable=False)).run()  # what the app pushed reaches the other machine
    assert (b.sessions_dir / "sa1" / "meta.json").exists()


async def test_sync_now_from_the_palette(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = machines(tmp_path, remote)  # every_minutes 0: only when asked
    add_turn(b, "sb1", "from the desk", "ok")
    Sync(Home(b.path, durable=False)).run()
    app = make_app(a, offer_import=False)
    async with app.run_test(size=(140, 36)) as pilot:
        status = app.screen.query_one(SyncStatus)
        await settle(pilot)
        assert status.state == NEVER and status.text == "not synced yet"
        assert "sb1" not in listed(app)
        assert "Sync now" in titles(app)
        await run_command(pilot, "Sync now")
        await wait_until(pilot, synced(app, status), "the sync asked for")
        note = next(n for n in app.notes if n.title == "Synced")
        assert note.message.startswith("pulled 1 new session(s)") and note.severity == "information"
        await wait_until(pilot, lambda: "sb1" in listed(app), "the pulled session in the list")


async def test_a_failed_sync_is_one_line_in_the_footer_and_the_next_one_recovers(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"  # not made yet: unreachable
    a, _b = machines(tmp_path, remote)
    add_turn(a, "sa1", "from the laptop", "ok")
    app = make_app(a, offer_import=False)
    async with app.run_test(size=(140, 36)) as pilot:
        status = app.screen.query_one(SyncStatus)
        await settle(pilot)
        app.screen.sync_now()
        await wait_until(pilot, synced(app, status, FAILED), "the sync failed")
        assert status.text.startswith("sync failed: cannot reach the remote: ")  # git's own line follows
        assert "\n" not in status.text and status.has_class("-failed")
        assert [n.title for n in app.notes] == ["Sync failed"]  # asked for: the whole line too
        assert app.notes[0].message.startswith(f"cannot reach the sync remote {remote}: ")
        bare_remote(remote)
        app.screen.sync_now()
        await wait_until(pilot, synced(app, status), "the next sync")
        assert not status.has_class("-failed") and status.text == "synced just now"


async def test_no_remote_no_status_and_no_sync_command(tmp_path: Path) -> None:
    a = machine_home(tmp_path / "a", "laptop", "")
    add_turn(a, "sa1", "from the laptop", "ok")
    app = make_app(Home(a.path, durable=False), offer_import=False)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        assert not app.screen.query(SyncStatus)
        assert app.screen.query("Footer")
        assert "Sync now" not in titles(app)
    assert not (a.path / "sync").exists()  # nothing was synced nor made


def test_the_status_line() -> None:
    assert describe(SYNCED, 1000.0, "", 1030.0) == "synced just now"
    assert describe(SYNCED, 1000.0, "", 1000.0 + 3 * 60 + 5) == "synced 3 min ago"
    assert describe(SYNCED, 1000.0, "", 1000.0 + 5 * 3600) == "synced 5 h ago"
    assert describe(SYNCED, 1000.0, "", 1000.0 + 3 * 86400) == "synced 3 d ago"
    assert describe(SYNCED, None, "", 0.0) == "not synced yet"
    assert describe("syncing", 1000.0, "", 2000.0) == "syncing…"
    shown = describe(FAILED, None, "cannot reach the sync remote x:\nfatal: " + "y" * 200, 0.0)
    assert shown.startswith("sync failed: cannot reach the sync remote x: fatal: y") and shown.endswith("…")
    assert len(shown) == len("sync failed: ") + 60
