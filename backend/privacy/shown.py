"""Sessions as they are handed out: every text read through the privacy gate.

The raw store stays the faithful record; what leaves it for a reader other than the replay (a
recall tool, an MCP reply, the CLI) is read through `RedactedSession`, which masks the secrets
of each node (once per node: nodes are written once and never change), of the meta (the title
is often the first prompt) and of the turn commits' messages (they quote the prompt).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..model import Branch, Node, SessionMeta, Turn, TurnCommit
from .redact import redact_node, redact_text, redact_value


def redact_meta(meta: SessionMeta) -> SessionMeta:
    title = redact_text(meta.title)
    preview = redact_text(meta.preview)
    extra = redact_value(meta.extra)
    source_ref = redact_value(meta.source_ref)
    if title is meta.title and preview is meta.preview and extra is meta.extra and source_ref is meta.source_ref:
        return meta
    return replace(meta, title=title, preview=preview, extra=extra, source_ref=source_ref)


def redact_commit(commit: TurnCommit) -> TurnCommit:
    summary = redact_text(commit.summary)
    message = redact_text(commit.message)
    if summary is commit.summary and message is commit.message:
        return commit
    return replace(commit, summary=summary, message=message)


class RedactedSession:
    """A SessionRepo (or anything with its read methods) whose reads come back redacted."""

    def __init__(self, repo: Any) -> None:
        self._repo = repo
        self._shown: dict[str, Node] = {}

    @property
    def raw(self) -> Any:
        return self._repo

    def __getattr__(self, name: str) -> Any:  # id, path, head, has_node, leaves, ...: no session text
        return getattr(self._repo, name)

    def shown(self, node: Node) -> Node:
        cached = self._shown.get(node.id)
        if cached is None or cached.seq != node.seq:
            cached = self._shown[node.id] = redact_node(node)
        return cached

    def meta(self) -> SessionMeta:
        return redact_meta(self._repo.meta())

    def raw_meta(self) -> dict[str, Any]:
        return redact_value(self._repo.raw_meta())

    def node(self, node_id: str) -> Node:
        return self.shown(self._repo.node(node_id))

    def nodes(self) -> list[Node]:
        return [self.shown(n) for n in self._repo.nodes()]

    def get_branch(self, head_id: str | None = None) -> list[Node]:
        return [self.shown(n) for n in self._repo.get_branch(head_id)]

    def turns(self, head_id: str | None = None) -> list[Turn]:
        return [self.turn(t) for t in self._repo.turns(head_id)]

    def turn(self, turn: Turn) -> Turn:
        return replace(turn, nodes=tuple(self.shown(n) for n in turn.nodes))

    def branches(self) -> list[Branch]:
        return self._repo.branches()

    def session_commits(self, limit: int = 100) -> list[TurnCommit]:
        return [redact_commit(c) for c in self._repo.session_commits(limit)]

    def turn_view(self, commit: str) -> list[Node]:
        return [self.shown(n) for n in self._repo.turn_view(commit)]
