"""Where a TUI round trip spends its time: marks taken inside the real app, frames on screen.

Used by bench/tui_graph.py and bench/tui_search.py. `Marks.wrap` puts a mark before and/or
after a method of a class (the app's own code, unchanged), `FramedApp` notes when a frame is
written to the terminal, and `stage_table` prints, for each step between two marks, the median
and p95 wall time over the runs: what is waiting (a timer, a thread hop, the event loop) and
what is work.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from harness import fmt

import opmem_tui.app
from opmem_tui.app import OpmemApp


def p95(samples: Sequence[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1] if len(samples) >= 2 else samples[0]


class Marks:
    """Named times of the current run; a mark keeps its last time unless `first` is set."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.runs: list[dict[str, float]] = []

    def mark(self, name: str, first: bool = False) -> None:
        if not (first and name in self.at):
            self.at[name] = time.perf_counter()

    def wrap(
        self,
        cls: type,
        method: str,
        before: str | None = None,
        after: str | None = None,
        when: Callable[..., bool] | None = None,
    ) -> None:
        """Mark `before`/`after` around every call of `cls.method` (for which `when(*args)`)."""
        original = getattr(cls, method)

        @functools.wraps(original)
        def marked(*args, **kwargs):
            wanted = when is None or when(*args, **kwargs)
            if wanted and before:
                self.mark(before)
            result = original(*args, **kwargs)
            if wanted and after:
                self.mark(after)
            return result

        setattr(cls, method, marked)

    def start(self) -> None:
        self.at = {}

    def keep(self) -> None:
        self.runs.append(dict(self.at))


def stage_table(marks: Marks, steps: Sequence[tuple[str, str, str]]) -> None:
    """One line per (from, to, what): median and p95 over the runs that have both marks."""
    for start, end, what in steps:
        spans = [run[end] - run[start] for run in marks.runs if start in run and end in run]
        if spans:
            print(f"    {what:<52} median {fmt(statistics.median(spans)):>9}  p95 {fmt(p95(spans)):>9}")


class FramedApp(OpmemApp):
    """OpmemApp that notes when it writes a frame to the terminal."""

    CSS_PATH = Path(opmem_tui.app.__file__).with_name("app.tcss")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.frames: list[float] = []
        self.frame_cpu: dict[float, float] = {}  # frame time -> process CPU time then
        self.on_frame: Callable[[], object] = lambda: None

    def _display(self, screen, renderable) -> None:
        super()._display(screen, renderable)
        if renderable is not None:
            at = time.perf_counter()
            self.frames.append(at)
            self.frame_cpu[at] = time.process_time()
            self.on_frame()

    def frame_after(self, moment: float) -> float | None:
        """The first frame written at or after `moment`, if any yet."""
        found = None
        for at in reversed(self.frames):
            if at < moment:
                break
            found = at
        return found
