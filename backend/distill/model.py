"""What flows between the distillation stages: one frozen dataclass per stage's output.

collect -> Collected (SessionBatch, ProjectCommit) -> extract -> Extraction (+ TurnFacts)
-> link -> Linked (+ AliasMerge) -> reconcile -> Reconciled (+ Patch, Contradiction)
-> write (durable) -> cursor -> project (core.md, views, index).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..memory.records import AliasMerge, Edge, Entity, Event, Patch
from ..model import Node

CODING = "coding"
CONVERSATION = "conversation"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What the extractors need to know about the session a batch comes from."""

    session_id: str
    title: str = ""
    project_id: str = ""
    project_name: str = ""
    root: str = ""  # the project's workdir, else the session's cwd: file paths are made relative to it
    agent_id: str = ""
    source: str = ""
    kind: str = CODING  # coding | conversation
    scope: str = "global"
    speakers: tuple[str, ...] = ()  # conversation: the names that speak, in order of appearance
    created_at: float = 0.0

    @property
    def project_key(self) -> str:
        """What the project entity is keyed by: the bound project's id, else the id of the project
        its folder stands for (the scope, registry.folder_project), else the folder."""
        if self.project_id:
            return self.project_id
        return self.scope.split(":", 1)[1] if self.scope.startswith("project:") else self.root


@dataclass(frozen=True, slots=True)
class CollectedTurn:
    """One user node and what answered it (every branch, tool nodes included), in seq order.

    `nodes` may hold nodes distilled by an earlier run when the turn grew since: the turn is
    distilled whole again and its work event supersedes the older copy.
    """

    session: SessionInfo
    nodes: tuple[Node, ...]
    number: int | None = None  # turn number along the branch that holds it
    commit: str | None = None  # the session repo's turn commit covering it

    @property
    def anchor(self) -> Node:
        return next((n for n in self.nodes if n.role == "user"), self.nodes[0])

    @property
    def event_time(self) -> float:
        return max((n.created_at for n in self.nodes), default=0.0)


@dataclass(frozen=True, slots=True)
class SessionBatch:
    """The new nodes of one session, grouped into turns; `last_seq` is the cursor once durable."""

    session: SessionInfo
    turns: tuple[CollectedTurn, ...]
    last_seq: int
    first_seq: int = 0  # the first new seq (nodes before it were distilled already)
    old_nodes: frozenset[str] = frozenset()  # nodes of grown turns that an earlier run distilled


@dataclass(frozen=True, slots=True)
class ProjectCommit:
    """A project commit made since the last run, with the turn that made it when a link exists."""

    project_id: str
    project_name: str
    oid: str
    summary: str
    message: str
    time: float
    author: str
    session_id: str = ""
    turn: int | None = None
    head_id: str = ""
    paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProjectCommits:
    """The new commits of one project; `head` is its cursor once durable."""

    project_id: str
    commits: tuple[ProjectCommit, ...]
    head: str


