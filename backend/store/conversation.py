"""The conversation graph of one session: nodes joined by parent and caller edges, branches, turns.

A turn is one user node and every node after it on the same branch up to the next user node
(ARCHITECTURE §3). `group_turns` is the one place nodes are grouped into turns: the store's
turns and the read-only view of a commit both come from it, and widgets render what it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter

from ..model import Node, OpmemError, Turn


def display_order(nodes: Iterable[Node]) -> list[Node]:
    """Messages in seq order, each followed by the tool calls it made (a nested call after its caller).

    Tool results can be written after the next message (parallel calls, late results); on
    screen and in a turn they still sit under the message that called them.
    """
    by_id = {n.id: n for n in nodes}

    def key(node: Node) -> tuple[int, ...]:
        if node.called_by is None or node.called_by not in by_id:  # a message (most nodes): its own seq
            return (node.seq,)
        caller = by_id[node.called_by]
        if caller.id != node.id and (caller.called_by is None or caller.called_by not in by_id):
            return (caller.seq, node.seq)  # a message's tool call (the other nodes): the walk below in one step
        seqs = [node.seq]
        seen = {node.id}
        cur = node
        while cur.called_by is not None and cur.called_by in by_id and cur.called_by not in seen:
            cur = by_id[cur.called_by]
            seen.add(cur.id)
            seqs.append(cur.seq)
        seqs.reverse()
        return tuple(seqs)

    return sorted(by_id.values(), key=key)


def group_turns(nodes: Iterable[Node]) -> list[list[Node]]:
    """A branch's nodes (tool nodes included) as turns, each in display order.

    A user message opens a new turn once the current one already has one, so the nodes before
    the first user message (a system preface) belong to turn 1.
    """
    groups: list[list[Node]] = []
    has_user = False
    for node in display_order(nodes):
        opens = node.role == "user" and node.called_by is None
        if not groups or (opens and has_user):
            groups.append([node])
            has_user = opens
        else:
            groups[-1].append(node)
            has_user = has_user or opens
    return groups


def number_turns(
    groups: Sequence[Sequence[Node]],
    commits: Mapping[str, str] | None = None,
    forks: Sequence[Sequence[str]] | None = None,
) -> list[Turn]:
    """Turns numbered along the branch; a branch without a user node is one turn numbered 0."""
    commits = commits or {}
    if not groups:
        return []
    if not _opens_with_user(groups):
        return [Turn(number=0, nodes=tuple(groups[0]), commit=commits.get(_last_message(groups[0]).id))]
    return [
        Turn(
            number=number,
            nodes=tuple(group),
            commit=commits.get(_last_message(group).id),
            fork_heads=tuple(forks[number - 1]) if forks else (),
        )
        for number, group in enumerate(groups, start=1)
    ]


def turn_starts(
    groups: Sequence[Sequence[Node]], commits: Mapping[str, str] | None = None
) -> dict[str, tuple[int, str | None]]:
    """Of the turns number_turns makes of `groups`: each one's user node id -> (its number, its
    commit), as Turn.user, Turn.number and Turn.commit give them, without building the turns."""
    commits = commits or {}
    if not groups:
        return {}
    if not _opens_with_user(groups):
        groups, first = groups[:1], 0
    else:
        first = 1
    out: dict[str, tuple[int, str | None]] = {}
    for number, group in enumerate(groups, start=first):
        user = next((n for n in group if n.role == "user"), None)
        if user is not None:
            out[user.id] = (number, commits.get(_last_message(group).id))
    return out


def turns_from_nodes(nodes: Iterable[Node]) -> list[Turn]:
    """Turns of a flat list of nodes, e.g. the conversation as it stood at a commit."""
    return number_turns(group_turns(nodes))


_seq = attrgetter("seq")


def _opens_with_user(groups: Sequence[Sequence[Node]]) -> bool:
    """Whether the branch's first group holds a user message (else the branch is one turn, numbered 0)."""
    return any(n.role == "user" and n.called_by is None for n in groups[0])


def _last_message(group: Sequence[Node]) -> Node:
    chain = [n for n in group if n.called_by is None]
    return max(chain, key=lambda n: n.seq) if chain else group[-1]


