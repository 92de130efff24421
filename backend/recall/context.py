"""Who is asking: the caller's scope (project / agent) and the reply budget every tool honours."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import RecallSettings
from ..memory.store import MemoryStore
from ..projects.known import folder_projects, project_of_folder
from ..projects.registry import Project, ProjectNotFound
from .errors import NO_PROJECT, PRIVATE, UNKNOWN_PROJECT, RecallError, did_you_mean
from .search_access import SearchReader
from .session_access import SessionReader

if TYPE_CHECKING:
    from ..home import Home

DEFAULT_MAX_REPLY_BYTES = RecallSettings.max_reply_bytes


@dataclass(frozen=True, slots=True)
class Scope:
    """The caller's context: a project id and an agent id, either may be empty."""

    project_id: str = ""
    agent_id: str = ""

    @property
    def memory_scopes(self) -> frozenset[str] | None:
        """The scopes the memory queries take: the project's and the agent's (global is always
        seen); None (neither given) sees all."""
        scopes = frozenset(self._labels())
        return scopes or None

    @property
    def memory_scope(self) -> str | None:
        """The caller's scopes as one label for replies: "project:P", "agent:A" or "project:P + agent:A"."""
        return " + ".join(self._labels()) or None

    def _labels(self) -> list[str]:
        labels = [f"project:{self.project_id}"] if self.project_id else []
        return labels + ([f"agent:{self.agent_id}"] if self.agent_id else [])


@dataclass(frozen=True, slots=True)
class Recall:
    """What every tool gets first: the store, the caller's scope, the reply budget."""

    home: Home
    memory: MemoryStore  # read-only (ReadOnlyMemoryStore): writes nothing on disk
    search: SearchReader  # read-only; no hits while there is no index
    scope: Scope = field(default_factory=Scope)
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    now: float | None = None  # "now" for relative dates; None: the clock
    sessions: SessionReader = field(default_factory=SessionReader, compare=False, repr=False)

    def project(self, project_id: str | None) -> Project:
        """The project named by id (or name), else the caller's; a structured error otherwise."""
        wanted = project_id or self.scope.project_id
        if not wanted:
            raise RecallError(
                NO_PROJECT, "no project given, and the current folder is not in a bound project (see opmem projects)"
            )
        project = find_project(self.home, wanted)
        if self.home.exclusions().project_reason(project.id, project.name, project.workdir):
            raise RecallError(PRIVATE, f"project {wanted!r} is excluded from the memory ([memory] in config.toml)")
        return project

    def withheld_session(self, session_id: str) -> bool:
        """A session recall keeps out of its replies (private, or excluded by `[memory]`)."""
        return bool(session_id) and not self.home.visible(session_id) and self.home.sessions.exists(session_id)


def find_project(home: Home, wanted: str) -> Project:
    """The project `wanted` names (backend/naming: id, name or a unique prefix, bound or a folder
    project the memory knows); unknown or ambiguous ones are a structured error with candidates."""
    from ..naming import AmbiguousName, project

    try:
        return project(home, wanted)
    except AmbiguousName as exc:
        raise RecallError(UNKNOWN_PROJECT, str(exc).split(":", 1)[0], exc.candidates) from None
    except ProjectNotFound:
        choices = {p.id: f"{p.id} {p.name}" for p in (*home.projects.list_projects(), *folder_projects(home))}
        raise RecallError(UNKNOWN_PROJECT, f"no project {wanted!r}", did_you_mean(wanted, choices)) from None


def recall_for(
    home: Home,
    *,
    cwd: str | os.PathLike[str] | None = None,
    project: str | None = None,
    agent: str | None = None,
    now: float | None = None,
) -> Recall:
    """The context of a caller in `cwd` (default: the current folder), or of an explicit project."""
    if project:
        project_id = find_project(home, project).id
    else:
        project_id = project_of_folder(home, Path.cwd() if cwd is None else cwd)
    memory = home.memory_readonly()
    sessions = SessionReader()
    search = SearchReader(home.memory_dir, sessions, home)
    scope = Scope(project_id, agent or "")
    return Recall(home, memory, search, scope, home.config.recall.max_reply_bytes, now, sessions)
