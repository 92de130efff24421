"""The change hints a session store leaves for other processes (the app, a watch, a sync): the
journal names each session written, the store's token and each session's token move after a
write; one that cannot be written is kept to be said by the write's caller (sessions.py)."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path

from .change_journal import ChangeJournal
from .listing import Listing


class ChangeHints:
    """A part of SessionStore (sessions.py sets the fields below in its __init__)."""

    root: Path
    _store_lock: threading.RLock
    _tokens: dict[str, str]
    _listing: Listing
    _hint_failures: list[tuple[Path, str]]
    _hints_said: set[tuple[Path, int | None]]

    @property
    def locks_dir(self) -> Path:
        return self.root / ".locks"

    def _token_path(self, session_id: str) -> Path:
        return self.locks_dir / f"{session_id}.token"

    @property
    def changed_path(self) -> Path:
        return self.root / ".changed"

    @property
    def journal(self) -> ChangeJournal:
        return ChangeJournal(self.root / ".journal")

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
