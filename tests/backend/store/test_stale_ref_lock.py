"""A ref lock left by a writer killed mid-update (found by the crash suite) no longer fails every
later commit of that branch: under the session's lock it can only be stale, and is removed."""

from __future__ import annotations

import gc

from opmem_tui.backend.home import Home

from .conftest import git


def test_a_stale_ref_lock_from_a_killed_writer_is_recovered(tmp_path) -> None:
    home = Home(tmp_path / "home")
    node = home.sessions.append_message("s1", "user", "before the first commit")
    path = home.sessions.path_for("s1")
    lock = path / ".git" / "refs" / "heads" / "main.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")  # killed between creating the lock and renaming it over the ref
    del home  # the writer is gone (a live one's uncommitted turn is left to it)
    gc.collect()
    again = Home(path.parent.parent)
    assert [t.commit is not None for t in again.sessions.get_turns("s1")] == [True]
    assert not lock.exists()
    assert again.sessions.get_node("s1", node.id).content == "before the first commit"
    again.sessions.flush()
    git(path, "fsck", "--strict")
