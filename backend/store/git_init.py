"""A session's `.git`, written as files: the layout `git init` makes, minus its samples.

pygit2.init_repository took ~30 ms a session under load (a template copied, the config written
and re-read for each key); a first import of 3,000 sessions spent 90 s there. These few folders
and two files are what git and libgit2 need to open the repository (HEAD on the unborn `main`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

# status: the working tree holds every branch's node files (ARCHITECTURE §3); gc: we pack ourselves,
# the git CLI must not gc behind our lock
CONFIG = (
    b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
    b"[status]\n\tshowUntrackedFiles = no\n[gc]\n\tauto = 0\n"
)
FOLDERS = ("objects/info", "objects/pack", "refs/heads", "refs/tags")


def open_session_git(path: Path | str) -> pygit2.Repository:
    """The session folder's own repository. Never one found further up: pygit2 and git search
    upward, and a session without .git inside a home kept in some repository would open that."""
    return pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)


def init_session_git(path: Path) -> pygit2.Repository:
    """A new, empty repository in the session folder `path` (made if missing)."""
    git = Path(path) / ".git"
    for folder in FOLDERS:
        os.makedirs(git / folder, exist_ok=True)
    for name, data in (("config", CONFIG), ("HEAD", b"ref: refs/heads/main\n")):
        with open(git / name, "wb") as handle:
            handle.write(data)
    return open_session_git(path)
