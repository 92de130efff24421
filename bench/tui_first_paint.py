"""Time to first paint of the TUI with 10,000 sessions, beside store.list_sessions() alone.

  python bench/tui_first_paint.py [--quick]

"First paint" = from constructing OpmemApp to the session list drawn with every row loaded
(the listing worker done, the table filled, one screen refresh). The baseline is a cold
`list_sessions()` on a fresh SessionStore over the same folder, the backend call the app makes.
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

from opmem_tui.app import OpmemApp
from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore

NOW = 1_767_225_600.0


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


async def first_paint(root: Path, count: int) -> float:
    start = time.perf_counter()
    app = OpmemApp(Home(root, durable=False), now=lambda: NOW, poll_interval=0)
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one("SessionTable")
        while len(table.rows) < count:
            await asyncio.sleep(0.002)
        await pilot.pause()  # one refresh: the rows are on screen
        elapsed = time.perf_counter() - start
        assert table.rows[0].id == "newest"
    return elapsed


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 2_000 if args.quick else 10_000
    work = Path(tempfile.mkdtemp(prefix="opmem-bench-paint-"))
    try:
        build(work, count)
        baseline = best_of(lambda: SessionStore(work / "sessions").list_sessions(), 3)
        times = [asyncio.run(first_paint(work, count)) for _ in range(3)]
        ours = min(times)
        empty = work / "empty"
        build(empty, 1)
        start_only = min(asyncio.run(first_paint(empty, 1)) for _ in range(3))
        print(f"{count:,} sessions; first paint runs: {', '.join(fmt(t) for t in times)}")
        report(f"first paint, {count:,} sessions", ours, baseline, "list_sessions() cold", "<= 1 s", ours <= 1.0)
        report(
            f"first paint, {count:,} sessions",
            ours,
            start_only,
            "first paint of a 1-session store",
            "<= 1 s",
            ours <= 1.0,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
