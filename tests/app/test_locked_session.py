"""A session another opmem process keeps locked: the app still lists and replays it (reads take
no lock), and a write to it that waits past `[store] lock_timeout_s` is an error notification
naming the lock, not a hang or a traceback."""

from __future__ import annotations

from opmem_tui.widgets.replay_view import ReplayPane

from ..backend.store.session_lock_holder import hold, release
from .conftest import make_app, settle
from .sample_store import fresh_home
from .test_palette import run_command


async def test_a_locked_session_reads_and_its_rename_fails_with_a_clear_notification(sample_path):
    home = fresh_home(sample_path)
    home.config.path.write_text("[store]\nlock_timeout_s = 0.01\n")
    holder = hold(home.sessions.locks_dir / "docs.lock")
    try:
        app = make_app(fresh_home(sample_path))
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            await settle(pilot)
            assert app.screen.query_one(ReplayPane).session_id == "docs"  # read while locked
            await run_command(pilot, "rename session")
            box = app.screen.query_one("Input")
            box.value = "Blocked"
            await pilot.press("enter")
            await settle(pilot)
            errors = [n.message for n in app.notes if n.severity == "error"]
            assert errors and "docs.lock: session docs is locked by another opmem process" in errors[-1]
            assert holder.poll() is None
    finally:
        release(holder)
    assert fresh_home(sample_path).sessions.get_meta("docs").title == "Write the README install section."
