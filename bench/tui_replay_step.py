"""One replay step onto a turn with 200 tool calls and 5 MB of output, beside store.get_turns().

  python bench/tui_replay_step.py [--quick] [--memory-events N]

A step = ReplayPane.step(): build the turn's lines (tool results collapsed) and draw every
visible line of the pane, as a key press does. The baseline is the backend call the app makes
when it opens the session: store.get_turns() on a warm store. Also shown: expanding every tool
result of that turn (all 5 MB as lines) and scrolling to its end, for scale.

With --memory-events N (e.g. 100000), the step is also taken in the whole app (OpmemApp, the
`left`/`right` keys, from the key to the first frame written after the pane holds the other
turn; wall and CPU of the process) on two homes with the same session: one whose memory holds
N events and 2N edges (bench/memory_home.py), one with no memory, alternating, median of the
runs: nothing the replay does may wait on the memory.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, parser, report
from memory_home import fill_memory
from tui_stages import FramedApp

from opmem_tui.backend.home import Home
from opmem_tui.widgets.replay_view import ReplayPane

NOW = 1_767_225_600.0
SID = "big-turn"


def build(root: Path, tools: int, total_bytes: int) -> None:
    store = Home(root, durable=False).sessions
    store.append_message(SID, "user", "Look around the repo.", created_at=NOW - 600)
    store.append_message(SID, "assistant", "Done looking.", created_at=NOW - 590)
    store.commit_turn(SID)
    store.append_message(SID, "user", "Now grep everything.", created_at=NOW - 500)
    a = store.append_message(SID, "assistant", "Running the searches.", created_at=NOW - 495)
    per_tool = total_bytes // tools
    line = "src/module/file_{i}.py:{n}: match for the pattern in a fairly long line of output\n"
    for i in range(tools):
        body = "".join(line.format(i=i, n=n) for n in range(per_tool // 80 + 1))[:per_tool]
        store.append_message(
            SID,
            "tool",
            body,
            called_by=a.id,
            name="grep",
            input={"pattern": f"p{i}", "path": "src"},
            created_at=NOW - 490 + i * 0.01,
        )
    store.append_message(SID, "assistant", "All searches done.", created_at=NOW - 100)
    store.commit_turn(SID)


def draw(pane: ReplayPane) -> None:
    view = pane.view
    for y in range(view.size.height):
        view.render_line(y)


async def measure(root: Path, repeat: int) -> tuple[float, float, int, int]:
    from textual.app import App, ComposeResult

    store = Home(root, durable=False).sessions
    turns = store.get_turns(SID)
    meta = store.get_meta(SID)

    class Bench(App[None]):
        def compose(self) -> ComposeResult:
            yield ReplayPane()

    app = Bench()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(ReplayPane)
        pane.show_session(meta, turns, turn_number=1)
        await pilot.pause()
        steps = []
        for _ in range(repeat):
            start = time.perf_counter()
            pane.step(1)
            draw(pane)
            steps.append(time.perf_counter() - start)
            pane.step(-1)
            draw(pane)
        pane.step(1)
        start = time.perf_counter()
        pane.action_expand_all()
        pane.view.scroll_to(y=pane.view.max_scroll_y, animate=False, immediate=True)
        draw(pane)
        expand = time.perf_counter() - start
        tools = len(turns[1].tool_nodes)
        size = sum(len(n.content) for n in turns[1].nodes)
        lines = len(pane.view.lines)
    return min(steps), expand, tools, size, lines


async def app_steps(root: Path, repeat: int) -> tuple[list[float], list[float]]:
    """(wall, CPU) of each step in the whole app, key -> the frame after the pane changed turn."""
    app = FramedApp(Home(root, durable=False), now=lambda: NOW, poll_interval=0)
    walls, cpus = [], []
    frame = asyncio.Event()
    app.on_frame = frame.set
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.screen.query_one(ReplayPane)
        while pane.turn is None or pane.turn.number != 2 or len(pane.turns) < 2:
            await pilot.pause(0.01)
        await pilot.pause(0.2)
        for i in range(2 * repeat):
            key, number = ("left", 1) if i % 2 == 0 else ("right", 2)
            started, started_cpu = time.perf_counter(), time.process_time()
            press = asyncio.create_task(pilot.press(key))
            while pane.turn is None or pane.turn.number != number:
                frame.clear()
                await frame.wait()
            held = time.perf_counter()
            while app.frame_after(held) is None:
                frame.clear()
                await frame.wait()
            shown = app.frame_after(held)
            walls.append(shown - started)
            cpus.append(app.frame_cpu[shown] - started_cpu)
            await press
            await pilot.pause(0.05)
    return walls, cpus


def with_and_without_memory(work: Path, tools: int, total: int, events: int, repeat: int) -> None:
    bare, full = work / "bare", work / "with-memory"
    build(bare, tools, total)
    build(full, tools, total)
    fill_memory(full, events)
    runs: dict[Path, tuple[list[float], list[float]]] = {bare: ([], []), full: ([], [])}
    asyncio.run(app_steps(bare, 2))  # imports and first-run caches out of the way
    for _ in range(3):
        for root in (full, bare):
            walls, cpus = asyncio.run(app_steps(root, repeat))
            runs[root][0].extend(walls)
            runs[root][1].extend(cpus)
    (mw, mc), (bw, bc) = runs[full], runs[bare]
    med = statistics.median
    print(f"in the app, {len(mw)} steps each, median:")
    report(
        f"replay step, memory of {events:,} events", med(mw), med(bw), "no memory", "<= 1.2", med(mw) <= 1.2 * med(bw)
    )
    report(
        f"replay step, memory of {events:,} events, CPU",
        med(mc),
        med(bc),
        "no memory, CPU",
        "<= 1.2",
        med(mc) <= 1.2 * med(bc),
    )


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--memory-events", type=int, default=0, help="also step in the app with a memory of N events")
    args = p.parse_args()
    tools, total = (50, 1_000_000) if args.quick else (200, 5_000_000)
    work = Path(tempfile.mkdtemp(prefix="opmem-bench-step-"))
    try:
        build(work, tools, total)
        store = Home(work, durable=False).sessions
        store.get_turns(SID)  # warm: the app has the session open when it steps
        baseline = best_of(lambda: store.get_turns(SID), 5)
        cold = best_of(lambda: Home(work, durable=False).sessions.get_turns(SID), 3)
        step, expand, count, size, lines = asyncio.run(measure(work, 10))
        print(f"turn with {count} tool calls, {size / 1e6:.1f} MB of output")
        report(
            "replay step (build + draw visible lines)",
            step,
            baseline,
            "store.get_turns() warm",
            "<= 50 ms",
            step <= 0.05,
        )
        report(
            "replay step (build + draw visible lines)", step, cold, "store.get_turns() cold", "<= 50 ms", step <= 0.05
        )
        print(f"expand all {count} results ({lines:,} lines) and draw the end: {fmt(expand)}")
        if args.memory_events:
            with_and_without_memory(work, tools, total, args.memory_events, 5 if args.quick else 10)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
