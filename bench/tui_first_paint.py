"""First paint of the TUI with 10,000 sessions, beside the first paint of a 1-session store.

  python bench/tui_first_paint.py [--quick] [--runs N] [--memory-events N]

"First paint" = from constructing OpmemApp to its first frame on screen (when the screen
posts Textual's Ready event, right after the first compositor refresh). The listing must not hold it up: the app
paints, then reads the session list in a worker and fills the table.

Both stores are measured in the same run, interleaved: N pairs, each pair one run of either
store, the order alternating from pair to pair (ABBA...), so a load that comes and goes on a
shared machine falls on both sides. Each figure is the median of its N runs, in wall time and
in CPU time (time.process_time(): every thread of the process, so the listing worker counts if
it ran before the frame). The median of the N per-pair ratios is printed too: a pair's two
runs are seconds apart, so a slow minute shifts both. The target is judged on the wall-clock
medians; on a loaded machine the CPU figure is the steadier one (wall time is mostly waiting
for a core there).

Also printed, for scale: the time until all rows are in the table, beside a cold
`list_sessions()` alone. Sessions are meta.json-only folders (valid per the contract) plus
one real session on top, so the replay pane has something to load too.

With --memory-events N (e.g. 100000), the same 10,000-session store is built a second time
with a memory of N events and 2N edges (bench/memory_home.py; the records name no listed
session, so the listing is the same), and the two are measured interleaved the same way: the
first paint and all rows in the table with that memory beside the same without one (nothing
before the first frame may read the memory).
"""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, parser, report
from memory_home import fill_memory
from textual import events
from textual.message import Message

import opmem_tui.app
from opmem_tui.app import OpmemApp
from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore

NOW = 1_767_225_600.0
TARGET = 1.2  # first paint at 10,000 sessions <= 1.2 x first paint of a 1-session store


def build(root: Path, count: int) -> None:
    """A store of `count` sessions under `root` (the state folder)."""
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    sources = ("claude-code", "codex", "gemini", "aider")
    for i in range(count - 1):
        d = sessions / f"s{i:05d}"
        (d / "history").mkdir(parents=True)
        meta = {
            "id": d.name,
            "title": f"session {i}: fix module_{i % 97} and its tests",
            "title_source": "excerpt",
            "agent_id": "",
            "project_id": f"proj{i % 13}",
            "source": sources[i % 4],
            "source_ref": None,
            "created_at": NOW - 86_400 * 30 + i,
            "updated_at": NOW - 86_400 * 30 + 2 * i,
            "head_id": None,
            "turns": i % 40,
            "preview": f"prompt {i}",
        }
        (d / "meta.json").write_text(json.dumps(meta))
    store = Home(root, durable=False).sessions
    store.append_message("newest", "user", "The newest session, opened by the replay pane.", created_at=NOW - 60)
    store.append_message("newest", "assistant", "Loaded.", created_at=NOW - 55)
    store.commit_turn("newest")


class TimedApp(OpmemApp):
    """OpmemApp that notes when (wall and CPU clock) its first frame is on screen: the screen
    posts Ready right after writing that frame (stamped there, not when the app's queue gets
    to the message: that wait is the event loop's, not the paint's)."""

    CSS_PATH = Path(opmem_tui.app.__file__).with_name("app.tcss")
    painted_at = 0.0
    painted_cpu = 0.0

    def post_message(self, message: Message) -> bool:
        if isinstance(message, events.Ready) and not self.painted_at:
            self.painted_at = time.perf_counter()
            self.painted_cpu = time.process_time()
        return super().post_message(message)


@dataclass(frozen=True)
class Run:
    paint: float  # wall seconds from constructing the app to its first frame
    paint_cpu: float  # CPU seconds of the process over the same span
    filled: float  # wall seconds until every row is in the table


async def start(root: Path, count: int) -> Run:
    gc.collect()  # the previous run's garbage is not collected inside this one
    started, started_cpu = time.perf_counter(), time.process_time()
    app = TimedApp(Home(root, durable=False), now=lambda: NOW, poll_interval=0)
    async with app.run_test(size=(160, 48)):
        table = app.screen.query_one("SessionTable")
        while len(table.rows) < count:
            await asyncio.sleep(0.002)
        filled = time.perf_counter() - started
        assert table.rows[0].id == "newest"
        assert app.painted_at
    return Run(app.painted_at - started, app.painted_cpu - started_cpu, filled)


