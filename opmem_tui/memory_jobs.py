"""The memory's jobs on the job bar: distil now, the deep sleep, rebuilding the search index,
undoing an alias merge, installing the agent hooks; and the idle distillation while the app runs.

A mixin for `Jobs` (jobs.py): it uses the bar's one-job-at-a-time slot (`_begin`/`_end`,
`_worker`) and its progress. Distillations run on the store's Distiller thread
(backend/distill/triggers.py); a thread worker here follows it (progress, end) and passes
ctrl+x on as `Distiller.cancel()`, which stops at the next batch edge. The index rebuild is
stopped by its progress callback: the old index stays until the new one is complete.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work
from textual.worker import Worker, get_current_worker

from opmem_tui.backend.model import OpmemError
from opmem_tui.widgets.safe_text import one_line

from .app import home_relative
from .commands import PaletteCommand
from .screens.confirm import ConfirmScreen
from .screens.pick_merge import PickMergeScreen

if TYPE_CHECKING:
    from opmem_tui.backend.distill.triggers import Distiller, JobStatus

    from .app import OpmemApp
    from .data import StoreData
    from .memory_data import AliasChoice, MemoryData

JOBS_GROUP = "jobs"
FOLLOW_STEP = 0.25  # seconds between looks at ctrl+x while a distillation runs
TITLES = {"distil": "Distilling", "sleep": "Deep sleep", "flush": "Flushing"}


class IndexRebuildCancelled(Exception):
    """Raised from the rebuild's progress callback when the job was cancelled."""


