"""The records a bound project hands to the UI, the CLI and the memory tools (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """One line of the project log. `paths` is filled only where asked for (linking)."""

    oid: str
    summary: str
    message: str
    author_name: str
    author_email: str
    time: float  # author time, unix seconds
    offset: int  # author UTC offset in minutes
    parents: tuple[str, ...] = ()
    is_agent: bool = False
    model: str = ""  # from `agent (<model> via opmem)`
    session_id: str = ""  # from `[agent <session_id>] turn N:`
    turn: int | None = None
    paths: tuple[str, ...] | None = None

    @property
    def short(self) -> str:
        return self.oid[:7]


@dataclass(frozen=True, slots=True)
class DiffLine:
    origin: str  # "+", "-", " " (context), or "\\" style markers from libgit2 (">", "<", "=")
    content: str
    old_lineno: int
    new_lineno: int


@dataclass(frozen=True, slots=True)
class Hunk:
    header: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[DiffLine, ...]


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str  # the new path (the old one for a deletion)
    old_path: str
    status: str  # A added, M modified, D deleted, R renamed, C copied, T type change
    additions: int
    deletions: int
    binary: bool
    hunks: tuple[Hunk, ...]
    truncated: bool = False  # hunks cut at max_lines_per_file


@dataclass(frozen=True, slots=True)
class CommitDetail:
    commit: CommitInfo
    files: tuple[FileDiff, ...]


@dataclass(frozen=True, slots=True)
class AgentTurnWatch:
    """What the project looked like when a turn started."""

    workdir: str
    head: str | None  # HEAD commit at turn start (None: unborn)
    dirty: frozenset[str]  # repo-relative paths not clean at turn start
    dirty_dirs: tuple[str, ...]  # untracked folders ("dir/"): every path under them is dirty
    started_at: float
    project_id: str = ""

    def was_dirty(self, rel: str) -> bool:
        return rel in self.dirty or any(rel.startswith(d) for d in self.dirty_dirs)


@dataclass(frozen=True, slots=True)
class AgentCommitResult:
    commit: str | None  # the new commit, or None when nothing was committed
    paths: tuple[str, ...] = ()  # repo-relative paths committed (or that would have been)
    skipped: str = ""  # why no commit was made, when there was something to commit
    warning: str = ""  # text for the UI; set when the user must look (dirty paths, index)
    dirty_paths: tuple[str, ...] = ()  # agent paths the user had dirty at turn start
    outside: tuple[str, ...] = ()  # written paths outside this repository (ignored)
    ignored: tuple[str, ...] = ()  # written paths git ignores (never committed)
    turn: int = 0  # the turn number the commit message used
    early_paths: tuple[str, ...] = ()  # dirty only because the agent wrote them before the turn was seen
    changed_outside: tuple[str, ...] = ()  # not what the agent's writes produce: left uncommitted
    unverified: tuple[str, ...] = ()  # what the agent wrote cannot be told: left uncommitted
