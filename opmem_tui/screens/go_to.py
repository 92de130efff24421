"""Go to a session or a project by what the user types: its id, a unique prefix or its
title/name, resolved as the CLI and recall resolve it (backend/naming through StoreData). An
unknown or ambiguous name is a notification naming the candidates, never a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

from opmem_tui.backend.model import OpmemError

from ..commands import PaletteCommand
from .ask_text import AskTextScreen

if TYPE_CHECKING:
    from textual.widget import Widget

    from ..app import OpmemApp
    from ..tabs.sessions import SessionsTab


class GoTo(Screen[None]):
    """The main screen's "Go to session…" and "Go to project…" (a mixin)."""

    if TYPE_CHECKING:
        app: OpmemApp

        @property
        def sessions(self) -> SessionsTab: ...

        def show_tab(self, tab: str, focus: Widget | None) -> None: ...

    def go_to_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand(
                "Go to session…", "Open a session by its id, a unique start of it, or its title", self.ask_session
            ),
            PaletteCommand(
                "Go to project…", "Show a project by its id, its name or a unique start of either", self.ask_project
            ),
        ]

    def ask_session(self) -> None:
        self.app.push_screen(
            AskTextScreen("Go to session", placeholder="an id, the start of one, or a title"),
            lambda text: self.go_to_session(text) if text else None,
        )

    def ask_project(self) -> None:
        self.app.push_screen(
            AskTextScreen("Go to project", placeholder="an id, a name, or the start of either"),
            lambda text: self.go_to_project(text) if text else None,
        )

    def _unresolved(self, exc: OpmemError) -> None:
        self.app.notify(str(exc), title="Not found", severity="error", markup=False, timeout=10)

    def go_to_session(self, text: str) -> None:
        try:
            session_id = self.sessions.data.session_named(text)
        except OpmemError as exc:
            self._unresolved(exc)
            return
        self.show_tab("sessions", self.sessions.replay.view)
        self.sessions.open_session(session_id)

    def go_to_project(self, text: str) -> None:
        try:
            project = self.sessions.data.project_named(text)
        except OpmemError as exc:
            self._unresolved(exc)
            return
        self.show_tab("projects", None)
        self.call_after_refresh(self._select_project, project.id, project.name)

    def _select_project(self, project_id: str, name: str) -> None:
        from ..tabs.projects import ProjectsTab

        tabs = self.query(ProjectsTab)
        if not tabs or not tabs.first().project_list.select_project(project_id):
            self.app.notify(
                f"Project {name} ({project_id}) is known to the memory but bound to no folder here.",
                severity="warning",
                markup=False,
            )
            return
        tabs.first().project_list.focus()