class MemoryJobs:
    """Mixin for the job bar (`Jobs`): the memory commands of the palette and the idle runs."""

    _worker: Worker[None] | None
    app: OpmemApp
    data: StoreData

    if TYPE_CHECKING:  # provided by Jobs / JobBar

        def _begin(self, title: str) -> bool: ...
        def _end(self) -> None: ...
        def report_progress(self, done: int, total: int | None, label: str = "") -> None: ...
        def set_interval(self, interval: float, callback: Callable[[], object]) -> object: ...

    @property
    def memory(self) -> MemoryData:
        return self.data.memory

    # -- palette ---------------------------------------------------------------------------
    def memory_commands(self, session_id: str | None, session_title: str = "") -> list[PaletteCommand]:
        llm = self.memory.llm_configured()
        commands = [
            PaletteCommand(
                "Distil now: all sessions (rules)",
                "Distil what is new in every session into the memory, offline",
                lambda: self.start_distil(None, False),
            )
        ]
        if session_id:
            name = one_line(session_title or session_id, 40)
            commands.append(
                PaletteCommand(
                    "Distil now: this session (rules)",
                    f"Distil “{name}” into the memory, offline",
                    lambda: self.start_distil((session_id,), False),
                )
            )
        if llm:  # offered only where an LLM is configured ([llm] base_url)
            commands.append(
                PaletteCommand(
                    "Distil now: all sessions (LLM)",
                    "Distil every session with the configured LLM",
                    lambda: self.start_distil(None, True),
                )
            )
            if session_id:
                commands.append(
                    PaletteCommand(
                        "Distil now: this session (LLM)",
                        f"Distil “{one_line(session_title or session_id, 40)}” with the configured LLM",
                        lambda: self.start_distil((session_id,), True),
                    )
                )
        commands += [
            PaletteCommand(
                "Deep sleep",
                "Consolidate the memory now: re-link aliases, supersede, pack, rewrite core.md",
                self.start_sleep,
            ),
            PaletteCommand(
                "Rebuild the search index", "Index every session and memory record from scratch", self.start_rebuild
            ),
            PaletteCommand("Undo an alias merge…", "Pick a merge of two entity names to undo", self.ask_unmerge),
            PaletteCommand(
                "Install agent hooks (Claude Code)",
                "Claude Code runs `opmem flush` before compacting and at session end",
                self.ask_install_hooks,
            ),
        ]
        return commands

    # -- distillation ----------------------------------------------------------------------
    def start_distil(self, sessions: tuple[str, ...] | None, llm: bool) -> None:
        what = "this session" if sessions else "all sessions"
        self._start_distiller(
            f"Distilling {what}{' with the LLM' if llm else ''}", lambda d: d.distil(sessions, llm=llm)
        )

    def start_sleep(self) -> None:
        self._start_distiller("Deep sleep", lambda d: d.sleep())

    def _start_distiller(self, title: str, start: Callable[[Distiller], bool]) -> None:
        if self._begin(title):
            self._worker = self._follow_distiller(start, True)

    @work(thread=True, group=JOBS_GROUP, exit_on_error=False, description="Distilling")
    def _follow_distiller(self, start: Callable[[Distiller], bool] | None, announce: bool) -> None:
        """Start a distiller job (or follow the one under way: start None) until it ends."""
        worker = get_current_worker()
        try:
            distiller = self.memory.distiller
            ended = threading.Event()

            def listen(status: JobStatus) -> None:
                if status.running and status.progress is not None:
                    step = status.progress
                    self.report_progress(step.done, step.total or None, step.stage)
                elif not status.running:
                    ended.set()

            distiller.listeners.append(listen)
            try:
                if start is not None and not start(distiller):
                    self.app.notify(
                        "A distillation is running already (maybe `opmem watch` or the idle run).",
                        severity="warning",
                        markup=False,
                    )
                    return
                if not distiller.busy:
                    ended.set()
                cancelled = False
                while not ended.wait(FOLLOW_STEP):
                    if worker.is_cancelled and not cancelled:
                        cancelled = True
                        distiller.cancel()
            finally:
                distiller.listeners.remove(listen)
            if announce or distiller.status().error:
                self._announce(distiller.status())
        finally:
            self.app.call_from_thread(self._end)

    def _announce(self, status: JobStatus) -> None:
        title = TITLES.get(status.kind, "Distillation")
        if status.error:
            store = os.path.abspath(self.data.home.path) + os.sep  # the paths in errors are whole ones
            error = home_relative(status.error.replace(store, ""))  # memory/...
            self.app.notify(one_line(error, 300), title=title, severity="error", markup=False, timeout=10)
            return
        report = status.report
        if report is None:
            return
        line = report.line()
        if report.cancelled:
            line = f"Cancelled at a batch edge; kept what was done: {line}"
        self.app.notify(one_line(line, 400), title=title, markup=False, timeout=10)

    # -- idle runs -------------------------------------------------------------------------
    def start_idle_distillation(self, every: float) -> None:
        """Ask the Distiller every `every` seconds to distil idle sessions (or start the daily
        sleep when due); what it starts shows on the bar when the bar is free."""
        if every > 0:
            self.set_interval(every, self._idle_tick)

    def _idle_tick(self) -> None:
        if self._worker is None:
            self._tick()

    @work(thread=True, exclusive=True, group="distil-tick", exit_on_error=False, description="Idle distillation")
    def _tick(self) -> None:
        started = self.memory.distiller.tick()
        if started:
            self.app.call_from_thread(self._show_idle_job, started)

    def _show_idle_job(self, kind: str) -> None:
        if self._worker is None and self._begin(f"{TITLES.get(kind, 'Distilling')} idle sessions"):
            self._worker = self._follow_distiller(None, False)

    # -- search index ----------------------------------------------------------------------
    def start_rebuild(self) -> None:
        if self._begin("Rebuilding the search index"):
            self._worker = self._rebuild()

    @work(thread=True, group=JOBS_GROUP, exit_on_error=False, description="Rebuilding the search index")
    def _rebuild(self) -> None:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise IndexRebuildCancelled
            self.report_progress(done, total or None, "sessions")

        try:
            report = self.memory.rebuild_index(progress)
            problems = [one_line(p, 160) for p in report.problems[:3]]
            text = f"{report.sessions_seen:,} sessions, {report.records:,} memory records indexed"
            self.app.notify("\n".join([text, *problems]), title="Search index", markup=False, timeout=10)
        except IndexRebuildCancelled:
            self.app.notify("Rebuild cancelled; the previous index is kept.", title="Search index", markup=False)
        except OpmemError as exc:
            self.app.notify(one_line(str(exc), 300), title="Search index", severity="error", markup=False)
        finally:
            self.app.call_from_thread(self._end)

    # -- alias merges ----------------------------------------------------------------------
    def ask_unmerge(self) -> None:
        self._load_merges()

    @work(thread=True, exclusive=True, group="merges", exit_on_error=False, description="Reading alias merges")
    def _load_merges(self) -> None:
        choices = self.memory.alias_merges()
        self.app.call_from_thread(self._pick_merge, choices)

    def _pick_merge(self, choices: tuple[AliasChoice, ...]) -> None:
        if not choices:
            self.app.notify("No alias merges to undo.", title="Aliases", markup=False)
            return

        def chosen(choice: AliasChoice | None) -> None:
            if choice is not None:
                self._unmerge(choice)

        self.app.push_screen(PickMergeScreen(choices), chosen)

    @work(thread=True, group="edits", exit_on_error=False, description="Undoing the alias merge")
    def _unmerge(self, choice: AliasChoice) -> None:
        done = self.memory.unmerge(choice.merge_id)
        merged, into = one_line(choice.merged.name, 60), one_line(choice.into.name, 60)
        text = f"“{merged}” is its own entity again (was merged into “{into}”)." if done else "Already undone."
        self.app.notify(text, title="Aliases", markup=False)
        self.app.call_from_thread(self._memory_edited)

    def _memory_edited(self) -> None:
        from .jobs import Jobs

        self.post_message(Jobs.Finished())  # type: ignore[attr-defined]  # the Memory tab re-reads

    # -- hooks -----------------------------------------------------------------------------
    def ask_install_hooks(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._install_hooks()

        question = (
            "Add a PreCompact and a SessionEnd hook to ~/.claude/settings.json that run `opmem flush` "
            "for this store? Other hooks are kept; the old file is backed up."
        )
        self.app.push_screen(ConfirmScreen(question, yes="Install", title="Install agent hooks"), answered)

    @work(thread=True, group="edits", exit_on_error=False, description="Installing the hooks")
    def _install_hooks(self) -> None:
        try:
            change = self.memory.install_hooks()
        except OpmemError as exc:
            self.app.notify(one_line(str(exc), 300), title="Hooks", severity="error", markup=False)
            return
        if change.added:
            text = f"Added to {', '.join(change.added)} in {home_relative(str(change.settings))}"
            if change.backup is not None:
                text += f" (backup: {change.backup.name})"
        else:
            text = f"Already installed in {home_relative(str(change.settings))}"
        self.app.notify(text, title="Hooks", markup=False)
