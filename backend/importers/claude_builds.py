"""What a Claude Code transcript has built so far: one Build per output session (the trunk, or a
sidechain), the model calls (Group) and tool calls (Tool) still open in it, and the rules that
place a new chain node under the record its ``parentUuid`` names.

Forks: a second child of a node is a real branch (a rewind) only when it is a typed prompt and
an earlier child's subtree holds a prompt or a reply; an exact replay (same role, content and
timestamp) is merged into the earlier child, and anything else (recording artifacts) is chained
after the latest node under that parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Node
from .base import SessionKind


@dataclass(slots=True)
class Group:
    """One model call: the assistant records sharing a message.id."""

    sid: str
    parent: str | None
    created_at: float
    uuid: str | None
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    seen_blocks: set[int] = field(default_factory=set)
    tools: list[str] = field(default_factory=list)
    model: str = ""
    request_id: str = ""
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    other_blocks: dict[str, int] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    last_block: str = ""
    emitted: bool = False
    last: str = ""  # the newest node of this group (itself, or a continuation)
    synthetic: bool = False


@dataclass(slots=True)
class Tool:
    sid: str
    name: str | None
    input: Any
    called_by: str
    created_at: float
    caller: Any = None
    result: str | None = None
    result_at: float = 0.0
    is_error: bool = False
    result_meta: Any = None
    emitted: bool = False


class Build:
    """What one output session (trunk, or one sidechain) has accumulated so far."""

    def __init__(self, native_id: str, kind: SessionKind) -> None:
        self.native_id = native_id
        self.kind: SessionKind = kind
        self.out: list[Node] = []
        self.anchors: dict[str, str | None] = {}  # record uuid -> node standing for it
        self.parent_of: dict[str, str | None] = {}  # chain node -> chain parent
        self.children: dict[str | None, list[str]] = {}
        self.sig: dict[str, tuple[str, str, int]] = {}
        self.live: set[str] = set()
        self.groups: dict[str, Group] = {}
        self.group_of: dict[str, Group] = {}  # chain sid of a group or continuation -> group
        self.open_groups: dict[str, Group] = {}
        self.tools: dict[str, Tool] = {}
        self.waiting: dict[str, Tool] = {}  # tools not written yet (their result, or their call, may come)
        self.redirect: dict[str | None, str] = {}
        self.head: str | None = None
        self.emitted_head: str | None = None
        self.record_ts: dict[str, str] = {}
        self.cwd = ""
        self.model = ""
        self.git_branch = ""
        self.titles: dict[str, str] = {}
        self.extra: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        self.usage: dict[tuple[str, str], dict[str, Any]] = {}
        self.links: dict[str, str] = {}  # agentId -> tool node that spawned it
        self.root_parent_uuid: str | None = None
        self.queue: list[tuple[str, Any, int]] = []  # enqueued prompts not taken yet: text, stamp, line
        self.taken: tuple[str, Any, int] | None = None  # dequeued; its own user record may follow
        self.meta_dirty = True
        self.nodes_total = 0
        self.first_prompt = ""
        self.summaries: dict[str, str] = {}  # leafUuid -> summary not matched yet

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def anchor(self, parent_uuid: str | None) -> str | None:
        """The node standing for the record `parent_uuid` (None: a root)."""
        if parent_uuid is None:
            return None
        if parent_uuid in self.anchors:
            return self.anchors[parent_uuid]
        if self.root_parent_uuid is None and self.nodes_total == 0 and not self.anchors:
            self.root_parent_uuid = parent_uuid  # the first record points outside this file
        self.count("orphan")
        return None

    def resolve_parent(self, parent: str | None, role: str, stamp: str, content: str) -> tuple[str | None, str | None]:
        """(parent for a new chain node, or None) and (an existing node it duplicates, or None)."""
        while parent in self.redirect:
            parent = self.redirect.pop(parent)
        kids = self.children.get(parent)
        if not kids:
            return parent, None
        sig = (role, stamp, hash(content))
        for kid in kids:
            if self.sig.get(kid) == sig:
                return parent, kid  # a replay of a node already there
        if role == "user" and any(kid in self.live for kid in kids):
            return parent, None  # a real rewind: a new prompt beside a live line
        tip = kids[-1]
        while self.children.get(tip):
            tip = self.children[tip][-1]
        return tip, None

    def register_chain(self, sid: str, parent: str | None, role: str, stamp: str, content: str) -> None:
        self.children.setdefault(parent, []).append(sid)
        self.parent_of[sid] = parent
        self.sig[sid] = (role, stamp, hash(content))
        self.head = sid
        if role in ("user", "assistant"):
            self.live.add(sid)
            up = parent
            while up is not None and up not in self.live:
                self.live.add(up)
                up = self.parent_of.get(up)

    def emit(self, node: Node) -> None:
        self.out.append(node)
        self.nodes_total += 1
        if node.role != "tool":
            self.emitted_head = node.id

    def title(self, source: str, value: Any) -> None:
        if isinstance(value, str) and value.strip() and self.titles.get(source) != value.strip():
            self.titles[source] = value.strip()
            self.meta_dirty = True

    def set_extra(self, key: str, value: Any) -> None:
        if value is not None and self.extra.get(key) != value:
            self.extra[key] = value
            self.meta_dirty = True