class Conversation:
    """Every node of a session, indexed by parent (messages) and by caller (tool nodes)."""

    def __init__(self, label: str) -> None:
        self.label = label  # "session <id>", for error messages
        self.clear()

    def clear(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.children: dict[str | None, list[str]] = {}
        self.tools: dict[str, list[str]] = {}
        self.max_seq = -1
        self.head: str | None = None

    def add(self, node: Node) -> None:
        self.nodes[node.id] = node
        if node.seq > self.max_seq:
            self.max_seq = node.seq
        if node.called_by is not None:
            self.tools.setdefault(node.called_by, []).append(node.id)
        else:
            self.children.setdefault(node.parent_id, []).append(node.id)

    def get(self, node_id: str) -> Node:
        try:
            return self.nodes[node_id]
        except KeyError:
            raise OpmemError(f"{self.label}: no node {node_id!r}") from None

    def ordered(self) -> list[Node]:
        return sorted(self.nodes.values(), key=lambda n: n.seq)

    def chain_node(self, node_id: str) -> str:
        """The message a node belongs to: itself, or for a tool node the message that called it."""
        node = self.get(node_id)
        return node.called_by if node.called_by is not None else node.id

    def chain_root(self, node_id: str) -> str:
        """Like chain_node, through nested calls (a tool called by a tool)."""
        cur = node_id
        while cur in self.nodes and self.nodes[cur].called_by is not None:
            cur = self.nodes[cur].called_by  # type: ignore[assignment]
        return cur

    def is_ancestor(self, ancestor: str, node_id: str) -> bool:
        cur: str | None = node_id
        while cur is not None:
            if cur == ancestor:
                return True
            cur = self.nodes[cur].parent_id if cur in self.nodes else None
        return False

    def path_ids(self, head: str | None) -> list[str]:
        """Message ids from the root to `head`."""
        ids: list[str] = []
        cur = head
        seen: set[str] = set()
        while cur is not None:
            if cur in seen:
                raise OpmemError(f"{self.label}: parent cycle at node {cur!r}")
            seen.add(cur)
            ids.append(cur)
            node = self.nodes.get(cur)
            if node is None:
                break
            cur = node.parent_id if node.parent_id in self.nodes else None
        ids.reverse()
        return ids

    def branch(self, head_id: str | None = None) -> list[Node]:
        """The nodes on the line to `head_id` (default: the session's head), tool nodes included, seq order."""
        head = self.chain_node(head_id) if head_id is not None else self.head
        if head is None:
            return []
        out: list[Node] = []
        nodes, tools = self.nodes, self.tools
        for cid in self.path_ids(head):
            out.append(nodes[cid])
            if cid in tools:  # most messages call no tool (every prompt)
                out.extend(self.tool_tree(cid))
        out.sort(key=_seq)
        return out

    def tool_tree(self, caller: str) -> list[Node]:
        """Tool nodes of a caller, and tools those tools called (nested agents)."""
        out: list[Node] = []
        stack = list(self.tools.get(caller, ()))
        while stack:
            tid = stack.pop()
            out.append(self.nodes[tid])
            stack.extend(self.tools.get(tid, ()))
        return out

    def leaves(self) -> list[str]:
        return [nid for nid, n in self.nodes.items() if n.called_by is None and not self.children.get(nid)]

    def leaves_under(self, node_id: str) -> list[str]:
        out: list[str] = []
        stack = [node_id]
        while stack:
            cur = stack.pop()
            kids = self.children.get(cur)
            if kids:
                stack.extend(kids)
            else:
                out.append(cur)
        return sorted(out, key=lambda n: self.nodes[n].seq)

    def turns(self, head_id: str | None = None, commits: Mapping[str, str] | None = None) -> list[Turn]:
        """The branch's turns, each with its commit and the heads of lines that fork inside it."""
        groups = group_turns(self.branch(head_id))
        on_path = {n.id for group in groups for n in group if n.called_by is None}
        forks: list[list[str]] = []
        for group in groups:
            chain = sorted((n for n in group if n.called_by is None), key=lambda n: n.seq)
            points = [chain[0].parent_id] + [n.id for n in chain[:-1]] if chain else []
            heads: list[str] = []
            for point in points:
                for child in self.children.get(point, ()):
                    if child not in on_path:
                        heads.extend(self.leaves_under(child))
            forks.append(heads)
        return number_turns(groups, commits, forks)

    def turn_starts(
        self, head_id: str | None = None, commits: Mapping[str, str] | None = None
    ) -> dict[str, tuple[int, str | None]]:
        """What `turns` tells of each turn's user node (its number and commit), without the turns or their forks."""
        return turn_starts(group_turns(self.branch(head_id)), commits)

    def user_count(self, head: str | None) -> int:
        """Turns on the line to `head`: its user messages."""
        return sum(1 for cid in self.path_ids(head) if self.nodes[cid].role == "user")

    def turn_chain(self, end: str) -> list[Node]:
        """Messages of the turn ending at `end`, back to (and with) its user node."""
        chain: list[Node] = []
        cur: str | None = end
        while cur is not None and cur in self.nodes:
            node = self.nodes[cur]
            chain.append(node)
            if node.role == "user":
                break
            cur = node.parent_id
        chain.reverse()
        return chain

    def turn_ends(self, start: str, skip_from: int | None = None) -> list[str]:
        """Last messages of the turns that begin at `start` (one per line that forks inside them)."""
        ends: list[str] = []
        stack = [start]
        while stack:
            cur = stack.pop()
            kids = self.children.get(cur, [])
            if skip_from is not None:
                kids = [k for k in kids if self.nodes[k].seq < skip_from]
            if not kids or any(self.nodes[k].role == "user" for k in kids):
                ends.append(cur)
            stack.extend(k for k in kids if self.nodes[k].role != "user")
        return ends

    def first_user(self, end: str) -> Node | None:
        """The first user message with text on the line to `end`."""
        for cid in self.path_ids(end):
            node = self.nodes[cid]
            if node.role == "user" and node.content.strip():
                return node
        return None

    def recover_head(self, saved_head: object, mark: object) -> None:
        """meta.json's head, moved forward to messages appended on its line after it was saved."""
        head = saved_head if isinstance(saved_head, str) and saved_head in self.nodes else None
        mark = mark if isinstance(mark, int) else -1
        latest = None
        for node in self.nodes.values():
            if node.called_by is None and node.seq > mark and (latest is None or node.seq > latest.seq):
                latest = node
        if latest is not None and (head is None or self.is_ancestor(head, latest.id)):
            head = latest.id
        self.head = head
