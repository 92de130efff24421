"""First paint of the TUI with 10,000 sessions, beside the first paint of a 1-session store.

  python bench/tui_first_paint.py [--quick]

"First paint" = from constructing OpmemApp to its first frame on screen (Textual's Ready
event, sent after the first compositor refresh). The listing must not hold it up: the app
paints, then reads the session list in a worker and fills the table. Both stores are measured
in the same run (best of 3 each, alternating), so the ratio holds on a slow or busy machine.
Also printed, for scale: the time until all 10,000 rows are in the table, beside a cold
`list_sessions()` alone.

Sessions are meta.json-only folders (valid per the contract) plus one real session on top,
so the replay pane has something to load too.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, parser, report

import opmem_tui.app
from opmem_tui.app import OpmemApp
from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore

NOW = 1_767_225_600.0
TARGET = 1.2  # first paint at 10,000 sessions <= 1.2 x first paint of a 1-session store


def build(root: Path, count: int) -> None:
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
    """OpmemApp that notes when its first frame is on screen."""

    CSS_PATH = Path(opmem_tui.app.__file__).with_name("app.tcss")
    painted_at = 0.0

    def on_ready(self) -> None:
        self.painted_at = time.perf_counter()


async def start(root: Path, count: int) -> tuple[float, float]:
    """(first paint, all `count` rows in the table), seconds from constructing the app."""
    started = time.perf_counter()
    app = TimedApp(Home(root, durable=False), now=lambda: NOW, poll_interval=0)
    async with app.run_test(size=(160, 48)):
        table = app.screen.query_one("SessionTable")
        while len(table.rows) < count:
            await asyncio.sleep(0.002)
        filled = time.perf_counter() - started
        assert table.rows[0].id == "newest"
        assert app.painted_at
    return app.painted_at - started, filled


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 2_000 if args.quick else 10_000
    work = Path(tempfile.mkdtemp(prefix="opmem-bench-paint-"))
    try:
        many, one = work / "many", work / "one"
        build(many, count)
        build(one, 1)
        asyncio.run(start(one, 1))  # imports and first-run caches out of the way
        big: list[tuple[float, float]] = []
        small: list[tuple[float, float]] = []
        for _ in range(3):
            big.append(asyncio.run(start(many, count)))
            small.append(asyncio.run(start(one, 1)))
        paint, baseline = min(p for p, _ in big), min(p for p, _ in small)
        filled = min(f for _, f in big)
        listing = best_of(lambda: SessionStore(many / "sessions").list_sessions(), 3)
        print(f"{count:,} sessions; first paint runs: {', '.join(fmt(p) for p, _ in big)}")
        print(f"1 session; first paint runs: {', '.join(fmt(p) for p, _ in small)}")
        report(
            f"first paint, {count:,} sessions",
            paint,
            baseline,
            "first paint of a 1-session store",
            f"<= {TARGET}",
            paint <= TARGET * baseline,
        )
        print(f"all {count:,} rows in the table: {fmt(filled)} (list_sessions() cold alone: {fmt(listing)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
