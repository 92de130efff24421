"""An agent commit killed mid-write leaves git locks; the next commit clears exactly those."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pygit2

from opmem_tui.backend.projects.agent_commit import AgentCommitter
from opmem_tui.backend.projects.commit_marker import MARK_NAME, marked_write
from opmem_tui.backend.projects.repository import OPMEM_DIR, ProjectGit


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "a.txt").write_text("a\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
           "GIT_COMMITTER_EMAIL": "u@x"}  # fmt: skip
    subprocess.run(["git", "-C", str(root), "add", "a.txt"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "first"], check=True, env=env)
    return root


def _interrupted(root: Path) -> Path:
    """What a writer killed after its ref lock was taken leaves: the mark and the lock."""
    repo = pygit2.Repository(str(root))
    folder = root / OPMEM_DIR
    folder.mkdir(exist_ok=True)
    with marked_write(repo, folder):
        (folder / MARK_NAME).rename(folder / "kept.json")  # the finally of a killed process never runs
    (folder / "kept.json").rename(folder / MARK_NAME)
    lock = root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("0" * 40 + "\n")
    return lock


def test_next_commit_run_clears_the_lock_a_killed_commit_left(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    lock = _interrupted(root)
    assert subprocess.run(["git", "-C", str(root), "commit", "--allow-empty", "-q", "-m", "x"],
                          capture_output=True).returncode != 0  # fmt: skip
    removed = AgentCommitter(ProjectGit(root)).recover()
    assert removed == [str(lock)]
    assert not lock.exists()
    assert not (root / OPMEM_DIR / MARK_NAME).exists()
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "commit",
            "--allow-empty",
            "-q",
            "-m",
            "x",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_a_lock_made_long_after_the_mark_is_not_ours(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    lock = _interrupted(root)
    later = time.time() + 60
    os.utime(lock, (later, later))  # the user's own git, running now
    assert AgentCommitter(ProjectGit(root)).recover() == []
    assert lock.exists()


def test_no_mark_no_change(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    assert AgentCommitter(ProjectGit(root)).recover() == []
    assert lock.exists()
