"""The mark an agent commit leaves while it writes into the user's repository.

Updating a ref or the index takes a git lock file (`<ref>.lock`, `index.lock`) that is renamed
into place when the write ends. A process killed in between leaves the lock behind, and the
user's next `git commit` refuses to run. Before those writes we record which locks they take;
the next commit in that project (under opmem's commit lock, so no other opmem writer is live)
finds the mark of a write that never finished and removes the locks it left, and only those:
a lock made later than a few seconds after the mark is someone else's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

MARK_NAME = "commit-in-progress.json"
LOCK_WINDOW = 5.0  # seconds after the mark in which a lock can be ours


def _locks_taken(repo: pygit2.Repository) -> list[str]:
    """Lock files (relative to the git dir) that moving HEAD's branch and writing the index take."""
    locks = ["HEAD.lock", "index.lock", "logs/HEAD.lock"]
    try:
        ref = repo.references["HEAD"].target if repo.head_is_unborn else repo.head.name
    except (KeyError, pygit2.GitError):
        ref = None
    if isinstance(ref, str) and ref.startswith("refs/"):
        locks += [f"{ref}.lock", f"logs/{ref}.lock"]
    return locks


@contextmanager
def marked_write(repo: pygit2.Repository, folder: Path) -> Iterator[None]:
    """Mark the commit's git writes as in progress; the mark goes when they end, however they end."""
    mark = folder / MARK_NAME
    tmp = mark.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "locks": _locks_taken(repo)}))
    os.replace(tmp, mark)
    try:
        yield
    finally:
        mark.unlink(missing_ok=True)


def clear_interrupted_write(repo: pygit2.Repository, folder: Path) -> list[str]:
    """Remove the git locks an interrupted agent commit left; the paths removed.

    Call it holding opmem's commit lock for the project: then the mark can only be a dead writer's.
    """
    mark = folder / MARK_NAME
    try:
        marked_at = mark.stat().st_mtime
        locks = json.loads(mark.read_text()).get("locks", [])
    except (OSError, ValueError, AttributeError):
        return []
    git_dir = Path(repo.path)
    removed = []
    for rel in locks if isinstance(locks, list) else []:
        if not isinstance(rel, str) or not rel.endswith(".lock") or ".." in Path(rel).parts:
            continue
        lock = git_dir / rel
        try:
            made = lock.lstat().st_mtime
        except OSError:
            continue
        if marked_at - 1.0 <= made <= marked_at + LOCK_WINDOW:
            lock.unlink(missing_ok=True)
            removed.append(str(lock))
    mark.unlink(missing_ok=True)
    return removed
