"""The Projects tab: the projects pane fed through the app's StoreData in thread workers.

It gets the project records with each session listing (from the Sessions tab, through the
screen); a linked commit's turn bubbles up as `LinkedTurnChosen` for the screen to open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work
from textual.widget import Widget

from opmem_tui.widgets.messages import (
    BlameRequested,
    CommitHighlighted,
    LinkedTurnChosen,
    MoreCommitsWanted,
    ProjectHighlighted,
)
from opmem_tui.widgets.projects_pane import NO_PROJECTS, ProjectsPane

from ..app import home_relative
from ..commands import PaletteCommand
from ..data import CommitPage, ListingView, StoreData
from ..screens.ask_text import AskTextScreen
from ..screens.blame import BlameScreen
from ..workers import ReportsWorkerErrors, deliver
from . import Tab

if TYPE_CHECKING:
    from ..app import OpmemApp


class ProjectsTab(Tab, ReportsWorkerErrors, ProjectsPane):
    """Project list, the chosen project's commits (a page at a time) and a commit's diff."""

    def __init__(self, *, now: Callable[[], float], id: str | None = None) -> None:
        super().__init__(now=now, id=id)
        self.listing_view: ListingView | None = None

    @property
    def data(self) -> StoreData:
        app: OpmemApp = self.app  # type: ignore[assignment]
        return app.data

    def default_focus(self) -> Widget | None:
        return self.project_list if self.project_list.display else None

    def set_listing(self, view: ListingView) -> None:
        self.listing_view = view
        if self.is_mounted:  # before that its children may not be composed: on_mount shows it
            self._show_listing(view)

    def on_mount(self) -> None:
        if self.listing_view is not None:
            self._show_listing(self.listing_view)

    def _show_listing(self, view: ListingView) -> None:
        self.set_projects(
            list(view.projects.values()), view.projects_message or NO_PROJECTS, missing=view.missing_projects
        )

    def on_project_highlighted(self, message: ProjectHighlighted) -> None:
        log = self.commit_log
        log.reset(message.project_id)
        if message.project_id is None:
            return
        view = self.listing_view
        project = view.projects.get(message.project_id) if view is not None else None
        if project is not None and view is not None and message.project_id in view.missing_projects:
            self.set_status("")
            self.diff_view.show_message(
                f"The folder {home_relative(str(project.workdir))} is gone (moved or deleted). "
                f"Put it back to see its history, or `opmem projects unbind {project.id}`."
            )
            return
        self.diff_view.show_message("Loading commits…")
        self.set_status("Loading commits…")
        self._load_commits(message.project_id, None)

    def on_more_commits_wanted(self, message: MoreCommitsWanted) -> None:
        log = self.commit_log
        if log.project_id == message.project_id and log.commits:
            self.set_status(f"{len(log.commits)} commits loaded, loading more…")
            self._load_commits(message.project_id, log.commits[-1].oid)

    @work(thread=True, exclusive=True, group="commits", exit_on_error=False, description="Reading the project log")
    def _load_commits(self, project_id: str, after: str | None) -> None:
        view = self.listing_view
        titles = {m.id: m.display_title for m in view.listing.sessions} if view is not None else {}
        page = self.data.commit_page(project_id, after, titles)
        deliver(self, self._add_commits, project_id, page)

    def _add_commits(self, project_id: str, page: CommitPage) -> None:
        log = self.commit_log
        if log.project_id != project_id:
            return
        log.add_page(project_id, list(page.commits), dict(page.links), page.complete)
        loaded = len(log.commits)
        if not loaded:
            self.diff_view.show_message("This project has no commits yet.")
        more = "" if page.complete else " (more load as you scroll)"
        slow = f" · {page.millis / 1000:.1f} s" if page.millis >= 1000 else ""  # like tig: say when it took long
        self.set_status(f"{loaded} commit{'s' if loaded != 1 else ''} loaded{more}{slow}")

    def on_commit_highlighted(self, message: CommitHighlighted) -> None:
        self._load_diff(message.project_id, message.oid)

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False, description="Reading the commit")
    def _load_diff(self, project_id: str, oid: str) -> None:
        detail = self.data.commit_detail(project_id, oid)
        deliver(self, self.diff_view.show_detail, detail)

    # -- blame (issue 26) ----------------------------------------------------------------------
    def on_blame_requested(self, message: BlameRequested) -> None:
        message.stop()
        self.blame(message.path)

    def blame(self, path: str) -> None:
        """The blame of a file of the project on screen; enter on a line opens its turn."""
        project_id = self.commit_log.project_id
        if project_id is None:
            self.app.notify("Pick a project first.", markup=False)
            return

        def chosen(link: LinkedTurnChosen | None) -> None:
            if link is not None:  # bubbles to the screen, which opens the turn's replay
                self.post_message(LinkedTurnChosen(link.session_id, link.turn, link.commit, link.head_id))

        self.app.push_screen(BlameScreen(project_id, path), chosen)

    def palette_commands(self) -> list[PaletteCommand]:
        if self.commit_log.project_id is None:
            return []
        return [PaletteCommand("Blame a file…", "Which session turn wrote each line of a file", self.ask_blame)]

    def ask_blame(self) -> None:
        current = self.diff_view.file_on_screen() or ""

        def done(path: str | None) -> None:
            if path:
                self.blame(path)

        self.app.push_screen(
            AskTextScreen("Blame a file of the project", current, placeholder="a path in the project, e.g. src/app.py"),
            done,
        )
