"""A home kept inside some git repository (a dotfiles or project repo): a session folder whose own
.git is missing is never read as that repository (pygit2 and git search upward by default)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.git_mirror import open_session_git
from opmem_tui.backend.sync import Sync

from .helpers import T0, add_turn, bare_remote, git, machine_home, refs_of


def enclosing_repo(path: Path) -> str:
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", str(path))
    (path / "dotfile").write_text("the user's own file\n")
    git("-C", str(path), "add", "dotfile")
    git("-C", str(path), "-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit", "-qm", "mine")
    return git("-C", str(path), "rev-parse", "HEAD").strip()


def test_open_session_git_never_opens_an_enclosing_repository(tmp_path: Path) -> None:
    enclosing_repo(tmp_path / "outer")
    folder = tmp_path / "outer" / "home" / "sessions" / "s1"
    folder.mkdir(parents=True)
    with pytest.raises(pygit2.GitError):
        open_session_git(folder)
    assert pygit2.Repository(str(folder)).workdir.rstrip("/").endswith("outer")  # what it guards against


def test_sync_does_not_push_the_enclosing_repository_as_a_session(tmp_path: Path) -> None:
    theirs = enclosing_repo(tmp_path / "outer")
    remote = bare_remote(tmp_path / "remote.git")
    home = machine_home(tmp_path / "outer" / "home", "laptop", str(remote))
    add_turn(home, "s1", "a question", "an answer", at=T0)
    add_turn(home, "s2", "another", "reply", at=T0 + 5)
    shutil.rmtree(home.path / "sessions" / "s1" / ".git")
    report = Sync(Home(home.path, durable=False)).run()
    pushed = refs_of(remote)
    assert theirs not in pushed.values()
    assert not any(name.startswith("refs/opmem/sessions/s1/") for name in pushed)
    assert any(name.startswith("refs/opmem/sessions/s2/") for name in pushed)
    assert any("s1" in problem for problem in report.problems)
    assert git("-C", str(tmp_path / "outer"), "rev-parse", "HEAD").strip() == theirs
