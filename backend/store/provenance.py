"""The read layer the distillation pipeline uses: nodes since a cursor, and where they came from."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from ..model import Node, Provenance, SessionNotFound, TurnCommit
from .sessions import SessionStore


def session_project_id(store: SessionStore, session_id: str) -> str:
    return store.get_meta(session_id).project_id


def iter_nodes_since(store: SessionStore, session_id: str, *, after_seq: int = -1) -> Iterator[Node]:
    """Every node with seq > after_seq, in seq order (tool nodes and all branches included).

    A session deleted since the cursor was saved yields nothing rather than failing.
    """
    try:
        nodes = store.get_nodes(session_id)
    except SessionNotFound:
        return
    for node in nodes:
        if node.seq > after_seq:
            yield node


def node_provenance(
    store: SessionStore,
    session_id: str,
    nodes: Node | Sequence[Node],
    *,
    commit: str | None = None,
    ingestion_time: float | None = None,
) -> Provenance:
    """Provenance for one node or a group; the commit is the turn commit that covers them."""
    group = [nodes] if isinstance(nodes, Node) else list(nodes)
    if not group:
        raise ValueError("node_provenance needs at least one node")
    meta = store.get_meta(session_id)
    covering_commit, turn = _covering_turn(store, session_id, group)
    if commit is None:
        commit = covering_commit
    return Provenance(
        project_id=meta.project_id,
        session_id=session_id,
        node_ids=tuple(n.id for n in group),
        commit=commit,
        event_time=max(n.created_at for n in group),
        ingestion_time=time.time() if ingestion_time is None else ingestion_time,
        turn=turn,
    )


def _covering_turn(store: SessionStore, session_id: str, group: list[Node]) -> tuple[str | None, int | None]:
    """(turn commit, turn number) of the turn that holds the group's nodes."""
    wanted = {n.called_by or n.id for n in group}
    number: int | None = None
    for turn in _all_turns(store, session_id, wanted):
        ids = {n.id for n in turn.nodes}
        if wanted & ids:
            number = turn.number if number is None else number
            if turn.commit:
                return turn.commit, turn.number
    return None, number


def _all_turns(store: SessionStore, session_id: str, wanted: set[str]):
    # The head's branch first; other leaves only when the nodes are on another branch.
    turns = store.get_turns(session_id)
    yield from turns
    covered = {n.id for t in turns for n in t.nodes}
    if wanted <= covered:
        return
    for leaf in store.leaves(session_id):
        if leaf not in covered:
            yield from store.get_turns(session_id, head_id=leaf)


def session_commits(store: SessionStore, session_id: str, *, limit: int = 100) -> list[TurnCommit]:
    try:
        return store.session_commits(session_id, limit)
    except SessionNotFound:
        return []
