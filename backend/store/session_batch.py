"""SessionBatch: one session's writes under its lock (the importers' way to append and commit many nodes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model import Node
from .session_repo import SessionRepo

CommitTurn = Callable[[SessionRepo, "str | None"], "str | None"]


class SessionBatch:
    """The writes of `SessionStore.append_message` / `commit_turn` for one session, lock held."""

    def __init__(
        self, repo: SessionRepo, commit_turn: CommitTurn, before_write: Callable[[], object] | None = None
    ) -> None:
        self._repo = repo
        self._commit_turn = commit_turn
        self._before_write = before_write  # once, before the batch's first node file
        self.wrote = False

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
        node_id = fields.get("node_id")
        if not self.wrote and not (node_id is not None and self._repo.has_node(node_id)):
            if self._before_write is not None:
                self._before_write()
            self.wrote = True
        return self._repo.append(role, content, **fields)

    def set_head(self, node_id: str) -> None:
        self._repo.set_head(node_id)

    def commit_turn(self, head_id: str | None = None) -> str | None:
        return self._commit_turn(self._repo, head_id)
