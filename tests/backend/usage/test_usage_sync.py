"""The usage index is not synced: a private session counts on its own machine only."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.sync import Sync
from opmem_tui.backend.usage.reports import query

from ..sync.helpers import all_objects, bare_remote, machine_home, refs_of
from .helpers import add_reply, claude_usage, utc_index


def test_a_private_session_counts_here_and_never_leaves(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    add_reply(a, "open-work", "2025-10-01 10:00", "claude-sonnet-4-5", claude_usage(1_000, 100))
    add_reply(a, "secret-work", "2025-10-01 11:00", "claude-sonnet-4-5", claude_usage(7_777, 333))
    a.sessions.update_session("secret-work", private=True)
    a.usage.update()
    for home in (a, b, a, b):
        Sync(Home(home.path, durable=False)).run()
    with utc_index(a).connect() as conn:
        assert query(conn, "daily").total.total == 1_100 + 8_110  # this machine: both
    b_home = Home(b.path, durable=False)
    with utc_index(b_home).connect() as conn:
        assert query(conn, "daily").total.total == 1_100  # the other: only what was synced
    assert not any("usage" in name for name in refs_of(remote))
    objects = all_objects(remote)
    assert b"usage.sqlite" not in objects and b"SQLite format 3" not in objects