@dataclass(frozen=True, slots=True)
class Collected:
    batches: tuple[SessionBatch, ...] = ()
    commits: tuple[ProjectCommits, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.batches and not any(p.commits for p in self.commits)

    @property
    def node_count(self) -> int:
        return sum(len(t.nodes) for b in self.batches for t in b.turns)


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What one turn did, as the rules read it (the work event is written from this)."""

    session_id: str
    anchor_id: str
    turn: int | None
    request: str = ""
    edited: tuple[str, ...] = ()  # file paths, relative to the session root when under it
    created: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()  # "old/path -> new/path" (mv, git mv)
    read: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()  # every shell command line run, unwrapped from `bash -lc`
    programs: tuple[str, ...] = ()  # the commands as entities: `pytest`, `git commit`, ...
    searches: tuple[str, ...] = ()  # patterns searched (grep, rg, Glob, web search queries)
    urls: tuple[str, ...] = ()
    installed: tuple[str, ...] = ()
    tests: str = ""  # "12 passed, 1 failed"
    errors: tuple[str, ...] = ()  # of commands that failed and did not pass later in the turn
    commits: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()  # errors of commands that failed, then passed later in the turn


@dataclass(frozen=True, slots=True)
class Extraction:
    """Stage 2's output: records not yet linked or reconciled."""

    entities: tuple[Entity, ...] = ()
    edges: tuple[Edge, ...] = ()
    events: tuple[Event, ...] = ()
    facts: tuple[TurnFacts, ...] = ()
    notes: tuple[str, ...] = ()  # what the extractor wants the run report to say (LLM failures, ...)

    def merged(self, other: Extraction) -> Extraction:
        """Both, without duplicate ids (the first copy wins)."""
        return Extraction(
            entities=_unique(self.entities + other.entities),
            edges=_unique(self.edges + other.edges),
            events=_unique(self.events + other.events),
            facts=self.facts + other.facts,
            notes=self.notes + other.notes,
        )


def _unique(records: Iterable[Any]) -> tuple[Any, ...]:
    seen: dict[str, Any] = {}
    for record in records:
        seen.setdefault(record.id, record)
    return tuple(seen.values())


@dataclass(frozen=True, slots=True)
class Linked:
    """Stage 3's output: the extraction plus the alias merges found."""

    extraction: Extraction
    merges: tuple[AliasMerge, ...] = ()


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A single-valued relation that got a second value: which edge was kept, which retired."""

    relation: str
    subject: str
    scope: str
    kept: str  # edge id still current
    retired: str  # edge id superseded
    kept_value: str
    retired_value: str
    reason: str
    at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "subject": self.subject,
            "scope": self.scope,
            "kept": self.kept,
            "retired": self.retired,
            "kept_value": self.kept_value,
            "retired_value": self.retired_value,
            "reason": self.reason,
            "at": self.at,
        }


@dataclass(frozen=True, slots=True)
class Reconciled:
    """Stage 4's output: what to append, in order, and what contradicted what."""

    linked: Linked
    edge_patches: tuple[Patch, ...] = ()
    event_patches: tuple[Patch, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()

    @property
    def extraction(self) -> Extraction:
        return self.linked.extraction


@dataclass(frozen=True, slots=True)
class Written:
    """What a write appended (records already stored are skipped)."""

    entities: int = 0
    edges: int = 0
    events: int = 0
    patches: int = 0
    merges: int = 0

    def __add__(self, other: Written) -> Written:
        return Written(
            self.entities + other.entities,
            self.edges + other.edges,
            self.events + other.events,
            self.patches + other.patches,
            self.merges + other.merges,
        )

    @property
    def total(self) -> int:
        return self.entities + self.edges + self.events + self.patches + self.merges


@dataclass(frozen=True, slots=True)
class Progress:
    """One step of a run, for a progress bar: `done` of `total` batches, and what is happening."""

    stage: str
    done: int
    total: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RunReport:
    sessions: int = 0
    nodes: int = 0
    commits: int = 0
    written: Written = field(default_factory=Written)
    contradictions: int = 0
    cancelled: bool = False
    llm_batches: int = 0
    llm_failed: int = 0
    tokens: int = 0
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def line(self) -> str:
        w = self.written
        text = (
            f"distilled {self.nodes:,} nodes of {self.sessions:,} sessions"
            f"{f' and {self.commits:,} project commits' if self.commits else ''}: "
            f"{w.events:,} events, {w.entities:,} entities, {w.edges:,} edges, "
            f"{w.merges:,} alias merges, {w.patches:,} supersedes"
        )
        if self.contradictions:
            text += f", {self.contradictions:,} contradictions logged"
        if self.llm_batches or self.llm_failed:
            text += (
                f"; LLM: {self.llm_batches} batches, {self.llm_failed} kept the rules result, {self.tokens:,} tokens"
            )
            if self.extra.get("llm"):
                text += f" (via {self.extra['llm']})"
        if self.cancelled:
            text += " (cancelled; the rest is distilled next time)"
        return text


__all__ = [
    "CODING",
    "CONVERSATION",
    "AliasMerge",
    "Collected",
    "CollectedTurn",
    "Contradiction",
    "Edge",
    "Entity",
    "Event",
    "Extraction",
    "Linked",
    "Patch",
    "Progress",
    "ProjectCommit",
    "ProjectCommits",
    "Reconciled",
    "RunReport",
    "SessionBatch",
    "SessionInfo",
    "TurnFacts",
    "Written",
]
