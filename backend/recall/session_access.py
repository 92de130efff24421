"""Sessions opened for reading only: no lock file, no backfill, no index refresh.

A recall tool must leave the state directory exactly as it found it: it reads sessions
through the store's read path (store/reader.py), which takes no lock and writes nothing.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from ..model import Branch, OpmemError, SessionNotFound, Turn, check_session_id, turn_count
from ..privacy import RedactedSession, redact_text
from ..session_pointers import POINTER_PREFIX
from ..store.reader import SessionReads
from ..store.session_repo import SessionRepo
from .errors import PRIVATE, UNKNOWN_BRANCH, UNKNOWN_SESSION, UNKNOWN_TURN, RecallError, did_you_mean

if TYPE_CHECKING:
    from ..home import Home


def session_choices(home: Home) -> dict[str, str]:
    """{session id: "id title"} of every listed session, for suggestions."""
    try:
        listing = home.sessions.list_sessions()
    except OpmemError:
        return {}
    rules = home.exclusions()  # a private session's title is no suggestion
    return {
        meta.id: f"{meta.id} {redact_text(meta.display_title)}"
        for meta in listing.sessions
        if rules.reason(meta) is None
    }


class SessionReader:
    """Sessions opened read-only through the store's lock-free read path (store/reader.py), the
    last few kept warm between calls (a long-lived MCP server asks about the same session again
    and again); reusing one re-reads only what changed since."""

    def __init__(self, cap: int = 8, *, withheld_too: bool = False) -> None:
        # withheld_too: private and excluded sessions open too -- only for `opmem show`, the
        # machine's own user at its shell; recall and MCP never set it
        self._withheld_too = withheld_too
        self._reads = SessionReads(cap)
        self._shown: dict[str, RedactedSession] = {}  # session id -> its repo read through the gate

    def _redacted(self, repo: SessionRepo) -> SessionRepo:
        shown = self._shown.get(repo.id)
        if shown is None or shown.raw is not repo:
            if len(self._shown) > 64:
                self._shown.clear()
            shown = self._shown[repo.id] = RedactedSession(repo)
        return shown  # type: ignore[return-value]  # the same read methods, secrets masked

    def open(self, home: Home, session_id: str) -> SessionRepo:
        """The session `session_id` (or `session:<id>`, the pointer form; a unique prefix of an id,
        as core.md's short pointers give, or a title), read-only, every text it hands out with its
        secrets masked (backend/privacy). An ambiguous prefix is an error naming the candidates."""
        wanted = session_id.strip()
        if wanted.startswith(POINTER_PREFIX):
            wanted = wanted[len(POINTER_PREFIX) :]
        try:
            check_session_id(wanted)
            path = home.sessions.path_for(wanted)
            token = home.sessions.change_token_path(wanted)
        except OpmemError:
            pass  # not a session id this store could hold
        else:
            repo = None
            with suppress(SessionNotFound):
                repo = self._reads.open(path, wanted, token)
            if repo is not None:
                if not self._withheld_too and home.exclusions().reason(repo.meta()) is not None:
                    raise RecallError(PRIVATE, f"session {wanted!r} is private: kept out of recall")
                return self._redacted(repo)
        named = self._named(home, wanted)
        if named is not None and named != wanted:
            return self.open(home, named)
        raise RecallError(UNKNOWN_SESSION, f"no session {wanted!r}", did_you_mean(wanted, session_choices(home)))

    def _named(self, home: Home, wanted: str) -> str | None:
        """The id a unique prefix or a title names (backend/naming), private sessions left out."""
        from ..naming import AmbiguousName, session_id

        rules = home.exclusions()
        hidden = None if self._withheld_too else (lambda meta: rules.reason(meta) is not None)
        try:
            return session_id(home, wanted, hidden=hidden)
        except AmbiguousName as exc:
            raise RecallError(UNKNOWN_SESSION, str(exc).split(":", 1)[0], exc.candidates) from None
        except OpmemError:
            return None


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
    chosen = next((turn for turn in turns if turn.number == number), None) if number > 0 else None
    if chosen is not None:
        return chosen
    total = turn_count(turns)  # a lone preface (turn 0) is no turn
    span = f"1..{total}" if total else "none: the branch is empty"
    raise RecallError(UNKNOWN_TURN, f"session {repo.id} has no turn {number} on this branch (turns: {span})")
