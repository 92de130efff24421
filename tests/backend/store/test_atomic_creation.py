"""A session folder appears whole or not at all: a writer killed while creating it leaves no
session without meta.json (which the listing would report as broken for good)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from opmem_tui.backend.home import Home

from .conftest import git

CHILD = textwrap.dedent(
    """
    import os, sys
    from opmem_tui.backend.home import Home
    from opmem_tui.backend.store import session_repo

    real = session_repo.init_session_git
    def init_then_die(path):
        real(path)
        os._exit(9)  # killed between `git init` and meta.json
    session_repo.init_session_git = init_then_die
    Home(sys.argv[1]).sessions.append_message("s1", "user", "never acknowledged")
    """
)


def test_a_writer_killed_while_creating_a_session_leaves_no_broken_folder(tmp_path) -> None:
    home = Home(tmp_path / "home")
    done = subprocess.run([sys.executable, "-c", CHILD, str(home.path)], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    listing = home.sessions.list_sessions(rescan=True)
    assert listing.problems == () and listing.sessions == ()
    node = home.sessions.append_message("s1", "user", "the next run")  # recovers, hidden leftover gone
    assert home.sessions.commit_turn("s1")
    assert [p.name for p in home.sessions.root.iterdir() if p.name.startswith(".s1")] == []
    assert Home(home.path).sessions.get_node("s1", node.id).content == "the next run"
    home.sessions.flush()
    git(home.sessions.path_for("s1"), "fsck", "--strict")


def test_a_half_created_folder_from_an_older_writer_is_replaced_on_the_next_write(tmp_path) -> None:
    home = Home(tmp_path / "home")
    half = home.sessions_dir / "s1"
    (half / "history").mkdir(parents=True)
    (half / ".git").mkdir()  # half a `git init`
    assert home.sessions.list_sessions(rescan=True).problems  # reported until written again
    home.sessions.append_message("s1", "user", "hello")
    assert home.sessions.commit_turn("s1")
    assert home.sessions.list_sessions(rescan=True).problems == ()
    home.sessions.flush()
    git(half, "fsck", "--strict")


def test_an_existing_folder_with_other_files_is_kept(tmp_path) -> None:
    home = Home(tmp_path / "home")
    folder = home.sessions_dir / "s1"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("the user's")
    home.sessions.append_message("s1", "user", "hello")
    assert (folder / "notes.txt").read_text() == "the user's"
    assert (folder / "meta.json").is_file()


def test_a_batch_makes_the_new_session_folder_durable_once_before_it_ends(tmp_path, monkeypatch) -> None:
    """The rename into sessions/ is fsynced with the batch's node files, not on its own at creation."""
    from opmem_tui.backend.store import session_repo

    home = Home(tmp_path / "home")
    synced: list[str] = []
    real = session_repo.fsync_dir

    def recording(path) -> None:
        synced.append(str(path))
        real(path)

    monkeypatch.setattr(session_repo, "fsync_dir", recording)
    root = str(home.sessions.root)
    with home.sessions.batch("b1") as batch:
        batch.append("user", "first", node_id="n1")
        batch.append("assistant", "reply", node_id="n2")
        assert root not in synced  # not yet: the batch end does it
    assert synced.count(root) == 1
    home.sessions.append_message("s2", "user", "outside a batch")
    assert synced.count(root) == 2  # a session created outside a batch: synced at once
