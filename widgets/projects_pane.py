"""The Projects tab: project list on the left, the selected project's commits and a commit's
diff on the right. A container only; the screen feeds it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from opmem_tui.backend.projects.registry import Project

from .commit_log import CommitLog
from .diff_view import DiffView
from .project_list import ProjectList

NO_PROJECTS = "No projects yet: sessions that changed a folder bind it as a project (`opmem projects add PATH`)."


class ProjectsPane(Horizontal):
    DEFAULT_CSS = """
    ProjectsPane { height: 1fr; }
    ProjectsPane > #project-side { width: 28%; min-width: 34; border-right: vkey $panel; }
    ProjectsPane > #project-side > #project-empty { padding: 1; color: $text-muted; }
    ProjectsPane > #project-main { width: 1fr; }
    ProjectsPane > #project-main > CommitLog { height: 45%; border-bottom: hkey $panel; }
    ProjectsPane > #project-main > #commit-status { height: 1; color: $text-muted; background: $boost; padding: 0 1; }
    ProjectsPane > #project-main > DiffView { height: 1fr; }
    """

    def __init__(self, *, now: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self._now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="project-side"):
            yield Static(Content("Loading projects…"), id="project-empty")
            yield ProjectList(id="project-list")
        with Vertical(id="project-main"):
            yield CommitLog(now=self._now, id="commit-log")
            yield Static("", id="commit-status", markup=False)
            yield DiffView(id="diff-view")

    class Ready(Message):
        """Mounted (it is mounted lazily, after the first paint): the screen may feed it now."""

    def on_mount(self) -> None:
        self.post_message(ProjectsPane.Ready())

    @property
    def project_list(self) -> ProjectList:
        return self.query_one(ProjectList)

    @property
    def commit_log(self) -> CommitLog:
        return self.query_one(CommitLog)

    @property
    def diff_view(self) -> DiffView:
        return self.query_one(DiffView)

    def set_projects(
        self, projects: Sequence[Project], message: str = NO_PROJECTS, *, missing: frozenset[str] = frozenset()
    ) -> None:
        """`missing`: ids of projects whose folder is gone; their status reads "missing"."""
        empty = self.query_one("#project-empty", Static)
        empty.display = not projects
        empty.update(Content(message))
        self.project_list.display = bool(projects)
        self.project_list.set_projects(projects, missing)
        if not projects:
            self.commit_log.reset(None)
            self.diff_view.show_message("Select a project to see its commits.")
            self.set_status("")

    def set_status(self, text: str) -> None:
        self.query_one("#commit-status", Static).update(Content(text))

    def focus_list(self) -> None:
        if self.project_list.display:
            self.project_list.focus()
