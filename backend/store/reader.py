"""Sessions read without any lock: the read path of SessionStore and of the recall tools.

A reader never waits for a writer (an import batch, a turn commit) and never sees half of a
file, because every file it reads is either replaced whole by a rename (meta.json, node
files, refs, HEAD, locations.json) or only ever added (node files; packs, whose .pack is
renamed in before its .idx; loose objects). A node being appended is absent or whole. A
pack merge writes the merged pack before it deletes the old ones, and libgit2 re-reads the
pack folder when an object is not where it looked.

A reader writes nothing and waits for nothing. (SessionStore, not the recall tools, passes an
`on_load` hook that commits what a crashed writer left when nobody holds the session's lock:
see SessionStore._repair_unwaited.)

An open session is kept with a stamp of what moves when it changes: the store's change token
(rewritten after every write call), meta.json (a new inode at every rewrite), history/, HEAD
and the refs. The stamp is taken before reading, so a change during a read shows at the next
one; a read whose stamp moved re-reads only what is new (SessionRepo.refresh).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..model import OpmemError, SessionNotFound
from .session_repo import SessionRepo

Stamp = tuple[object, ...]
OnLoad = Callable[[SessionRepo], bool]  # after a session is first read; True: it changed on disk


class _Entry:
    """One session open for reading, with the stamp it was last brought up to date at."""

    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        self.session_id = session_id
        self.lock = threading.Lock()  # readers of this session in this process take turns
        self.repo: SessionRepo | None = None
        self.stamp: Stamp | None = None

    def up_to_date(self, token: Path | None, on_load: OnLoad | None) -> SessionRepo:
        stamp = _stamp(self.path, token)
        if not (self.path / "meta.json").is_file():
            self.repo = None
            raise SessionNotFound(f"no session {self.session_id!r} in {self.path.parent}")
        repo = self.repo
        if repo is None:
            refuse_links(self.path)
            repo = SessionRepo(self.path, self.session_id, durable=False)
            repo.load()  # raises CorruptFile for a bad meta.json: nothing kept
            self.repo = repo
            if on_load is not None and on_load(repo):  # something was repaired meanwhile: read it
                stamp = _stamp(self.path, token)
                repo.refresh()
        elif stamp != self.stamp:
            repo.refresh()
            if repo.mirror.broken:  # maybe rebuilt meanwhile (`opmem verify`): look again
                repo.mirror.reset()
        self.stamp = stamp
        return repo


class SessionReads:
    """Sessions open for reading, the last `cap` kept warm (a replay or an MCP server asks about
    the same session again and again). Thread-safe: readers of one session take turns on a
    lock of this object only, never on the session's file lock."""

    def __init__(self, cap: int = 8) -> None:
        self.cap = max(1, cap)
        self._open: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def _entry(self, path: Path, session_id: str) -> _Entry:
        key = (session_id, str(path))
        with self._lock:
            entry = self._open.pop(key, None) or _Entry(path, session_id)
            self._open[key] = entry
            while len(self._open) > self.cap:
                self._open.popitem(last=False)
        return entry

    @contextmanager
    def reading(
        self, path: Path, session_id: str, token: Path | None = None, on_load: OnLoad | None = None
    ) -> Iterator[SessionRepo]:
        """The session at `path`, up to date, for reads only; `token`: the store's change token file.

        Raises SessionNotFound when it has no meta.json, CorruptFile when that cannot be read.
        """
        entry = self._entry(Path(path), session_id)
        with entry.lock:
            yield entry.up_to_date(token, on_load)

    def open(self, path: Path, session_id: str, token: Path | None = None) -> SessionRepo:
        """Like `reading`, for a caller that reads from one thread only (the recall tools)."""
        with self.reading(path, session_id, token) as repo:
            return repo

    def seed(self, path: Path, session_id: str, repo: SessionRepo) -> None:
        """Start the session's read copy from `repo` (SessionRepo.read_copy: what a writer just
        wrote, held under the session's lock) instead of parsing every node file at its first
        read; that read refreshes it first, so what was written since is read too."""
        entry = self._entry(Path(path), session_id)
        with entry.lock:
            if entry.repo is None:
                entry.repo, entry.stamp = repo, None

    def is_open(self, path: Path, session_id: str) -> bool:
        with self._lock:
            return (session_id, str(Path(path))) in self._open

    def forget(self, session_id: str) -> None:
        with self._lock:
            for key in [k for k in self._open if k[0] == session_id]:
                del self._open[key]


def _stamp(path: Path, token: Path | None) -> Stamp:
    out: list[object] = [_token(token)]
    git = path / ".git"
    for item in (path / "meta.json", path / "history", git / "HEAD", git / "packed-refs", git / "refs" / "heads"):
        out.append(_stat(item))
    try:
        with os.scandir(git / "refs" / "heads") as entries:
            out.extend(sorted(_stat(Path(e.path)) for e in entries))
    except OSError:
        pass
    return tuple(out)


def _token(token: Path | None) -> bytes:
    if token is None:
        return b""
    try:
        return token.read_bytes()  # a torn read only makes one needless refresh
    except OSError:
        return b""


def _stat(item: Path) -> tuple[str, int, int, int]:
    try:
        st = item.stat()
    except OSError:
        return (item.name, 0, 0, 0)
    return (item.name, st.st_mtime_ns, st.st_size, st.st_ino)


def refuse_links(path: Path) -> None:
    """A session folder (or its history/) that is a symbolic link may lead out of the store:
    neither read through it nor write through it."""
    for link in (path, path / "history"):
        if link.is_symlink():
            raise OpmemError(f"{link}: a symbolic link (to {os.readlink(link)}); opmem does not follow it")
