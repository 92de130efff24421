"""SessionStore: every session of one home; writes, discovery, verify, titles. Its parts: the open
sessions, layout and locks (sessions_cache.py), the change hints (sessions_hints.py), the reads
(sessions_read.py)."""

from __future__ import annotations

import shutil
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..config import StoreSettings, cache_cap_from_env
from ..model import (
    Node,
    OpmemError,
    SessionListing,
    SessionMeta,
    VerifyReport,
    check_session_id,
)
from .listing import Listing, Locations
from .mirror_backlog import HERE, LIVE, ORPHAN, marked_sessions
from .reader import SessionReads
from .session_batch import SessionBatch
from .session_lock import SessionLock
from .session_repo import _DEFAULT, SessionRepo
from .sessions_cache import SessionLocked, flush_at_close
from .sessions_read import SessionQueries
from .verify import verify_session

TitleHook = Callable[[SessionMeta, list[Node]], "str | None"]
__all__ = ["SessionBatch", "SessionLocked", "SessionStore"]
READ_CACHE_CAP = 16  # sessions kept open for lock-free reads (beside the writers' cache)


class SessionStore(SessionQueries):
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
        weakref.finalize(self, flush_at_close, self._cache, self.locks_dir)

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
                self._let_go(session_id, repo)

    def _write_backlog(self, repo: SessionRepo, own_since: int | None = None) -> int:
        """Commit what git misses (a live writer's turn left alone); the marker goes once git has it all."""
        live = self._in_flight(repo.id).live_since()
        skip_from = min((s for s in (live, own_since) if s is not None), default=None)
        made = repo.write_backlog(skip_from)
        if repo.mirror.broken is None and not repo.missing_node_ids(skip_from):
            self._mirror_mark(repo.id).clear()
        return made

    def write_mirror(self, session_id: str, turns: dict[str, tuple[int, str]] | None = None) -> int:
        """Write the git mirror a backlog import left to write (idempotent). Returns commits made.

        turns: filled with node id -> (turn number, commit) for the nodes these commits cover."""
        check_session_id(session_id)
        mark = self._mirror_mark(session_id)
        if mark.state() is None:
            return 0
        if not self.exists(session_id):
            mark.clear()  # deleted meanwhile (or never written): nothing to mirror
            return 0
        was_open = session_id in self.cached_ids()
        with self._session(session_id) as repo:
            repo.mirror.written_turns = turns
            try:
                return self._write_backlog(repo)
            finally:
                repo.mirror.written_turns = None
                if not was_open:  # opened for this only: a backlog's memory stays that of one session
                    self._let_go(session_id, repo)

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
        backend/secrets_purge.py): what waits to be committed is written first.

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
