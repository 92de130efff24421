"""Sessions opened for reading only: no lock file, no backfill, no index refresh.

The store's own accessors keep sessions consistent as they read (file locks, commits for
nodes git misses). A recall tool must leave the state directory exactly as it found it, so it
opens the session folder directly and reads what is there.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

from ..home import Home
from ..model import Branch, OpmemError, Turn, check_session_id
from ..store.session_repo import SessionRepo
from .errors import UNKNOWN_BRANCH, UNKNOWN_SESSION, UNKNOWN_TURN, RecallError, did_you_mean

POINTER_PREFIX = "session:"


def session_choices(home: Home) -> dict[str, str]:
    """{session id: "id title"} of every listed session, for suggestions."""
    try:
        listing = home.sessions.list_sessions()
    except OpmemError:
        return {}
    return {meta.id: f"{meta.id} {meta.display_title}" for meta in listing.sessions}


class SessionReader:
    """Sessions opened read-only, the last few kept warm between calls (a long-lived MCP server
    asks about the same session again and again). Reusing one re-reads only what changed since:
    meta.json, new node files, new refs (SessionRepo.refresh, which writes nothing)."""

    def __init__(self, cap: int = 8) -> None:
        self.cap = cap
        self._open: OrderedDict[str, tuple[SessionRepo, tuple]] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, home: Home, session_id: str) -> SessionRepo:
        """The session `session_id` (or `session:<id>`, the pointer form), read-only."""
        wanted = session_id.strip()
        if wanted.startswith(POINTER_PREFIX):
            wanted = wanted[len(POINTER_PREFIX) :]
        try:
            check_session_id(wanted)
            path = home.sessions.path_for(wanted)
            found = (path / "meta.json").is_file()
        except OpmemError:
            found = False
        if not found:
            raise RecallError(UNKNOWN_SESSION, f"no session {wanted!r}", did_you_mean(wanted, session_choices(home)))
        key = f"{wanted}\x00{path}"
        stamp = _stamp(path)
        with self._lock:
            held = self._open.pop(key, None)
            if held is None:
                repo = SessionRepo(path, wanted, durable=False)
                repo.load()
            else:
                repo, seen = held
                if seen != stamp:
                    repo.refresh()
            self._open[key] = (repo, stamp)
            while len(self._open) > self.cap:
                self._open.popitem(last=False)
        return repo


def _stamp(path: Path) -> tuple[tuple[str, int, int, int], ...]:
    """What changes when a session changes: meta.json, the history folder, HEAD and the refs.

    Node files are only ever added (the folder's mtime moves); refs are rewritten in place
    (their own mtime moves). Taken before reading, so a change during the read shows next time.
    """
    out: list[tuple[str, int, int, int]] = []
    git = path / ".git"
    for item in (path / "meta.json", path / "history", git / "HEAD", git / "packed-refs", git / "refs" / "heads"):
        out.append(_stat(item))
    try:
        with os.scandir(git / "refs" / "heads") as entries:
            out.extend(sorted(_stat(Path(e.path)) for e in entries))
    except OSError:
        pass
    return tuple(out)


def _stat(item: Path) -> tuple[str, int, int, int]:
    try:
        st = item.stat()
    except OSError:
        return (item.name, 0, 0, 0)
    return (item.name, st.st_mtime_ns, st.st_size, st.st_ino)


def branch_head(repo: SessionRepo, branches: list[Branch], branch: str | None) -> tuple[str | None, str]:
    """(head node id, branch name) for a branch name or a head node id; None: the session's head."""
    if branch is None:
        current = next((b for b in branches if b.is_current), None)
        return None, current.name if current else "main"
    for item in branches:
        if item.name == branch:
            return item.head_id or None, item.name
    if repo.has_node(branch):
        return branch, _name_of_head(branches, branch)
    raise RecallError(
        UNKNOWN_BRANCH,
        f"session {repo.id} has no branch or node {branch!r}",
        did_you_mean(branch, [b.name for b in branches]),
    )


def _name_of_head(branches: list[Branch], head: str) -> str:
    return next((b.name for b in branches if b.head_id == head), head)


def pick_turn(repo: SessionRepo, turns: list[Turn], number: int) -> Turn:
    if 1 <= number <= len(turns):
        return turns[number - 1]
    span = f"1..{len(turns)}" if turns else "none: the branch is empty"
    raise RecallError(UNKNOWN_TURN, f"session {repo.id} has no turn {number} on this branch (turns: {span})")
