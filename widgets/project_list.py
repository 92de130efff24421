"""Projects with their status and session counts; the cursor picks the project shown right."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from opmem_tui.backend.projects.registry import Project

from .messages import ProjectHighlighted
from .safe_text import one_line
from .styling import theme_style

STATUS_VARIABLE = {"active": "success", "paused": "warning", "done": "text-muted"}


class ProjectList(DataTable):
    """Rows are the registry's Project records (id, name, workdir, status, sessions)."""

    BINDINGS = [Binding("enter", "show_commits", "Commits", id="projects.commits")]

    DEFAULT_CSS = """
    ProjectList { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False, show_cursor=True)
        self.projects: list[Project] = []
        self.missing: frozenset[str] = frozenset()
        self._announced: str | None = None

    def on_mount(self) -> None:
        self.add_column("Project", key="name")
        self.add_column("Status", key="status", width=7)
        self.add_column("Sessions", key="sessions", width=8)
        self.watch(self.app, "theme", lambda: self.set_projects(self.projects), init=False)

    def set_projects(self, projects: Sequence[Project], missing: frozenset[str] | None = None) -> None:
        """Rows for the registry's projects; `missing`: ids whose folder is gone (None: as before)."""
        keep = self.current.id if self.current else None
        if missing is not None:
            if keep is not None and (keep in missing) != (keep in self.missing):
                self._announced = None  # its folder came or went: show the right pane again
            self.missing = missing
        self.projects = sorted(projects, key=lambda p: (p.status != "active", p.name.casefold()))
        self.clear()
        self.add_rows([self._row(p) for p in self.projects])
        index = next((i for i, p in enumerate(self.projects) if p.id == keep), 0)
        if self.projects:
            self.move_cursor(row=index, animate=False)
        self._announce()

    def _row(self, project: Project) -> tuple[Text, Text, Text]:
        status = "missing" if project.id in self.missing else one_line(project.status, 10)
        variable = "error" if project.id in self.missing else STATUS_VARIABLE.get(project.status, "foreground")
        return (
            Text(one_line(project.name, 60)),
            Text(status, style=theme_style(self, variable)),
            Text(str(len(project.sessions)), justify="right"),
        )

    @property
    def current(self) -> Project | None:
        row = self.cursor_row
        return self.projects[row] if 0 <= row < len(self.projects) else None

    def select_project(self, project_id: str) -> bool:
        """Put the cursor on a project (False: it is not listed)."""
        for row, project in enumerate(self.projects):
            if project.id == project_id:
                self.move_cursor(row=row)
                self._announce()
                return True
        return False

    def _announce(self) -> None:
        current = self.current
        pid = current.id if current else None
        if pid != self._announced:
            self._announced = pid
            self.post_message(ProjectHighlighted(pid))

    def action_show_commits(self) -> None:
        """enter: move to the highlighted project's commits."""
        log = self.screen.query("CommitLog")
        if log:
            log.first().focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._announce()
