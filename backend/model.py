"""Typed, frozen records shared by every backend module and handed to the widgets."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
ROLE_LETTER = {"user": "u", "assistant": "a", "tool": "t", "system": "s"}

SESSION_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class OpmemError(Exception):
    """Base of every error the backend raises on purpose; its text is shown to the user."""


class InvalidSessionId(OpmemError, ValueError):
    pass


class SessionNotFound(OpmemError, KeyError):
    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0]) if self.args else "session not found"


class CorruptFile(OpmemError):
    """A stored file that cannot be read; names the path and the problem."""

    def __init__(self, path: Any, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def check_session_id(session_id: object) -> str:
    """Refuse anything that is not a safe folder name, before any path is built."""
    if not isinstance(session_id, str) or not session_id:
        raise InvalidSessionId("invalid session id: empty or not a string")
    if "\x00" in session_id:
        raise InvalidSessionId("invalid session id: contains NUL")
    if len(session_id) > 128:
        raise InvalidSessionId(f"invalid session id: longer than 128 characters ({len(session_id)})")
    if not SESSION_ID_RE.fullmatch(session_id) or session_id in (".", ".."):
        raise InvalidSessionId(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return session_id


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, slots=True)
class Node:
    """One message of a session, exactly as stored in history/NNNNNN-r-<id>.json."""

    id: str
    seq: int
    role: str
    content: str = ""
    parent_id: str | None = None
    called_by: str | None = None
    name: str | None = None
    input: Any = None
    reads: tuple[str, ...] = ()
    created_at: float = 0.0
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def is_tool(self) -> bool:
        # What makes a node hang off the chain is its caller, not its role.
        return self.called_by is not None

    @property
    def file_name(self) -> str:
        return f"{self.seq:06d}-{ROLE_LETTER.get(self.role, 's')}-{self.id}.json"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "seq": self.seq,
            "role": self.role,
            "parent_id": self.parent_id,
            "called_by": self.called_by,
            "name": self.name,
            "content": self.content,
            "input": self.input,
            "reads": list(self.reads),
            "created_at": self.created_at,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: Any = "<node>") -> Node:
        if not isinstance(data, Mapping):
            raise CorruptFile(path, "node file is not a JSON object")
        try:
            node_id = data["id"]
            seq = data["seq"]
            role = data["role"]
        except KeyError as exc:
            raise CorruptFile(path, f"node file lacks the field {exc.args[0]!r}") from None
        if not isinstance(node_id, str) or not node_id:
            raise CorruptFile(path, "node id must be a non-empty string")
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise CorruptFile(path, "node seq must be an integer")
        if role not in ROLES:
            raise CorruptFile(path, f"unknown role {role!r}")
        content = data.get("content")
        if content is None:
            content = ""
        elif not isinstance(content, str):
            content = str(content)
        meta = data.get("metadata") or {}
        if not isinstance(meta, Mapping):
            meta = {"value": meta}
        reads = data.get("reads") or ()
        created = data.get("created_at") or 0.0
        return cls(
            id=node_id,
            seq=seq,
            role=role,
            content=content,
            parent_id=data.get("parent_id") or None,
            called_by=data.get("called_by") or None,
            name=data.get("name"),
            input=data.get("input"),
            reads=tuple(str(r) for r in reads) if isinstance(reads, (list, tuple)) else (),
            created_at=float(created) if isinstance(created, (int, float)) else 0.0,
            metadata=_frozen_map(meta),
        )


META_FIELDS = (
    "id",
    "title",
    "title_source",
    "agent_id",
    "project_id",
    "source",
    "source_ref",
    "created_at",
    "updated_at",
    "head_id",
)


_META_FIELD_SET = frozenset(META_FIELDS)


@dataclass(frozen=True, slots=True)
class SessionMeta:
    """meta.json of a session; `extra` keeps keys this version does not know."""

    id: str
    title: str = ""
    title_source: str = ""
    agent_id: str = ""
    project_id: str = ""
    source: str = "opmem"
    source_ref: Any = None
    created_at: float = 0.0
    updated_at: float = 0.0
    head_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # Derived, not stored in meta.json: filled by listing for display.
    turn_count: int = 0
    preview: str = ""
    path: str = ""

    @property
    def display_title(self) -> str:
        """User/LLM/excerpt title, else an 80-character preview of the first message."""
        if self.title:
            return self.title
        if self.preview:
            return self.preview
        return self.id

    def to_json(self) -> dict[str, Any]:
        data = dict(self.extra)
        data.update(
            id=self.id,
            title=self.title,
            title_source=self.title_source,
            agent_id=self.agent_id,
            project_id=self.project_id,
            source=self.source,
            source_ref=self.source_ref,
            created_at=self.created_at,
            updated_at=self.updated_at,
            head_id=self.head_id,
        )
        return data

    @classmethod
    def from_listing(cls, data: dict[str, Any], session_id: str, path: str) -> SessionMeta:
        """A listing row: meta.json plus the turn count and preview it stores.

        Same result as from_json, written for the listing's 10,000-row loop. The folder name
        is the session's id; a meta.json that says otherwise does not win.
        """
        get = data.get

        def text(value: Any) -> str:
            return value if value.__class__ is str else ""

        def number(value: Any) -> float:
            cls_ = value.__class__
            return float(value) if cls_ is float or cls_ is int else 0.0

        head = get("head_id")
        turns = get("turns", 0)
        return cls(
            session_id,
            text(get("title")),
            text(get("title_source")),
            text(get("agent_id")),
            text(get("project_id")),
            text(get("source")) or "opmem",
            get("source_ref"),
            number(get("created_at")),
            number(get("updated_at")),
            head if head.__class__ is str and head else None,
            MappingProxyType({k: v for k, v in data.items() if k not in _META_FIELD_SET}),
            turns if turns.__class__ is int else 0,
            text(get("preview")),
            path,
        )

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], where: Any = "<meta>", *, fallback_id: str = "", path: str = ""
    ) -> SessionMeta:
        """meta.json as stored; its own id wins over `fallback_id` (the folder name)."""
        if not isinstance(data, Mapping):
            raise CorruptFile(where, "meta.json is not a JSON object")
        sid = data.get("id")
        return cls.from_listing(dict(data), sid if isinstance(sid, str) and sid else fallback_id, path)


@dataclass(frozen=True, slots=True)
class Turn:
    """One user node and what followed it on a branch, up to the next user node.

    Nodes before the first user node (a system preface) belong to turn 1; a branch with no user
    node yet is one Turn numbered 0, which `turn_count` does not count (as git's "turn 0").
    """

    number: int  # 1-based along the branch; 0 for a branch that has no user node yet
    nodes: tuple[Node, ...]  # chain nodes and their tool nodes, in seq order
    commit: str | None = None  # the turn commit whose head is this turn's last node
    fork_heads: tuple[str, ...] = ()  # other leaf heads that branch off inside this turn

    @property
    def user(self) -> Node | None:
        return next((n for n in self.nodes if n.role == "user"), None)

    @property
    def last(self) -> Node:
        chain = [n for n in self.nodes if not n.is_tool]
        return chain[-1] if chain else self.nodes[-1]

    @property
    def tool_nodes(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.is_tool)


def turn_count(turns: Sequence[Turn]) -> int:
    """The number of turns a branch has: its user nodes. The listing's `turn_count` is the same."""
    return sum(1 for turn in turns if turn.number > 0)


@dataclass(frozen=True, slots=True)
class LastTurn:
    """What a replay needs first: a session's last turn on its head's line, and its turn count."""

    meta: SessionMeta
    turn: Turn | None  # None: no node yet
    turn_count: int  # as turn_count(get_turns(...))


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """A session as one read found it (the distillation's collect): meta.json, every node in seq
    order, and each turn of the head's line as its user node id -> (turn number, turn commit), as
    get_turns gives them; None when that line cannot be grouped into turns (a parent cycle)."""

    meta: SessionMeta
    nodes: tuple[Node, ...]
    turn_starts: Mapping[str, tuple[int, str | None]] | None


@dataclass(frozen=True, slots=True)
class TurnCommit:
    """One commit of a session repo as `git log` shows it."""

    oid: str
    turn: int
    head_id: str
    summary: str
    message: str
    time: float
    branches: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Branch:
    name: str  # git ref short name, e.g. main or retry-<id>
    head_id: str
    tip: str  # commit oid
    turns: int
    is_current: bool = False


@dataclass(frozen=True, slots=True)
class SessionListing:
    sessions: tuple[SessionMeta, ...]
    skipped: int = 0
    problems: tuple[str, ...] = ()  # one line per skipped folder: path and reason
    unreadable: tuple[str, ...] = ()  # the skipped folders' session ids


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory record came from; every record carries one.

    `turn` is the turn number along the branch that holds the nodes (None when unknown);
    `commit` the session repo's turn commit that covers them (or a project commit for a
    commit event).
    """

    project_id: str
    session_id: str
    node_ids: tuple[str, ...]
    commit: str | None
    event_time: float
    ingestion_time: float
    turn: int | None = None

    @property
    def pointer(self) -> str:
        """The `session:<id>` pointer every core.md line and recall result ends with."""
        return f"session:{self.session_id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "project_id": self.project_id,
            "session_id": self.session_id,
            "node_ids": list(self.node_ids),
            "turn": self.turn,
            "commit": self.commit,
            "event_time": self.event_time,
            "ingestion_time": self.ingestion_time,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<provenance>") -> Provenance:
        if not isinstance(data, Mapping):
            raise CorruptFile(where, "provenance is not a JSON object")
        node_ids = data.get("node_ids") or ()
        turn = data.get("turn")
        commit = data.get("commit")

        def number(key: str) -> float:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CorruptFile(where, f"provenance.{key} must be a number")
            return float(value)

        return cls(
            project_id=str(data.get("project_id") or ""),
            session_id=str(data.get("session_id") or ""),
            node_ids=tuple(str(n) for n in node_ids) if isinstance(node_ids, (list, tuple)) else (),
            commit=commit if isinstance(commit, str) and commit else None,
            event_time=number("event_time"),
            ingestion_time=number("ingestion_time"),
            turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else None,
        )


@dataclass(frozen=True, slots=True)
class VerifyReport:
    checked: int  # every session examined, the unreadable ones included
    repaired: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()  # sessions whose folder could not be read (each also in problems)
    writing: tuple[str, ...] = ()  # git mirrors a live process is still writing (not problems)

    @property
    def ok(self) -> bool:
        return not self.problems
