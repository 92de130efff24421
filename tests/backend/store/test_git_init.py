"""A session's .git is written as files (store/git_init.py), not by `git init`: the git CLI reads
it as its own, and the session's commits land on `main` exactly as before."""

from __future__ import annotations

from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn, git


def test_a_new_session_repo_is_a_repository_git_reads_as_its_own(store: SessionStore) -> None:
    store.append_message("s1", "user", "hello")
    repo = store.path_for("s1")
    assert git(repo, "rev-parse", "--git-dir").strip() == ".git"  # its own, not one found further up
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(repo, "config", "status.showUntrackedFiles").strip() == "no"
    assert git(repo, "config", "gc.auto").strip() == "0"
    assert git(repo, "status", "--porcelain") == ""


def test_its_turn_commits_are_on_main_and_fsck_strict_is_clean(store: SessionStore) -> None:
    add_turn(store, "s1", "first question", "first answer", tools=2)
    add_turn(store, "s1", "second question", "second answer")
    repo = store.path_for("s1")
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(repo, "log", "--format=%s", "main").splitlines() == [
        "turn 2: second question",
        "turn 1: first question",
    ]
    git(repo, "fsck", "--strict")
