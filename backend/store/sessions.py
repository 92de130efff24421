"""SessionStore: discovery, locations.json, the LRU cache of open sessions, locks, titles."""

from __future__ import annotations

import os
import shutil
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pygit2
from filelock import FileLock, Timeout

from ..config import StoreSettings, cache_cap_from_env
from ..model import (
    Branch,
    CorruptFile,
    LastTurn,
    Node,
    OpmemError,
    SessionListing,
    SessionMeta,
    SessionNotFound,
    SessionSnapshot,
    Turn,
    TurnCommit,
    VerifyReport,
    check_session_id,
    turn_count,
)
from .change_journal import ChangeJournal
from .conversation import turns_from_nodes
from .files import write_json_atomic
from .git_mirror import GIT_ERRORS
from .listing import Listing, Locations
from .mirror_backlog import HERE, LIVE, ORPHAN, MirrorMark, marked_sessions
from .reader import SessionReads, refuse_links
from .session_batch import SessionBatch
from .session_lock import SessionLock, SessionLockBusy
from .session_repo import _DEFAULT, SessionRepo
from .tail import read_last_turn
from .verify import verify_session
from .writers import InFlight

TitleHook = Callable[[SessionMeta, list[Node]], "str | None"]
__all__ = ["SessionBatch", "SessionLocked", "SessionStore"]
READ_CACHE_CAP = 16  # sessions kept open for lock-free reads (beside the writers' cache)


class SessionLocked(OpmemError):
    """Another process held a session's lock for longer than the store waits."""


