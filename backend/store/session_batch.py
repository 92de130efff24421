"""SessionBatch: one session's writes under its lock (the importers' way to append and commit many nodes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import Node
from .session_repo import SessionRepo

CommitTurn = Callable[[SessionRepo, "str | None"], "str | None"]


class SessionBatch:
    """The writes of `SessionStore.append_message` / `commit_turn` for one session, lock held."""

    def __init__(self, repo: SessionRepo, commit_turn: CommitTurn) -> None:
        self._repo = repo
        self._commit_turn = commit_turn

    def exists(self) -> bool:
        return self._repo.exists()

    def has_node(self, node_id: str) -> bool:
        return self._repo.has_node(node_id)

    def node_ids(self) -> set[str]:
        return {node.id for node in self._repo.nodes()}

    def node(self, node_id: str) -> Node:
        return self._repo.node(node_id)

    @property
    def head(self) -> str | None:
        return self._repo.head

    def append(self, role: str, content: str = "", **fields: Any) -> Node:
        return self._repo.append(role, content, **fields)

    def commit_turn(self, head_id: str | None = None) -> str | None:
        return self._commit_turn(self._repo, head_id)
