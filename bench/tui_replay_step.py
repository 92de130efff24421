"""One replay step onto a turn with 200 tool calls and 5 MB of output, beside store.get_turns().

  python bench/tui_replay_step.py [--quick]

A step = ReplayPane.step(): build the turn's lines (tool results collapsed) and draw every
visible line of the pane, as a key press does. The baseline is the backend call the app makes
when it opens the session: store.get_turns() on a warm store. Also shown: expanding every tool
result of that turn (all 5 MB as lines) and scrolling to its end, for scale.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, parser, report

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


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
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
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