class SessionStore:
    """Every session of one opmem home. Thread-safe; safe across processes through file locks."""

    def __init__(
        self,
        root: Path,
        *,
        cache_cap: int | None = None,
        pack_threshold: int = StoreSettings().pack_after_turns,
        durable: bool = True,
        lock_timeout: float = StoreSettings().lock_timeout_s,
    ) -> None:
        self.root = Path(root)
        if cache_cap is None:
            cache_cap = cache_cap_from_env() or StoreSettings().session_cache_cap
        self.cache_cap = max(1, cache_cap)
        self.pack_threshold = pack_threshold
        self.durable = durable
        self.lock_timeout = lock_timeout  # seconds a write waits for a session's lock
        self.title_hook: TitleHook | None = None  # set by the distiller when an LLM is configured
        self._cache: OrderedDict[str, SessionRepo] = OrderedDict()
        self._tokens: dict[str, str] = {}  # session id -> change token we last saw or wrote
        self._session_locks: dict[str, threading.RLock] = {}
        self._file_locks: dict[str, SessionLock] = {}  # used only under the session's thread lock
        self._locks_dir_made = False
        self._store_lock = threading.RLock()
        self._locations = Locations(self.root / "locations.json")
        self._listing = Listing(self.root, self._locations, self.changed_path)
        self._reads = SessionReads(min(self.cache_cap, READ_CACHE_CAP))
        self._hint_failures: list[tuple[Path, str]] = []  # not yet taken by take_hint_failures
        self._hints_said: set[tuple[Path, int | None]] = set()  # each (file, errno) said once a process
        # When the store is dropped, or at exit: the index of every open session follows its HEAD.
        weakref.finalize(self, _flush_at_close, self._cache, self.locks_dir)

    # ------------------------------------------------------------------ layout

    @property
    def locks_dir(self) -> Path:
        return self.root / ".locks"

    @property
    def locations_path(self) -> Path:
        return self.root / "locations.json"

    @property
    def changed_path(self) -> Path:
        return self.root / ".changed"

    @property
    def journal(self) -> ChangeJournal:
        return ChangeJournal(self.root / ".journal")

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

    def _ensure_locks_dir(self) -> None:
        if self._locks_dir_made and self.locks_dir.is_dir():
            return
        if self._locks_dir_made and not self.root.is_dir():
            # Removed under us (a temporary demo store, a store deleted by hand): not re-created.
            raise OpmemError(f"{self.root}: the session store folder was removed while opmem was using it")
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        self._locks_dir_made = True

    def path_for(self, session_id: str) -> Path:
        check_session_id(session_id)
        try:
            located = self.locations().get(session_id)
        except CorruptFile:
            located = None
        if located:
            return Path(located)
        return self.root / session_id

    def _mark_changed(self, *session_ids: str) -> None:
        """Tell other processes: the journal names the sessions written, then the token moves."""
        self.root.mkdir(parents=True, exist_ok=True)
        journal = self.journal
        self._hint_failed(journal.path, journal.append(session_ids))
        self._hint_failed(self.changed_path, _write_token(self.changed_path, uuid.uuid4().hex))
        self._listing.forget()

    def _write_session_token(self, session_id: str) -> None:
        token = uuid.uuid4().hex
        failed = _write_token(self._token_path(session_id), token)
        if failed is None:
            self._tokens[session_id] = token
        self._hint_failed(self._token_path(session_id), failed)

    def _hint_failed(self, path: Path, error: OSError | None) -> None:
        """Keep a change hint that could not be written, to be said by whoever runs the write.

        The data written is whole either way; a reader that misses the hint rescans later."""
        if error is None:
            return
        key = (path, error.errno)
        with self._store_lock:
            if key in self._hints_said:
                return
            self._hints_said.add(key)
            self._hint_failures.append(
                (
                    path,
                    f"cannot write: {error.strerror or error}; the sessions written are whole, but other "
                    "opmem processes (the app, a watch, a sync) may not see the change until they rescan",
                )
            )

    def take_hint_failures(self) -> list[tuple[Path, str]]:
        """The change hints (the journal, the change tokens) that could not be written since the
        last call, each (file, problem), each file and error once a process: a write's caller says them."""
        with self._store_lock:
            taken, self._hint_failures = self._hint_failures, []
        return taken

    # ------------------------------------------------------------------ locking and cache

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

    def _token_path(self, session_id: str) -> Path:
        return self.locks_dir / f"{session_id}.token"

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
                repo.load()
                mark = self._mirror_mark(session_id)
                pending = mark.state()
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

    # ------------------------------------------------------------------ writes

    def append_message(
        self,
        session_id: str,
        role: str,
        content: str = "",
        *,
        parent_id: str | None = _DEFAULT,
        called_by: str | None = None,
        name: str | None = None,
        input: Any = None,
        reads: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        node_id: str | None = None,
        created_at: float | None = None,
        session_meta: Mapping[str, Any] | None = None,
        location: Path | None = None,
    ) -> Node:
        with self._session(session_id, create=True, location=location) as repo:
            return repo.append(
                role,
                content,
                parent_id=parent_id,
                called_by=called_by,
                name=name,
                input=input,
                reads=reads,
                metadata=metadata,
                node_id=node_id,
                created_at=created_at,
                session_meta=session_meta,
            )

    def commit_turn(self, session_id: str, head_id: str | None = None) -> str | None:
        with self._session(session_id) as repo:
            return self._commit_turn(repo, head_id)

    def _commit_turn(self, repo: SessionRepo, head_id: str | None) -> str | None:
        if self._mirror_mark(repo.id).state() is not None:
            # The older turns first, each its own commit (else this commit would take them all in).
            self._write_backlog(repo, repo.in_flight_since())
        had_title = repo.raw_meta().get("title_source") in ("user", "llm")
        oid = repo.commit_turn(head_id)
        if oid and self.title_hook is not None and not had_title:
            self._apply_title_hook(repo)
        return oid

    @contextmanager
    def batch(
        self,
        session_id: str,
        *,
        location: Path | None = None,
        defer_mirror: bool = False,
        sync_later: Callable[[Callable[[], None]], None] | None = None,
    ) -> Iterator[SessionBatch]:
        """Many writes to one session under one lock (an importer writing a whole file).

        Other store calls for the same session must wait until the batch ends. `defer_mirror`
        (a backlog import): the batch's nodes are committed later, by `write_mirror`
        (mirror_backlog.py); this process promises it before the batch's first node file.
        `sync_later` (a node_log.SyncWorker's submit; with defer_mirror only): the batch end's sync
        runs there; the caller waits for it before reporting the nodes written.
        """
        with self._session(session_id, create=True, location=location) as repo:
            repo.begin_group()
            claim = self._mirror_mark(session_id).claim if defer_mirror else None
            batch = SessionBatch(repo, self._commit_turn, before_write=claim)
            try:
                yield batch
            finally:
                if defer_mirror and batch.wrote:
                    repo.defer_mirror()
                # Only a backlog's: turn commits name node files, which are synced before them.
                repo.end_group(sync_later if defer_mirror else None)
            if defer_mirror and batch.wrote:  # a backlog is read next (listing, search index): from memory
                self._reads.seed(repo.path, session_id, repo.read_copy())

    def _write_backlog(self, repo: SessionRepo, own_since: int | None = None) -> int:
        """Commit what git misses (a live writer's turn left alone); the marker goes once git has it all."""
        live = self._in_flight(repo.id).live_since()
        skip_from = min((s for s in (live, own_since) if s is not None), default=None)
        made = repo.write_backlog(skip_from)
        if repo.mirror.broken is None and not repo.missing_node_ids(skip_from):
            self._mirror_mark(repo.id).clear()
        return made

    def write_mirror(self, session_id: str) -> int:
        """Write the git mirror a backlog import left to write (idempotent). Returns commits made."""
        check_session_id(session_id)
        mark = self._mirror_mark(session_id)
        if mark.state() is None:
            return 0
        if not self.exists(session_id):
            mark.clear()  # deleted meanwhile (or never written): nothing to mirror
            return 0
        with self._session(session_id) as repo:
            return self._write_backlog(repo)

    def pending_mirrors(self) -> list[str]:
        """Sessions whose mirror is still to be written, oldest first (mirror_backlog.py)."""
        return marked_sessions(self.locks_dir)

    def owed_mirrors(self) -> list[str]:
        """Sessions whose mirror this process promised and has not written (a backlog import's,
        a batch that failed midway included)."""
        return [sid for sid in self.pending_mirrors() if self._mirror_mark(sid).state() == HERE]

    def adopt_mirrors(self) -> list[str]:
        """The mirrors earlier processes left unfinished, claimed by this one (which will write them)."""
        adopted = []
        for sid in self.pending_mirrors():
            try:
                mark = self._mirror_mark(sid)
                if mark.state() == ORPHAN:
                    mark.claim()
                    adopted.append(sid)
            except (OpmemError, OSError):
                continue
        return adopted

    def _mirror_first(self, session_id: str) -> None:
        """Reads that need git (branches, log, a commit's view): a mirror this process (or no
        live one) owes is written first; one another process is writing is read as it stands."""
        if self._mirror_mark(session_id).state() in (HERE, ORPHAN):
            try:
                self.write_mirror(session_id)
            except OpmemError:
                pass  # read what git holds; the node files are untouched

    def _apply_title_hook(self, repo: SessionRepo) -> None:
        try:
            title = self.title_hook(repo.meta(), repo.get_branch()) if self.title_hook else None
        except Exception:  # an optional LLM must never break a commit
            return
        if title and repo.raw_meta().get("title_source") != "user":
            repo.update_meta({"title": str(title)[:200], "title_source": "llm"})

    def update_session(self, session_id: str, **fields: Any) -> SessionMeta:
        with self._session(session_id) as repo:
            if "title" in fields and "title_source" not in fields:
                fields["title_source"] = "user"
            repo.update_meta(fields)
            self._mark_changed(session_id)
            return repo.meta()

    def rename_session(self, session_id: str, title: str) -> SessionMeta:
        title = " ".join(str(title).split())
        if not title:
            raise OpmemError("a session title cannot be empty")
        return self.update_session(session_id, title=title, title_source="user")

    def switch_head(self, session_id: str, node_id: str) -> None:
        with self._session(session_id) as repo:
            repo.set_head(node_id)
            self._mark_changed(session_id)

    def delete_session(self, session_id: str) -> None:
        """The only way anything is deleted: the folder and its locations.json entry."""
        with self._session(session_id) as repo:
            path = repo.path
            with self._store_lock:
                self._cache.pop(session_id, None)
            shutil.rmtree(path)
            locations = self.locations()
            if session_id in locations:
                del locations[session_id]
                self._write_locations(locations)
            self._token_path(session_id).unlink(missing_ok=True)
            self._mirror_mark(session_id).clear()
            self._tokens.pop(session_id, None)
        self._mark_changed(session_id)

    @contextmanager
    def rewriting(self, session_id: str) -> Iterator[SessionRepo]:
        """The session's write lock, for rewriting its files in place (the privacy purge,
        backend/privacy/purge.py): what waits to be committed is written first.

        Refused while another process has a turn in flight (it would commit what it holds in
        memory). Afterwards the copies of the session this store holds open are dropped (the next
        use reads the files again), and other processes are told through the change token."""
        with self._session(session_id) as repo:
            if self._in_flight(session_id).live_since() is not None:
                raise SessionLocked(
                    f"session {session_id}: another opmem process is writing a turn of it right now "
                    "(an import, `opmem watch` or the app); try again when it is done"
                )
            repo.flush()
            try:
                yield repo
            finally:
                with self._store_lock:
                    self._cache.pop(session_id, None)
                self._reads.forget(session_id)
                self._write_session_token(session_id)
                self._mark_changed(session_id)

    def pack(self, session_id: str) -> int:
        with self._session(session_id) as repo:
            return repo.pack()

    def pack_all(self) -> int:
        """Pack every session repo (the daily sleep calls this)."""
        packed = 0
        for meta in self.list_sessions().sessions:
            try:
                if self.pack(meta.id):
                    packed += 1
            except OpmemError:
                continue
        return packed

    # ------------------------------------------------------------------ reads

    def exists(self, session_id: str) -> bool:
        try:
            return SessionRepo(self.path_for(session_id), session_id).exists()
        except OpmemError:
            return False

    # Every read below is lock-free (reader.py): it never waits for a writer of the session,
    # in this process or another, and writes nothing.

    @contextmanager
    def _reading(self, session_id: str) -> Iterator[SessionRepo]:
        check_session_id(session_id)
        path = self.path_for(session_id)
        with self._reads.reading(path, session_id, self._token_path(session_id), self._repair_unwaited) as repo:
            yield repo

    def _repair_unwaited(self, repo: SessionRepo) -> bool:
        """On a session's first read: what opening it for a write would repair (a folder without
        .git, nodes of a crashed writer that git misses) is done now, through that very path,
        if no one holds the session's lock; a holder is a writer whose open repairs it. Never waits."""
        if self._mirror_mark(repo.id).state() in (HERE, LIVE):
            return False  # a backlog whose mirror a live process is writing: read from the node files
        try:
            if repo.mirror.exists() and not repo.missing_node_ids(self._in_flight(repo.id).live_since()):
                return False
        except GIT_ERRORS as exc:  # a broken mirror: reads go on without it, `opmem verify` rebuilds it
            repo.mirror.failed(exc)
            return False
        try:
            with self._session(repo.id, wait=False):
                return True
        except SessionLockBusy:
            return False
        except (OpmemError, OSError) as exc:  # said, never hidden: the node files stay as they are
            detail = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.filename else str(exc)
            repo.mirror.problems.append(
                f"{repo.path}: the repair on first read (committing what git misses) failed: {detail}; "
                "the session reads from its node files; `opmem verify` repairs it"
            )
            return False

    def change_token_path(self, session_id: str) -> Path:
        """A file rewritten after every write call to the session (read by SessionReads)."""
        check_session_id(session_id)
        return self._token_path(session_id)

    def has_node(self, session_id: str, node_id: str) -> bool:
        with self._reading(session_id) as repo:
            return repo.has_node(node_id)

    def get_meta(self, session_id: str) -> SessionMeta:
        with self._reading(session_id) as repo:
            return repo.meta()

    def get_nodes(self, session_id: str) -> list[Node]:
        with self._reading(session_id) as repo:
            return repo.nodes()

    def get_node(self, session_id: str, node_id: str) -> Node:
        with self._reading(session_id) as repo:
            return repo.node(node_id)

    def get_branch(self, session_id: str, head_id: str | None = None) -> list[Node]:
        with self._reading(session_id) as repo:
            return repo.get_branch(head_id)

    def get_turns(self, session_id: str, head_id: str | None = None) -> list[Turn]:
        with self._reading(session_id) as repo:
            return repo.turns(head_id)

    def snapshot(self, session_id: str) -> SessionSnapshot:
        """get_meta, get_nodes and the head line's turn_starts from one read: every read first checks
        that the session is up to date (the change token and a dozen stats), here once, not three times."""
        with self._reading(session_id) as repo:
            try:
                starts: dict[str, tuple[int, str | None]] | None = repo.turn_starts()
            except OpmemError:  # what get_turns would raise (a parent cycle): the caller may try other lines
                starts = None
            return SessionSnapshot(repo.meta(), tuple(repo.nodes()), starts)

    def turn_starts(self, session_id: str, head_id: str | None = None) -> dict[str, tuple[int, str | None]]:
        """Each turn's user node id -> (turn number, turn commit), as get_turns would give them."""
        with self._reading(session_id) as repo:
            return repo.turn_starts(head_id)

    def head(self, session_id: str) -> str | None:
        with self._reading(session_id) as repo:
            return repo.head

    def leaves(self, session_id: str) -> list[str]:
        with self._reading(session_id) as repo:
            return repo.leaves()

    def branches(self, session_id: str) -> list[Branch]:
        self._mirror_first(session_id)
        with self._reading(session_id) as repo:
            return repo.branches()

    def session_commits(self, session_id: str, limit: int = 100) -> list[TurnCommit]:
        self._mirror_first(session_id)
        with self._reading(session_id) as repo:
            return repo.session_commits(limit)

    def turn_view(self, session_id: str, commit: str) -> list[Node]:
        self._mirror_first(session_id)
        with self._reading(session_id) as repo:
            return repo.turn_view(commit)

    def last_turn(self, session_id: str) -> LastTurn:
        """The last turn on the session's head line and its turn count, fast when the session is not open.

        For a replay's first paint: a session not open for reading yet is read without parsing
        every node file (tail.py); opening it (get_turns) does the rest. Same result as
        `get_turns(session_id)[-1]` and `turn_count(get_turns(session_id))`.
        """
        check_session_id(session_id)
        path = self.path_for(session_id)
        if not self._reads.is_open(path, session_id):
            in_flight, mark = self._in_flight(session_id), self._mirror_mark(session_id)

            def live_since() -> int | None:  # a backlog a live process is writing counts as a live writer
                return 0 if mark.state() in (HERE, LIVE) else in_flight.live_since()

            quick = read_last_turn(path, session_id, live_since)
            if quick is not None:
                return quick
        with self._reading(session_id) as repo:
            turns = repo.turns()
            return LastTurn(repo.meta(), turns[-1] if turns else None, turn_count(turns))

    def turns_at(self, session_id: str, commit: str) -> list[Turn]:
        """The conversation as it stood at a commit, as turns (read-only; moves no file)."""
        return turns_from_nodes(self.turn_view(session_id, commit))

    def problems(self, session_id: str) -> list[str]:
        with self._reading(session_id) as repo:
            return list(repo.problems)

    # ------------------------------------------------------------------ discovery

    def list_sessions(self, *, rescan: bool = False) -> SessionListing:
        """Every valid session, newest `updated_at` first; invalid folders are counted, not fatal.

        Warm calls cost a few stats. `rescan=True` re-reads every meta.json, for folders another
        program (not opmem) may have edited.
        """
        return self._listing.read(rescan=rescan)

    # ------------------------------------------------------------------ verify

    def verify(self, *, repair: bool = True) -> VerifyReport:
        """Check every session: meta, node files, git mirror; backfill what git misses, rebuild a broken mirror.

        Nodes a live writer has not committed yet are not missing. With `repair`, every
        session's index is rewritten too, so `git status` in it is quiet afterwards.
        """
        listing = self.list_sessions()
        repaired: list[str] = []
        problems: list[str] = list(listing.problems)
        writing: list[str] = []
        for meta in listing.sessions:
            try:
                with self._session(meta.id) as repo:
                    mark = self._mirror_mark(repo.id)
                    verify_session(
                        repo,
                        self._in_flight(repo.id),
                        repair,
                        repaired,
                        problems,
                        mark.state() in (HERE, LIVE),
                        writing,
                    )
                    if repair and mark.state() == ORPHAN and not repo.missing_node_ids():
                        mark.clear()
            except OpmemError as exc:
                problems.append(str(exc))
        examined = len(listing.sessions) + len(listing.unreadable)
        return VerifyReport(
            examined, tuple(repaired), tuple(problems), unreadable=listing.unreadable, writing=tuple(writing)
        )


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


def _flush_at_close(cache: Mapping[str, SessionRepo], locks_dir: Path) -> None:
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


def _write_token(path: Path, token: str) -> OSError | None:
    """Overwrite a fixed-length change token in place: a hint for other processes, no new inode.
    Returns the error that kept it from being written, if any."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    except OSError as exc:
        return exc
    try:
        os.pwrite(fd, token.encode(), 0)
        return None
    except OSError as exc:
        return exc
    finally:
        os.close(fd)