def interleaved(many: Path, count: int, one: Path, pairs: int) -> tuple[list[Run], list[Run]]:
    """`pairs` runs of each store, alternating which goes first (ABBA...)."""
    big: list[Run] = []
    small: list[Run] = []
    for i in range(pairs):
        if i % 2 == 0:
            big.append(asyncio.run(start(many, count)))
            small.append(asyncio.run(start(one, 1)))
        else:
            small.append(asyncio.run(start(one, 1)))
            big.append(asyncio.run(start(many, count)))
    return big, small


def runs_line(label: str, runs: list[Run]) -> str:
    wall = ", ".join(fmt(r.paint) for r in runs)
    cpu = ", ".join(fmt(r.paint_cpu) for r in runs)
    return f"{label}: first paint wall {wall}\n{' ' * len(label)}  CPU  {cpu}"


def with_memory(many: Path, count: int, events: int, pairs: int) -> None:
    """First paint and the filled table of `many` with a memory of `events` events, beside the
    same store without a memory, interleaved as `interleaved` does."""
    full = many.parent / "many-with-memory"
    build(full, count)
    fill_memory(full, events)
    asyncio.run(start(full, count))
    ours: list[Run] = []
    bare: list[Run] = []
    for i in range(pairs):
        order = ((full, ours), (many, bare)) if i % 2 == 0 else ((many, bare), (full, ours))
        for root, runs in order:
            runs.append(asyncio.run(start(root, count)))
    median = statistics.median
    label = f"{count:,} sessions, memory of {events:,} events"
    print(runs_line(label, ours))
    for what, pick in (("wall", lambda r: r.paint), ("CPU", lambda r: r.paint_cpu)):
        mine, theirs = median(pick(r) for r in ours), median(pick(r) for r in bare)
        report(
            f"first paint, {label} ({what}, median of {pairs})",
            mine,
            theirs,
            "the same without a memory",
            "<= 1.2",
            mine <= 1.2 * theirs,
        )
    filled, filled_bare = median(r.filled for r in ours), median(r.filled for r in bare)
    print(f"all {count:,} rows in the table: {fmt(filled)} with the memory, {fmt(filled_bare)} without")


def main() -> None:
    args_parser = parser(__doc__.splitlines()[0])
    args_parser.add_argument("--runs", type=int, default=0, help="pairs of runs (default 9; 5 with --quick)")
    args_parser.add_argument("--memory-events", type=int, default=0, help="also measure with a memory of N events")
    args = args_parser.parse_args()
    count = 2_000 if args.quick else 10_000
    pairs = args.runs or (5 if args.quick else 9)
    work = Path(tempfile.mkdtemp(prefix="opmem-bench-paint-"))
    try:
        many, one = work / "many", work / "one"
        build(many, count)
        build(one, 1)
        asyncio.run(start(one, 1))  # imports and first-run caches out of the way
        asyncio.run(start(many, count))
        big, small = interleaved(many, count, one, pairs)
        print(runs_line(f"{count:,} sessions", big))
        print(runs_line("1 session", small))
        median = statistics.median
        paint, baseline = median(r.paint for r in big), median(r.paint for r in small)
        paint_cpu, baseline_cpu = median(r.paint_cpu for r in big), median(r.paint_cpu for r in small)
        pair_ratio = median(b.paint / s.paint for b, s in zip(big, small, strict=True))
        pair_ratio_cpu = median(b.paint_cpu / s.paint_cpu for b, s in zip(big, small, strict=True))
        report(
            f"first paint, {count:,} sessions (wall, median of {pairs})",
            paint,
            baseline,
            "first paint of a 1-session store",
            f"<= {TARGET}",
            paint <= TARGET * baseline,
        )
        report(
            f"first paint, {count:,} sessions (CPU, median of {pairs})",
            paint_cpu,
            baseline_cpu,
            "first paint of a 1-session store",
            f"<= {TARGET}",
            paint_cpu <= TARGET * baseline_cpu,
        )
        print(f"median of the {pairs} per-pair ratios: wall {pair_ratio:.2f}, CPU {pair_ratio_cpu:.2f}")
        filled = median(r.filled for r in big)
        listing = best_of(lambda: SessionStore(many / "sessions").list_sessions(), 3)
        print(f"all {count:,} rows in the table: {fmt(filled)} (list_sessions() cold alone: {fmt(listing)})")
        if args.memory_events:
            with_memory(many, count, args.memory_events, pairs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
