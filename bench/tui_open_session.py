"""Cold open of a 2,000-turn session to its last turn on screen, beside os.listdir(history).

  python bench/tui_open_session.py [--quick]

The app runs on a store whose newest session is small; the 2,000-turn session is the next one
down. "Open" = from the key press that moves the list cursor onto it to the first frame the
app draws after the replay pane holds its last turn (header `Turn 2000 / 2000` and the turn's
lines); the key press is not awaited (a pilot's press waits for the app to go idle, which it
does only once the whole session is read). Cold: a new app and a new
Home each time, so nothing of the session is in memory (the OS file cache is warm, as it is for
the baseline). The baseline is `os.listdir()` of the session's history folder, the least any
reader of the node files must do. Also printed: the whole session filled in behind the last
turn (every turn steppable).

Each figure is printed in wall time and in CPU time (time.process_time(), every thread of the
process: the key press to that frame), the median of N runs (5; 3 with --quick) and the best.
On a loaded machine the wall clock is mostly waiting for a core; the CPU figure is the app's
own work.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, parser, report

import opmem_tui.app
from opmem_tui.app import OpmemApp
from opmem_tui.backend.home import Home
from opmem_tui.widgets.replay_view import ReplayPane

NOW = 1_767_225_600.0
BIG = "big-session"
TARGET_S = 0.100


def build(root: Path, turns: int) -> None:
    store = Home(root, durable=False).sessions
    start = NOW - 86_400
    for number in range(1, turns + 1):
        at = start + number * 10
        store.append_message(BIG, "user", f"Question {number}: what about part {number}?", created_at=at)
        reply = store.append_message(BIG, "assistant", f"Answer {number}. " * 20, created_at=at + 2)
        if number % 4 == 0:
            store.append_message(
                BIG, "tool", f"output of step {number}\n" * 5, called_by=reply.id, name="bash", created_at=at + 3
            )
        store.commit_turn(BIG)
    store.append_message("small", "user", "The newest session.", created_at=NOW - 60)
    store.append_message("small", "assistant", "Hello.", created_at=NOW - 55)
    store.commit_turn("small")


class TimedApp(OpmemApp):
    """OpmemApp that notes when (wall and CPU clock) it draws a frame."""

    CSS_PATH = Path(opmem_tui.app.__file__).with_name("app.tcss")

    def __init__(self, home: Home) -> None:
        super().__init__(home, now=lambda: NOW, watch=False, poll_interval=0)
        self.frames: list[tuple[float, float]] = []

    def _display(self, screen, renderable) -> None:
        if renderable is not None:
            self.frames.append((time.perf_counter(), time.process_time()))
        super()._display(screen, renderable)


async def open_big(root: Path, turns: int) -> tuple[float, float, float]:
    """(last turn on screen wall, the same in CPU time, every turn loaded wall), seconds from the key press."""
    app = TimedApp(Home(root, durable=False))
    async with app.run_test(size=(160, 48)) as pilot:
        replay = app.screen.query_one(ReplayPane)
        while replay.session_id != "small":
            await asyncio.sleep(0.002)
        await pilot.pause()
        started, started_cpu = time.perf_counter(), time.process_time()
        press = asyncio.create_task(pilot.press("down"))
        while replay.session_id != BIG or replay.turn is None or replay.turn.number != turns:
            await asyncio.sleep(0.001)
        held = time.perf_counter()
        assert f"Question {turns}:" in "\n".join(line.text for line in replay.view.lines)
        while not app.frames or app.frames[-1][0] < held:
            await asyncio.sleep(0.001)
        at, at_cpu = next(frame for frame in app.frames if frame[0] >= held)
        shown, shown_cpu = at - started, at_cpu - started_cpu
        while len(replay.turns) < turns:
            await asyncio.sleep(0.001)
        whole = time.perf_counter() - started
        await press
    return shown, shown_cpu, whole


def cpu_of(fn, repeat: int) -> float:
    """Least CPU time of `repeat` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    args_parser = parser(__doc__.splitlines()[0])
    args_parser.add_argument("--runs", type=int, default=0, help="cold opens (default 5; 3 with --quick)")
    args = args_parser.parse_args()
    turns = 400 if args.quick else 2_000
    repeat = args.runs or (3 if args.quick else 5)
    work = Path(tempfile.mkdtemp(prefix="opmem-bench-open-"))
    try:
        build(work, turns)
        history = str(work / "sessions" / BIG / "history")
        baseline = best_of(lambda: os.listdir(history), 5)
        baseline_cpu = cpu_of(lambda: os.listdir(history), 5)
        runs = [asyncio.run(open_big(work, turns)) for _ in range(repeat)]
        print(f"{turns:,}-turn session ({len(os.listdir(history)):,} node files)")
        print("runs, wall: " + ", ".join(fmt(s) for s, _, _ in runs))
        print("runs, CPU:  " + ", ".join(fmt(c) for _, c, _ in runs))
        target = f"<= {TARGET_S * 1000:.0f} ms"
        median = statistics.median
        for label, pick, base, base_name in (
            ("wall", 0, baseline, "os.listdir(history)"),
            ("CPU", 1, baseline_cpu, "os.listdir(history) CPU"),
        ):
            for how, value in (("median", median(r[pick] for r in runs)), ("best", min(r[pick] for r in runs))):
                name = f"cold open to the last turn on screen ({label}, {how} of {repeat})"
                report(name, value, base, base_name, target, value <= TARGET_S)
        print(f"every turn loaded behind it: {fmt(median(w for _, _, w in runs))} (median wall)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
