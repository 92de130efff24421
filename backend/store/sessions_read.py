"""A session store's reads: lock-free (reader.py), they never wait for a writer of the session,
in this process or another, and write nothing but the repairs a first read may do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import (
    Branch,
    LastTurn,
    Node,
    OpmemError,
    SessionMeta,
    SessionSnapshot,
    Turn,
    TurnCommit,
    check_session_id,
    turn_count,
)
from .conversation import turns_from_nodes
from .git_mirror import GIT_ERRORS
from .mirror_backlog import HERE, LIVE, ORPHAN
from .reader import SessionReads
from .session_lock import SessionLockBusy
from .session_repo import SessionRepo
from .sessions_cache import OpenSessions
from .tail import read_last_turn


class SessionQueries(OpenSessions):
    """A part of SessionStore: everything read of one session (sessions.py gives `write_mirror`)."""

    _reads: SessionReads

    if TYPE_CHECKING:

        def write_mirror(self, session_id: str) -> int: ...  # SessionStore's (sessions.py)

    def exists(self, session_id: str) -> bool:
        try:
            return SessionRepo(self.path_for(session_id), session_id).exists()
        except OpmemError:
            return False

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

    def _mirror_first(self, session_id: str) -> None:
        """Reads that need git (branches, log, a commit's view): a mirror this process (or no
        live one) owes is written first; one another process is writing is read as it stands."""
        if self._mirror_mark(session_id).state() in (HERE, ORPHAN):
            try:
                self.write_mirror(session_id)
            except OpmemError:
                pass  # read what git holds; the node files are untouched
