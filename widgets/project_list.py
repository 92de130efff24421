"""Projects with their status and session counts; the cursor picks the project shown right."""

from __future__ import annotations

from typing import Any, Sequence

from rich.text import Text
from textual.widgets import DataTable

from .messages import ProjectHighlighted
from .safe_text import one_line
from .styling import theme_style

STATUS_VARIABLE = {"active": "success", "paused": "warning", "done": "text-muted"}


class ProjectList(DataTable):
    """Rows are the registry's Project records (id, name, workdir, status, sessions)."""

    DEFAULT_CSS = """
    ProjectList { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False, show_cursor=True)
        self.projects: list[Any] = []
        self._announced: str | None = None

    def on_mount(self) -> None:
        self.add_column("Project", key="name")
        self.add_column("Status", key="status", width=7)
        self.add_column("Sessions", key="sessions", width=8)
        self.watch(self.app, "theme", lambda: self.set_projects(self.projects), init=False)

    def set_projects(self, projects: Sequence[Any]) -> None:
        keep = self.current.id if self.current else None
        self.projects = sorted(projects, key=lambda p: (p.status != "active", p.name.casefold()))
        self.clear()
        self.add_rows(
            [
                (
                    Text(one_line(p.name, 60)),
                    Text(one_line(p.status, 10), style=theme_style(self, STATUS_VARIABLE.get(p.status, "foreground"))),
                    Text(str(len(getattr(p, "sessions", ()) or ())), justify="right"),
                )
                for p in self.projects
            ]
        )
        index = next((i for i, p in enumerate(self.projects) if p.id == keep), 0)
        if self.projects:
            self.move_cursor(row=index, animate=False)
        self._announce()

    @property
    def current(self) -> Any | None:
        row = self.cursor_row
        return self.projects[row] if 0 <= row < len(self.projects) else None

    def _announce(self) -> None:
        current = self.current
        pid = current.id if current else None
        if pid != self._announced:
            self._announced = pid
            self.post_message(ProjectHighlighted(pid))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._announce()
