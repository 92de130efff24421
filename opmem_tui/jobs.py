"""Long jobs (import, verify/repair) on the job bar: one at a time, with progress, cancellable.

Each job is a thread worker in the "jobs" group; ctrl+x cancels it, and the backend call asks
`worker.is_cancelled` between files, so it stops at the next one. When a job ends, `Finished`
bubbles up (the screen re-reads the session list).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.worker import Worker, get_current_worker

from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.widgets.job_bar import JobBar
from opmem_tui.widgets.safe_text import one_line

from .app import home_relative
from .commands import PaletteCommand
from .data import Found, StoreData
from .memory_jobs import MemoryJobs
from .screens.confirm import ConfirmScreen
from .screens.import_path import ImportPathScreen, ImportRequest
from .workers import ReportsWorkerErrors

if TYPE_CHECKING:
    from .app import OpmemApp

JOBS_GROUP = "jobs"


class Jobs(MemoryJobs, ReportsWorkerErrors, JobBar):
    """The job bar, and the jobs it shows (the memory's in memory_jobs.py)."""

    class Finished(Message):
        """A job ended (done, failed or cancelled): the store may have changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._worker: Worker[None] | None = None

    @property
    def data(self) -> StoreData:
        app: OpmemApp = self.app  # type: ignore[assignment]
        return app.data

    @property
    def running(self) -> bool:
        return self._worker is not None

    def _begin(self, title: str) -> bool:
        if self._worker is not None:
            self.app.notify("Another job is running; cancel it first (ctrl+x).", severity="warning", markup=False)
            return False
        self.start(title)
        return True

    def _end(self) -> None:
        self._worker = None
        self.finish()
        self.post_message(Jobs.Finished())

    def report_progress(self, done: int, total: int | None, label: str = "") -> None:
        """Progress callback for backend jobs (thread-safe)."""
        name = label.replace("\\", "/").rsplit("/", 1)[-1] if label else ""
        self.app.call_from_thread(self.progress, done, total, one_line(name, 80))

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self.app.notify("Cancelling…", markup=False)

    # -- palette ---------------------------------------------------------------------------
    def import_commands(self) -> list[PaletteCommand]:
        commands: list[PaletteCommand] = []
        sources = self.data.import_sources()
        for source, label in sources:
            if self.data.import_needs_path(source):
                commands.append(
                    PaletteCommand(
                        f"Import sessions: {label}…",
                        f"Read {label} sessions from a file or folder you choose",
                        lambda source=source: self.ask_import_path(source),
                    )
                )
                continue
            commands.append(
                PaletteCommand(
                    f"Import sessions: {label}",
                    f"Read {label} sessions from their default folder into the store",
                    lambda source=source, label=label: self.start_import(source, label),
                )
            )
        if sources:
            commands.append(
                PaletteCommand(
                    "Import every agent's sessions found on this machine",
                    "Look in each agent's default folders (VS Code and its forks too) and import what is there",
                    lambda: self.start_import_found(None),
                )
            )
            commands.append(
                PaletteCommand(
                    "Import sessions from a path…",
                    "Read sessions of any agent from a file or folder you choose",
                    self.ask_import_path,
                )
            )
        return commands

    def store_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand(
                "Verify store",
                "Check every session repo; report problems, change nothing",
                lambda: self.start_verify(False),
            ),
            PaletteCommand(
                "Repair store", "Check every session repo and backfill missing commits", lambda: self.start_verify(True)
            ),
        ]

    def cancel_commands(self) -> list[PaletteCommand]:
        if self._worker is None:
            return []
        return [PaletteCommand("Cancel running job", "Stop the job shown in the job bar", self.cancel)]

    # -- import ----------------------------------------------------------------------------
    def ask_import_path(self, source: str | None = None) -> None:
        def chosen(request: ImportRequest | None) -> None:
            if request is not None:
                self.start_import(request.source, request.label, request.path)

        self.app.push_screen(ImportPathScreen(self.data.import_sources(), source), chosen)

    def start_import(self, source: str, label: str, path: Path | None = None) -> None:
        if self._begin(f"Importing {label} sessions"):
            self._worker = self._import(source, label, path)

    @work(thread=True, group=JOBS_GROUP, exit_on_error=False, description="Importing sessions")
    def _import(self, source: str, label: str, path: Path | None) -> None:
        worker = get_current_worker()
        try:
            paths = [path] if path is not None else None
            report = self.data.run_import(
                source, paths, progress=self.report_progress, cancel=lambda: worker.is_cancelled
            )
            if worker.is_cancelled:
                message, severity = f"{label} import cancelled", "information"
            else:
                message, severity = describe_import(label, report)
            self.app.notify(message, title="Import", severity=severity, markup=False, timeout=10)
        finally:
            self.app.call_from_thread(self._end)

    # -- every agent found -----------------------------------------------------------------
    def offer_found_agents(self) -> None:
        """On an empty store: look for agents' sessions and, when there are some, offer to import them."""
        self._look_for_agents()

    @work(thread=True, group="discovery", exit_on_error=False, description="Looking for agents' sessions")
    def _look_for_agents(self) -> None:
        if not self.data.store_is_empty():
            return
        found = [agent for agent in self.data.find_agents() if agent.sessions]
        if found:
            self.app.call_from_thread(self._offer, found)

    def _offer(self, found: list[Found]) -> None:
        question = "Found: " + ", ".join(one_line(agent.summary(), 60) for agent in found) + " — import?"

        def answered(yes: bool | None) -> None:
            if yes:
                self.start_import_found(found)

        self.app.push_screen(ConfirmScreen(question, yes="Import", title="Agents' sessions on this machine"), answered)

    def start_import_found(self, found: list[Found] | None) -> None:
        """Import each agent of `found` (None: look for them first), one after the other, with progress."""
        if self._begin("Importing every agent's sessions"):
            self._worker = self._import_found(found)

    @work(thread=True, group=JOBS_GROUP, exit_on_error=False, description="Importing every agent's sessions")
    def _import_found(self, found: list[Found] | None) -> None:
        worker = get_current_worker()
        try:
            if found is None:
                found = self.data.find_agents(
                    progress=lambda name: self.report_progress(0, None, f"looking for {name}")
                )
            lines: list[str] = []
            warnings = 0
            for agent in found:
                if worker.is_cancelled:
                    break
                report = self.data.run_import(
                    agent.name, None, progress=self.report_progress, cancel=lambda: worker.is_cancelled
                )
                message, _ = describe_import(agent.label, report)
                lines.append(message.splitlines()[0])
                warnings += len(report.warnings)
            if not found:
                lines.append("No agent sessions found in the default folders: ctrl+p → Import sessions from a path…")
            elif worker.is_cancelled:
                lines.append("Cancelled; import again for the rest.")
            if warnings:
                lines.append(f"{warnings} problem(s): `opmem import` lists them by file")
            severity: SeverityLevel = "warning" if warnings or not found else "information"
            self.app.notify("\n".join(lines), title="Import", severity=severity, markup=False, timeout=15)
        finally:
            self.app.call_from_thread(self._end)

    # -- verify ----------------------------------------------------------------------------
    def start_verify(self, repair: bool) -> None:
        if self._begin("Repairing the store…" if repair else "Verifying the store…"):
            self._worker = self._verify(repair)

    @work(thread=True, group=JOBS_GROUP, exit_on_error=False, description="Verifying the store")
    def _verify(self, repair: bool) -> None:
        try:
            report = self.data.verify(repair=repair)
            lines = [f"{report.checked} sessions checked"]
            if report.repaired:
                lines.append(f"{len(report.repaired)} repaired")
            lines += [one_line(p, 160) for p in report.problems[:8]]
            self.app.notify(
                "\n".join(lines),
                title="Store OK" if report.ok else "Store problems",
                severity="information" if report.ok else "warning",
                markup=False,
                timeout=10,
            )
        finally:
            self.app.call_from_thread(self._end)


def describe_import(label: str, report: ImportReport) -> tuple[str, SeverityLevel]:
    """The notification for a finished import: what came in, and the first problems by name."""
    new, seen, turns, skipped = report.new_sessions, report.sessions, report.turns, report.skipped
    warnings = list(report.warnings)
    if seen or skipped:
        parts = [f"{new} new session{'s' if new != 1 else ''}"]
        if seen > new:
            parts.append(f"{seen - new} updated")
        parts.append(f"{turns} turn{'s' if turns != 1 else ''}")
        if skipped:
            parts.append(f"{skipped} unchanged file{'s' if skipped != 1 else ''} skipped")
        lines = [f"{label}: " + ", ".join(parts)]
    else:
        lines = [f"{label}: no sessions found."]
    for warning in warnings[:3]:
        lines.append("• " + one_line(home_relative(warning), 160))
    if len(warnings) > 3:
        lines.append(f"… and {len(warnings) - 3} more problems")
    if not seen and not skipped:
        lines.append("Another folder? ctrl+p → Import sessions from a path…")
    severity: SeverityLevel = "warning" if warnings or not (seen or skipped) else "information"
    return "\n".join(lines), severity
