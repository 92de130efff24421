"""Home: the facade over one opmem state directory. The TUI and the CLI talk only to this."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from .config import Config
from .memory.readonly import ReadOnlyMemoryStore
from .memory.store import MemoryStore
from .model import Node, OpmemError, SessionMeta
from .privacy.exclusions import Exclusions, Visibility, exclusions
from .store.sessions import SessionStore

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .distill.triggers import Distiller
    from .importers.hooks import IngestHooks
    from .memory.search import SearchHit
    from .memory.search_service import SearchService
    from .projects.registry import Project, ProjectRegistry
    from .usage.index import UsageIndex

HOME_ENV = "OPMEM_HOME"


def default_home_path() -> Path:
    """`$OPMEM_HOME`, else the platform's user data folder for opmem."""
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("opmem", appauthor=False))


class Home:
    """One state directory: config.toml, sessions/, projects/, memory/."""

    def __init__(self, path: Path | str | None = None, *, durable: bool = True) -> None:
        self.path = Path(path).expanduser() if path is not None else default_home_path()
        self.durable = durable

    @cached_property
    def config(self) -> Config:
        return Config(self.path / "config.toml")

    @property
    def sessions_dir(self) -> Path:
        return self.path / "sessions"

    @property
    def projects_dir(self) -> Path:
        return self.path / "projects"

    @property
    def memory_dir(self) -> Path:
        return self.path / "memory"

    @cached_property
    def sessions(self) -> SessionStore:
        settings = self.config.store  # env overrides already applied
        return SessionStore(
            self.sessions_dir,
            cache_cap=settings.session_cache_cap,
            pack_threshold=settings.pack_after_turns,
            durable=self.durable,
            lock_timeout=settings.lock_timeout_s,
        )

    @cached_property
    def projects(self) -> ProjectRegistry:
        from .projects.registry import ProjectRegistry  # pygit2-heavy; only when projects are used

        return ProjectRegistry(self.path)

    @cached_property
    def memory(self) -> MemoryStore:
        """The timeline and knowledge graph under memory/ (backend/memory/store.py documents the API)."""
        return MemoryStore(self.memory_dir, session_exists=self.visible, durable=self.durable)

    def memory_readonly(self) -> MemoryStore:
        """A new reader of memory/ that writes nothing on disk (backend/memory/readonly.py)."""
        return ReadOnlyMemoryStore(self.memory_dir, session_exists=self.visible)

    @cached_property
    def visible(self) -> Visibility:
        """session id -> whether the memory may show what it gave: it exists and is neither private
        nor excluded by `[memory] exclude_projects` / `exclude_paths` (backend/privacy/exclusions.py)."""
        return Visibility(self)

    def exclusions(self) -> Exclusions:
        """The privacy exclusions as configured now (`Exclusions.reason(meta)`)."""
        return exclusions(self)

    @cached_property
    def search_index(self) -> SearchService:
        """memory/index.sqlite: search, update, rebuild (backend/memory/search_service.py)."""
        from .memory.search_service import SearchService

        return SearchService(
            self.memory_dir,
            self.sessions,
            dense=self.config.search.dense,
            rules=self.exclusions,
            withheld=lambda sid: not self.visible(sid) and self.sessions.exists(sid),
            scope_of=self._session_scope,
        )

    def _session_scope(self, meta: SessionMeta, nodes: Sequence[Node]) -> str:
        """The scope a session's memory and turns live in: the project it belongs to (collect decides)."""
        from .distill.collect import session_info

        return session_info(self.sessions, self.projects, meta, nodes).scope

    @cached_property
    def usage(self) -> UsageIndex:
        """memory/usage.sqlite: tokens and cost per reply (backend/usage/index.py)."""
        from .usage.index import USAGE_FILE, UsageIndex

        return UsageIndex(self.memory_dir / USAGE_FILE, self.sessions)

    def search(
        self,
        query: str,
        scope: str | None = None,
        k: int = 10,
        since: float | None = None,
        until: float | None = None,
    ) -> tuple[SearchHit, ...]:
        """Ranked hits over sessions and memory records, each with its provenance."""
        return self.search_index.search(query, scope, k, since, until)

    @cached_property
    def distiller(self) -> Distiller:
        """Idle distillation, the daily sleep and runs on demand, for the app and `opmem watch`
        (backend/distill/triggers.py); with an LLM configured it also titles new sessions."""
        from .distill.triggers import background_distiller  # the pipeline loads only when asked for

        return background_distiller(self)

    def ingest_hooks(self) -> IngestHooks:
        """What runs after each ingest batch of every import (`opmem import`, `opmem watch`, the
        app's palette, the demo): the search and usage index updates; and on a watch's idle tick, the
        idle-distillation trigger. One list, so no way of importing leaves the index behind."""
        from .importers.hooks import IngestHooks

        return IngestHooks(
            after_ingest=(self.search_index.after_ingest, self.usage.after_ingest), on_idle=(self.distiller.tick,)
        )

    def unbind_project(self, project_id: str) -> Project:
        """Forget a project and clear it from its sessions' meta.json; its folder and .git stay."""
        project = self.projects.unbind(project_id)
        for session_id in project.sessions:
            try:
                if self.sessions.get_meta(session_id).project_id == project_id:
                    self.sessions.update_session(session_id, project_id="")
            except OpmemError:
                continue  # a session deleted since it was bound
        return project

    def exists(self) -> bool:
        return self.path.is_dir()

    def ensure(self) -> None:
        """Create the folder and a commented config.toml the first time."""
        self.path.mkdir(parents=True, exist_ok=True)
        if not self.config.path.exists():
            self.config.save()
