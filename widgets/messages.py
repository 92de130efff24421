"""Messages the pane widgets post up to the screen; the screen does the backend calls."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class SessionHighlighted(Message):
    """The session-list cursor moved onto a session (None: the list is empty)."""

    session_id: str | None


@dataclass
class SessionChosen(Message):
    """Enter on a session: open it in the replay pane and focus it."""

    session_id: str


@dataclass
class SearchRequested(Message):
    """`?words` typed in the session filter: search every message for the words instead."""

    query: str


@dataclass
class TurnShown(Message):
    """The replay pane now shows this turn (1-based) of the session."""

    session_id: str
    number: int
    total: int


@dataclass
class BranchPickRequested(Message):
    """`b` on a turn that has forks."""

    session_id: str
    number: int
    fork_heads: tuple[str, ...]


@dataclass
class HistoryRequested(Message):
    """Open the one-line-per-commit history of the session."""

    session_id: str


@dataclass
class ProjectHighlighted(Message):
    project_id: str | None


@dataclass
class CommitHighlighted(Message):
    project_id: str
    oid: str


@dataclass
class MoreCommitsWanted(Message):
    """The commit-log cursor neared the end of what is loaded."""

    project_id: str
    loaded: int


@dataclass
class LinkedTurnChosen(Message):
    """Enter on a commit that a session turn made: jump to that turn."""

    session_id: str
    turn: int | None
    commit: str | None = None
    head_id: str = ""  # the turn's last node, when the link knows it
    node_id: str = ""  # a message to put the cursor on (a search hit, a memory record's source)


@dataclass
class BlameRequested(Message):
    """`b` on a file of a commit's diff: show who wrote each line of it (its blame)."""

    path: str  # repo-relative
    commit: str = ""  # the commit on screen
