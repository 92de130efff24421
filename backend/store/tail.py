"""The last turn of a session that is not open yet, read without parsing every node file.

Opening a session reads all of history/ (2,000 turns: 8,000 files). To put its last turn on
screen first, this reads meta.json, lists history/ (file names carry seq, role and id), parses
the files written after the saved head and then walks back by parent id to the turn's user
node, reading one file per step. The nodes written after that turn's fork point (its tool
calls, retries of it) are parsed to group it exactly as the full graph would (same function).
The turn count comes from meta.json's `turns`, the user count on the line to `turns_head`,
plus the user nodes met on the walk from the head back to it.

Anything unusual (an unreadable file, a head that is not where meta.json says, a session
written before `turns_head` existed) returns None, and the caller opens the session fully.
Reads only: no lock, no backfill; files are replaced atomically, so what it reads is whole.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pygit2

from ..model import CorruptFile, LastTurn, Node, SessionMeta
from .commit_text import trailers
from .conversation import Conversation
from .files import read_json_object
from .git_mirror import open_session_git

_ROLES = frozenset("uats")
_COMMIT_WALK = 64  # commits looked at below each branch tip for the turn's commit


class _Unsure(Exception):
    """The quick read cannot be sure: open the session fully."""


class _Files:
    """history/ in seq order, indexed by node id from the newest file back only as far as asked."""

    def __init__(self, history: Path) -> None:
        self.history = history
        names = [n for n in os.listdir(history) if n.endswith(".json") and not n.startswith(".")]
        # NNNNNN-r-<id>.json: with six-digit seqs, name order is seq order (C sort, no parsing).
        # Other names (a million nodes, a stray file) are left to the full open.
        if any(n[6:7] != "-" or n[7:8] not in _ROLES or n[8:9] != "-" for n in names):
            raise _Unsure("a file name this quick read does not know")
        names.sort()
        self.names = names
        self.by_id: dict[str, tuple[int, str]] = {}
        self._indexed_from = len(names)  # names[_indexed_from:] are in by_id
        self.parsed: dict[str, Node] = {}

    def _index_back(self) -> None:
        start = max(0, self._indexed_from - max(64, len(self.names) - self._indexed_from))
        for name in self.names[start : self._indexed_from]:
            if not name[:6].isdigit():
                raise _Unsure(f"unexpected file {name}")
            node_id = name[9:-5]
            if node_id in self.by_id:
                raise _Unsure(f"two files for node {node_id!r}")
            self.by_id[node_id] = (int(name[:6]), name)
        self._indexed_from = start

    def has(self, node_id: str) -> bool:
        while node_id not in self.by_id and self._indexed_from > 0:
            self._index_back()
        return node_id in self.by_id

    def node(self, node_id: str) -> Node:
        found = self.parsed.get(node_id)
        if found is not None:
            return found
        if not self.has(node_id):
            raise _Unsure(f"no file for node {node_id}")
        path = self.history / self.by_id[node_id][1]
        try:
            with open(path, "rb") as fh:
                node = Node.from_json(json.loads(fh.read()), path)
        except (OSError, ValueError, CorruptFile) as exc:
            raise _Unsure(str(exc)) from None
        if node.id != node_id:
            raise _Unsure(f"{path}: holds node {node.id}")
        self.parsed[node_id] = node
        return node

    def ids_after(self, seq: int) -> list[str]:
        """Ids of the nodes written after seq `seq` (by the seq in their file names), in seq order."""
        first = bisect_right(self.names, f"{max(seq, -1) + 1:06d}") if seq >= 0 else 0
        while self._indexed_from > first:
            self._index_back()
        return [name[9:-5] for name in self.names[first:]]

    def after(self, seq: int) -> list[Node]:
        return [self.node(nid) for nid in self.ids_after(seq)]


def read_last_turn(path: Path, session_id: str, live_since: Callable[[], int | None]) -> LastTurn | None:
    """The last turn on the head's line and the turn count; None when only a full open can tell.

    `live_since()`: the first seq a live writer has not committed (writers.InFlight). An
    uncommitted last turn that no live writer holds would be committed by a full open
    (backfill), so that case is left to it.
    """
    try:
        return _read(path, session_id, live_since)
    except (_Unsure, OSError, CorruptFile, pygit2.GitError, KeyError, ValueError):
        return None


def _read(path: Path, session_id: str, live_since: Callable[[], int | None]) -> LastTurn:
    data = read_json_object(path / "meta.json")
    meta = SessionMeta.from_listing(data, session_id, str(path))
    turns, turns_head = data.get("turns"), data.get("turns_head")
    if not isinstance(turns, int) or not isinstance(turns_head, str):
        raise _Unsure("meta.json has no turns_head (written before it existed)")
    try:
        files = _Files(path / "history")
    except FileNotFoundError:
        return LastTurn(meta, None, 0)
    if not files.names:
        return LastTurn(meta, None, 0)
    head = _head(files, data)
    if head is None:
        return LastTurn(meta, None, 0)

    user, users_after = _walk_back(files, head, turns_head)
    count = turns + users_after

    # Nodes before the line's first user node (a preface) belong to turn 1.
    point = user.parent_id if user is not None and _user_above(files, user) else None
    since = files.node(point).seq if point is not None else -1
    graph = Conversation(f"session {session_id}")
    for node in files.after(since):
        graph.add(node)
    graph.head = head
    commit = _turn_commit(path, head)
    found = graph.turns(None, {head: str(commit.id)} if commit is not None else {})
    if len(found) != 1:
        raise _Unsure("the last turn did not come out as one turn")
    _check_nothing_to_backfill(files, data, found[0].nodes, commit, live_since)
    turn = found[0] if found[0].number == 0 else replace(found[0], number=count)
    return LastTurn(meta, turn, count)


def _check_nothing_to_backfill(
    files: _Files, data: dict[str, Any], nodes: Sequence[Node], commit: Any, live_since: Callable[[], int | None]
) -> None:
    """A full open would commit what git misses (and rewrite meta.json): that case is left to it.

    Nodes written since meta.json was saved must all be this turn's, and this turn's nodes must
    all be in its commit, or be a live writer's (which an open leaves alone too).
    """
    mark = data.get("head_seq_mark", -1)
    mine = {n.id for n in nodes}
    if any(nid not in mine for nid in files.ids_after(mark if isinstance(mark, int) else -1)):
        raise _Unsure("nodes written since meta.json was saved lie outside the last turn")
    committed = data.get("head_committed_seq")
    if commit is not None and isinstance(committed, int) and all(n.seq <= committed for n in nodes):
        return  # the head's line was whole in its last commit, and this turn is all older than that
    history = commit.tree["history"].peel(pygit2.Tree) if commit is not None and "history" in commit.tree else None
    missing = [n for n in nodes if history is None or n.file_name not in history]
    if missing:
        since = live_since()
        if since is None or any(n.seq < since for n in missing):
            raise _Unsure("part of the last turn is not committed and no live writer holds it: an open commits it")


def _walk_back(files: _Files, head: str, turns_head: str) -> tuple[Node | None, int]:
    """From the head up to the last turn's user node and to `turns_head`: (that user node, the user
    nodes after turns_head). Raises _Unsure when turns_head is not on the line."""
    user: Node | None = None
    users_after = 0
    found = False
    cur: str | None = head
    while cur is not None and not (found and user is not None):
        node = files.node(cur)
        found = found or cur == turns_head
        if node.role == "user":
            user = user or node
            users_after += 0 if found else 1
        cur = node.parent_id
    if not found:
        raise _Unsure("turns_head is not on the head's line")
    return user, users_after


def _user_above(files: _Files, user: Node) -> bool:
    cur = user.parent_id
    while cur is not None:
        node = files.node(cur)
        if node.role == "user":
            return True
        cur = node.parent_id
    return False


def _head(files: _Files, data: dict[str, Any]) -> str | None:
    """meta.json's head, moved forward to messages written on its line after it was saved (as a full load does)."""
    saved = data.get("head_id")
    mark = data.get("head_seq_mark", -1)
    mark = mark if isinstance(mark, int) else -1
    graph = Conversation("tail")
    for node in files.after(mark):
        graph.add(node)
    latest = max((n for n in graph.nodes.values() if n.called_by is None), key=lambda n: n.seq, default=None)
    head = saved if isinstance(saved, str) and files.has(saved) else None
    if latest is None:
        return head
    if head is None:
        return latest.id
    cur: str | None = latest.id
    while cur is not None:  # is the saved head an ancestor of the latest message?
        if cur == head:
            return latest.id
        cur = files.node(cur).parent_id
    return head


def _turn_commit(path: Path, head: str) -> Any:
    """The head's turn commit, from the branch tips and a few commits below them; None if there is none."""
    if not (path / ".git").is_dir():
        return None
    repo = open_session_git(path)
    tips = [ref.peel(pygit2.Commit) for ref in (repo.references.get(f"refs/heads/{b}") for b in repo.branches.local)]
    for tip in tips:
        if trailers(tip.message)[0] == head:
            return tip
    for tip in tips:
        commit = tip
        for _ in range(_COMMIT_WALK):
            if not commit.parent_ids:
                break
            commit = commit.parents[0]
            if trailers(commit.message)[0] == head:
                return commit
    if any(_mentions(tip, head) for tip in tips):
        raise _Unsure("the head's commit is far below the tips")
    return None  # not committed yet


def _mentions(tip: Any, head: str) -> bool:
    """Whether the head's node file is in the tip's tree (committed, further down than we looked)."""
    tree = tip.tree
    if "history" not in tree:
        return False
    suffix = f"-{head}.json"
    return any(entry.name.endswith(suffix) for entry in tree["history"].peel(pygit2.Tree))
