"""Where a TUI round trip spends its time: marks taken inside the real app, frames on screen.

Used by bench/tui_graph.py and bench/tui_search.py. `Marks.wrap` puts a mark before and/or
after a method of a class (the app's own code, unchanged), `FramedApp` notes when a frame is
written to the terminal, `key_to_frame` presses a key and times it to the first frame written
after a given mark, and `stage_table` prints, for each step between two marks, the median and
p95 wall time over the runs: what is waiting (a timer, a thread hop, the event loop) and what
is work.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from harness import fmt
from textual.pilot import Pilot

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


async def key_to_frame(app: FramedApp, pilot: Pilot, marks: Marks, key: str, done: str) -> tuple[float, float]:
    """Press `key` and wait for the first frame written after the mark `done`: (wall, process
    CPU) from the key to that frame. The run's marks start at the key ("press"); the frame is
    marked "frame". The caller checks what the frame shows, then keeps the marks."""
    frame = asyncio.Event()
    app.on_frame = frame.set
    marks.start()
    started, started_cpu = time.perf_counter(), time.process_time()
    marks.at["press"] = started
    press = asyncio.create_task(pilot.press(key))
    while done not in marks.at or app.frame_after(marks.at[done]) is None:
        frame.clear()
        await frame.wait()
    shown = app.frame_after(marks.at[done])
    assert shown is not None
    marks.at["frame"] = shown
    await press
    return shown - started, app.frame_cpu[shown] - started_cpu
