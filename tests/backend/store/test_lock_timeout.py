"""A session lock another process holds is waited for at most `lock_timeout`, then a clear error
(it was waited for forever)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionLocked

HOLDER = textwrap.dedent(
    """
    import sys, time
    from filelock import FileLock
    with FileLock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(600)
    """
)


def test_a_held_session_lock_times_out_with_a_clear_error(tmp_path) -> None:
    home = Home(tmp_path / "home")
    home.sessions.append_message("s1", "user", "hi")
    lock = home.sessions.locks_dir / "s1.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        store = Home(home.path).sessions
        store.lock_timeout = 0.2
        with pytest.raises(SessionLocked, match=r"session s1 is locked by another opmem process") as caught:
            store.append_message("s1", "user", "blocked")
        assert str(lock) in str(caught.value)
    finally:
        holder.kill()
        holder.wait()
    assert store.append_message("s1", "user", "after").content == "after"


def test_the_cli_says_a_session_is_locked_without_a_traceback(tmp_path) -> None:
    from .session_lock_holder import hold, release
    from .test_data_safety import opmem

    home = Home(tmp_path / "home")
    home.sessions.append_message("s1", "user", "hi")
    home.sessions.commit_turn("s1")
    home.config.path.write_text("[store]\nlock_timeout_s = 0.01\n")
    holder = hold(home.sessions.locks_dir / "s1.lock")
    try:
        renamed = opmem(home.path, "sessions", "rename", "s1", "New title")
        shown = opmem(home.path, "sessions", "show", "s1")  # a read does not wait
    finally:
        release(holder)
    assert renamed.returncode == 1 and "Traceback" not in renamed.stderr
    assert f"{home.sessions.locks_dir / 's1.lock'}: session s1 is locked by another opmem process" in renamed.stderr
    assert "wait for it to finish or stop it" in renamed.stderr
    assert shown.returncode == 0 and "hi" in shown.stdout
