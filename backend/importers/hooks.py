"""Work that callers hang on imports without touching the import code: the extension point.

`run_import` and the watch loop call each `after_ingest` hook after every ingest batch (one
file of an import; one change, idle flush or catch-up of a watch) with the ids of the sessions
that batch wrote to (new nodes or refreshed meta). The watch loop also calls each `on_idle`
hook at most every `idle_every` seconds while it runs, changes or not: a clock for work that
waits for quiet (idle distillation, index maintenance).

Hooks run on the importing thread, one after the other: keep them short or hand the work
off. A hook that raises OpmemError becomes a warning of the batch's report; any other
exception is a bug and propagates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..model import OpmemError
from .base import ImportReport

AfterIngest = Callable[[frozenset[str]], object]
OnIdle = Callable[[], object]


@dataclass(frozen=True, slots=True)
class IngestHooks:
    after_ingest: tuple[AfterIngest, ...] = ()
    on_idle: tuple[OnIdle, ...] = ()
    idle_every: float = 5.0  # seconds between two on_idle calls of a watch

    def ingested(self, sessions: Iterable[str], report: ImportReport) -> None:
        """Tell every after_ingest hook which sessions a batch wrote to (nothing when none)."""
        touched = frozenset(sessions)
        if touched:
            for hook in self.after_ingest:
                _call("after-ingest hook", hook, report, touched)

    def idle(self, report: ImportReport) -> None:
        for hook in self.on_idle:
            _call("idle hook", hook, report)


def _call(kind: str, hook: Callable[..., object], report: ImportReport, *args: object) -> None:
    try:
        hook(*args)
    except OpmemError as exc:
        report.warn(kind, None, str(exc))
