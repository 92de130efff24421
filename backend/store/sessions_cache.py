"""The open sessions of a session store: its folder's layout (locations.json, the lock folder),
each session's thread and file locks, and the LRU cache of SessionRepo a write holds open
(sessions.py builds the store from this, change hints and reads)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pygit2
from filelock import FileLock, Timeout

from ..model import (
    CorruptFile,
    OpmemError,
    SessionNotFound,
    check_session_id,
)
from .files import write_json_atomic
from .listing import Locations
from .mirror_backlog import HERE, LIVE, ORPHAN, MirrorMark
from .reader import refuse_links
from .session_lock import SessionLock, SessionLockBusy
from .session_repo import SessionRepo
from .sessions_hints import ChangeHints
from .writers import InFlight


class SessionLocked(OpmemError):
    """Another process held a session's lock for longer than the store waits."""


class OpenSessions(ChangeHints):
    """A part of SessionStore (sessions.py sets the fields below in its __init__)."""

    cache_cap: int
    pack_threshold: int
    durable: bool
    lock_timeout: float
    _cache: OrderedDict[str, SessionRepo]
    _session_locks: dict[str, threading.RLock]
    _file_locks: dict[str, SessionLock]
    _locks_dir_made: bool
    _locations: Locations

    # ------------------------------------------------------------------ layout

    @property
    def locations_path(self) -> Path:
        return self.root / "locations.json"

    def locations(self) -> dict[str, str]:
        """{session_id: folder} of sessions kept inside projects; re-read only when the file changes."""
        return self._locations.read()

    def _write_locations(self, locations: Mapping[str, str]) -> None:
        self._ensure_locks_dir()
        with self._locations_lock():
            write_json_atomic(self.locations_path, dict(sorted(locations.items())), durable=self.durable)

    @contextmanager
    def _locations_lock(self) -> Iterator[None]:
        path = self.locks_dir / "locations.lock"
        try:
            with FileLock(str(path), timeout=self.lock_timeout):
                yield
        except Timeout:
            raise SessionLocked(_locked_message(path, "locations.json", self.lock_timeout)) from None

    def path_for(self, session_id: str) -> Path:
        check_session_id(session_id)
        try:
            located = self.locations().get(session_id)
        except CorruptFile:
            located = None
        if located:
            return Path(located)
        return self.root / session_id

    def _ensure_locks_dir(self) -> None:
        if self._locks_dir_made and self.locks_dir.is_dir():
            return
        if self._locks_dir_made and not self.root.is_dir():
            # Removed under us (a temporary demo store, a store deleted by hand): not re-created.
            raise OpmemError(f"{self.root}: the session store folder was removed while opmem was using it")
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        self._locks_dir_made = True

    # ------------------------------------------------------------------ locking and cache

    @contextmanager
    def _held(self, session_id: str, wait: bool) -> Iterator[None]:
        """The session's thread lock and file lock, each waited for at most `lock_timeout`
        seconds (then a clear error), or not at all (SessionLockBusy)."""
        thread_lock = self._thread_lock(session_id)
        if not thread_lock.acquire(timeout=self.lock_timeout if wait else 0):
            if not wait:
                raise SessionLockBusy(session_id)
            path = Path(self._file_lock(session_id).path)
            raise SessionLocked(_locked_message(path, f"session {session_id}", self.lock_timeout, thread=True))
        try:
            lock = self._file_lock(session_id)
            try:
                lock.acquire(timeout=self.lock_timeout) if wait else lock.acquire(blocking=False)
            except SessionLockBusy:
                if not wait:
                    raise
                raise SessionLocked(
                    _locked_message(Path(lock.path), f"session {session_id}", self.lock_timeout)
                ) from None
            try:
                yield
            finally:
                lock.release()
        finally:
            thread_lock.release()

    def _thread_lock(self, session_id: str) -> threading.RLock:
        with self._store_lock:
            lock = self._session_locks.get(session_id)
            if lock is None:
                lock = self._session_locks[session_id] = threading.RLock()
            return lock

    def _file_lock(self, session_id: str) -> SessionLock:
        with self._store_lock:
            lock = self._file_locks.get(session_id)
            if lock is None:
                lock = self._file_locks[session_id] = SessionLock(str(self.locks_dir / f"{session_id}.lock"))
            return lock

    def _in_flight(self, session_id: str) -> InFlight:
        return InFlight(self.locks_dir / f"{session_id}.inflight")

    def _mirror_mark(self, session_id: str) -> MirrorMark:
        return MirrorMark(self.locks_dir / f"{session_id}.mirror")

    def mirror_pending(self, session_id: str) -> str | None:
        """Whether the session's git mirror is still to be written (mirror_backlog.py): "here"
        (by this process), "live" (by another), "orphan" (its writer is gone), or None."""
        check_session_id(session_id)
        return self._mirror_mark(session_id).state()

    @contextmanager
    def _session(
        self, session_id: str, *, create: bool = False, location: Path | None = None, wait: bool = True
    ) -> Iterator[SessionRepo]:
        """Hold the session's thread lock and file lock; hand out its (fresh) SessionRepo.

        `wait=False`: raise SessionLockBusy at once when another thread or process holds it."""
        check_session_id(session_id)
        self._ensure_locks_dir()
        with self._held(session_id, wait):
            # named before the writes too: a writer killed before its end's line is still seen
            journal = self.journal
            self._hint_failed(journal.path, journal.append([session_id]))
            repo = self._open(session_id, create=create, location=location)
            token_before = self._tokens.get(session_id)
            try:
                on_disk = self._token_path(session_id).read_text()
            except OSError:
                on_disk = None
            if on_disk is not None and on_disk != token_before:
                repo.refresh()  # another process (or store) wrote since we last looked
                self._tokens[session_id] = on_disk
            mutations_before = repo.mutations
            try:
                yield repo
            finally:
                if repo.log.sync_due():
                    repo.log.sync()
                since = repo.in_flight_since()
                if since != repo.marked_since:  # tell other processes which turn is still being written
                    self._in_flight(session_id).set(repo.writer, since)
                    repo.marked_since = since
                if repo.mutations != mutations_before:
                    self._write_session_token(session_id)
                    self._mark_changed(session_id)

    def _open(self, session_id: str, *, create: bool, location: Path | None) -> SessionRepo:
        with self._store_lock:
            repo = self._cache.get(session_id)
            if repo is not None:
                self._cache.move_to_end(session_id)
                if repo.exists() or create:
                    return repo
                del self._cache[session_id]
            path = Path(location) if location is not None else self.path_for(session_id)
            refuse_links(path)
            repo = SessionRepo(path, session_id, pack_threshold=self.pack_threshold, durable=self.durable)
            if not repo.exists():
                if not create:
                    raise SessionNotFound(f"no session {session_id!r} in {self.root}")
                if location is not None:
                    locations = self.locations()
                    locations[session_id] = str(Path(location).resolve())
                    self._write_locations(locations)
            else:
                mark = self._mirror_mark(session_id)
                pending = mark.state()
                repo.log.keep_read = pending is not None  # its commits come next: their blobs are read now
                try:
                    repo.load()
                finally:
                    repo.log.keep_read = False
                if (repo.path / "history").is_dir() and pending not in (HERE, LIVE):
                    # Consistency: commit nodes the refs do not cover, but not a turn a live writer is
                    # writing, nor a backlog a live process is writing (mirror_backlog.py).
                    skip_from = self._in_flight(session_id).live_since()
                    repo.backfill(skip_from)
                    if pending == ORPHAN and not repo.missing_node_ids(skip_from):
                        mark.clear()
            self._cache[session_id] = repo
            try:
                self._tokens[session_id] = self._token_path(session_id).read_text()
            except OSError:
                self._tokens.pop(session_id, None)
            self._evict()
            return repo

    def _let_go(self, session_id: str, repo: SessionRepo) -> None:
        """A backlog batch's session leaves the writers' cache at its end, with the node bytes it
        kept for commits: a first import's memory stays that of the reads' few warm sessions,
        whatever the history's size (the mirror opens it again). Lossless: its node files' sync is
        the batch end's, and it has no commit whose git index could lag."""
        with self._store_lock:
            if self._cache.get(session_id) is repo:
                del self._cache[session_id]

    def _evict(self) -> None:
        """Close the least recently used sessions past the cap.

        Lossless: everything a SessionRepo holds is on disk (the index follows HEAD first). A
        session with a turn in flight stays open: its writer's marker lives as long as it does.
        """
        over = len(self._cache) - self.cache_cap
        for sid in list(self._cache):
            if over <= 0:
                break
            repo = self._cache[sid]
            if repo.in_flight_since() is not None:
                continue
            del self._cache[sid]
            _flush_quietly(repo)
            over -= 1

    def flush(self) -> None:
        """Bring every open session's git index up to date (done lazily after single commits)."""
        with self._store_lock:
            repos = list(self._cache.items())
        for sid, repo in repos:
            with self._thread_lock(sid):
                _flush_quietly(repo)

    close = flush

    def cached_ids(self) -> list[str]:
        with self._store_lock:
            return list(self._cache)


def _locked_message(path: Path, what: str, timeout: float, *, thread: bool = False) -> str:
    holder = "another thread of this opmem process" if thread else "another opmem process"
    return (
        f"{path}: {what} is locked by {holder} (an import, `opmem watch` or the app writing to it) "
        f"for more than {timeout:g}s; wait for it to finish or stop it, then try again "
        "([store] lock_timeout_s in config.toml sets how long to wait)"
    )


def _flush_quietly(repo: SessionRepo) -> None:
    try:
        repo.flush()
    except (OSError, pygit2.GitError):
        pass  # a sync or index write that fails now is done again at the next commit or close


def flush_at_close(cache: Mapping[str, SessionRepo], locks_dir: Path) -> None:
    """Flush a dropped store's sessions; a session locked right now (maybe by this very thread) is
    left, and so is a store whose folder is gone (nothing is made again inside it)."""
    if not locks_dir.is_dir():
        return
    for sid, repo in list(cache.items()):
        lock = SessionLock(str(locks_dir / f"{sid}.lock"))
        if not repo.path.is_dir():
            continue
        try:
            lock.acquire(blocking=False)
        except (SessionLockBusy, OSError):
            continue
        try:
            _flush_quietly(repo)
        finally:
            lock.release()
