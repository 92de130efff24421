"""Search everywhere as you type: first results on screen, beside the backend search alone,
measured in the same run.

  python bench/tui_search.py [--quick] [--turns N] [--queries N] [--key-gap S]

A real session store (search_bench's corpus: Zipf words, 50 turns per session, written through
the store's batch API; default 20,000 turns, --quick 2,000) is indexed once. The real app
(OpmemApp, ctrl+f) is typed into a key at a time, a key every --key-gap seconds (0.12: a quick
typist; every pause longer than the debounce starts a search, as it does for a person), queries
of 1-3 words. "First results" = from the last key of a query to the first frame written after
the hit list holds that query's hits. Wall and CPU (the whole process's, every thread: the
search a previous key started may still be running). The baseline is Home.search() alone, the
backend call the app makes for its first page (k=FIRST_PAGE), for the same queries, wall and
CPU; k=60 (what the first page asked for before pages) is printed for scale. A table says where the wall time goes (the
key, the typing pause, the worker's start, the search, the hop back, the lines, the frame).
Figures are p95.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import fmt, parser, report
from search_bench import Corpus
from tui_stages import FramedApp, Marks, key_to_frame, p95, stage_table

from opmem_tui.backend.home import Home
from opmem_tui.memory_data import SEARCH_HITS, MemoryData
from opmem_tui.screens.search import FIRST_PAGE, SEARCH_DEBOUNCE, SearchScreen

TURNS_PER_SESSION = 50
NOW = 1_767_225_600.0
TARGET_S = 0.100

STEPS = (
    ("press", "changed", "last key -> Input.Changed reaches the screen"),
    ("changed", "search", f"wait for the search (0 after a pause; else the {SEARCH_DEBOUNCE * 1000:.0f} ms debounce)"),
    ("search", "read start", "thread worker starts"),
    ("read start", "read end", "MemoryData.search() in the worker"),
    ("read end", "show start", "hop back to the UI thread"),
    ("show start", "show end", "hit lines built (_show)"),
    ("show end", "frame", "refresh, compose and write the frame"),
)


def build(home: Home, corpus: Corpus, turns: int) -> int:
    store = home.sessions
    sessions = max(1, turns // TURNS_PER_SESSION)
    for s in range(sessions):
        parent = None
        with store.batch(f"s{s:05d}") as batch:
            for turn in range(TURNS_PER_SESSION):
                u = batch.append("user", corpus.text(20), parent_id=parent, created_at=1e9 + s * 1e4 + turn * 60)
                a = batch.append("assistant", corpus.text(60), parent_id=u.id, created_at=1e9 + s * 1e4 + turn * 60 + 5)
                parent = a.id
                batch.commit_turn()
    return sessions


class Typist:
    """The app under test, with marks around the steps from the last key to the hits."""

    def __init__(self) -> None:
        self.query = ""
        self.marks = Marks()
        is_query = self._is_query
        self.marks.wrap(
            SearchScreen, "on_input_changed", before="changed", when=lambda _s, event: is_query(event.value)
        )
        self.marks.wrap(SearchScreen, "_search", before="search", when=lambda _s, query: is_query(query))
        self.marks.wrap(MemoryData, "search", "read start", "read end", when=lambda _s, query, *_a: is_query(query))
        self.marks.wrap(
            SearchScreen,
            "_show",
            "show start",
            "show end",
            when=lambda _s, res, limit: is_query(res.query) and limit == FIRST_PAGE,  # the first page
        )

    def _is_query(self, text: str) -> bool:
        return text == self.query

    async def run(self, home: Path, queries: list[str], key_gap: float) -> tuple[list[float], list[float]]:
        """(wall, CPU) per query, from its last key to its hits on screen."""
        app = FramedApp(Home(home, durable=False), now=lambda: NOW, watch=False, poll_interval=0, idle_distil=0)
        walls, cpus = [], []
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("ctrl+f")
            while not isinstance(app.screen, SearchScreen):
                await pilot.pause()
            screen = app.screen
            for query in queries:
                screen.input.value = ""
                await pilot.pause(0.2)  # the empty query's answer is in; a quiet start
                self.query = query
                for key in query[:-1]:
                    await pilot.press(key if key != " " else "space")
                    await asyncio.sleep(key_gap)
                last = query[-1]
                wall, cpu = await key_to_frame(app, pilot, self.marks, last if last != " " else "space", "show end")
                assert screen.results is not None and screen.results.query == query
                walls.append(wall)
                cpus.append(cpu)
                self.marks.keep()
        return walls, cpus


def backend_alone(home: Home, queries: list[str], k: int) -> tuple[list[float], list[float]]:
    """(wall, CPU) of Home.search(query, k) per query, on this thread."""
    walls, cpus = [], []
    for query in queries:
        started, started_cpu = time.perf_counter(), time.thread_time()
        home.search(query, k=k)
        walls.append(time.perf_counter() - started)
        cpus.append(time.thread_time() - started_cpu)
    return walls, cpus


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=0, help="turns in the store (default 20,000; --quick 2,000)")
    p.add_argument("--queries", type=int, default=40, help="queries typed (default 40)")
    p.add_argument("--key-gap", type=float, default=0.12, help="seconds between keys (default 0.12)")
    args = p.parse_args()
    turns = args.turns or (2_000 if args.quick else 20_000)
    corpus = Corpus()
    with tempfile.TemporaryDirectory(prefix="opmem-bench-search-tui-") as tmp:
        home = Home(Path(tmp) / "home", durable=False)
        home.ensure()
        sessions = build(home, corpus, turns)
        fresh = Home(home.path, durable=False)
        fresh.search_index.update()
        rng = random.Random(3)
        queries = [
            " ".join(rng.choices(corpus.words[:5000], cum_weights=corpus.cum[:5000], k=rng.randint(1, 3)))
            for _ in range(args.queries)
        ]
        print(
            f"store: {turns:,} turns in {sessions:,} sessions; {len(queries)} queries typed a key every {fmt(args.key_gap)}"
        )
        typist = Typist()
        ours, ours_cpu = asyncio.run(typist.run(home.path, queries, args.key_gap))
        for query in queries[:5]:
            fresh.search(query, k=SEARCH_HITS)  # as warm as the app's index was
        base, base_cpu = backend_alone(fresh, queries, FIRST_PAGE)
        name = "first results p95 (last key -> hits on screen)"
        alone = f"Home.search(k={FIRST_PAGE}) alone"
        report(name, p95(ours), p95(base), alone, "<= 100 ms", p95(ours) <= TARGET_S)
        report(f"{name}, CPU", p95(ours_cpu), p95(base_cpu), f"{alone}, CPU", "<= 100 ms", p95(ours_cpu) <= TARGET_S)
        med = statistics.median
        print(f"  median: wall {fmt(med(ours))} vs {fmt(med(base))}; CPU {fmt(med(ours_cpu))} vs {fmt(med(base_cpu))}")
        full, full_cpu = backend_alone(fresh, queries, SEARCH_HITS)
        print(
            f"  for scale, Home.search(k={SEARCH_HITS}) alone (the app's first page asked for 60 before): "
            f"p95 wall {fmt(p95(full))}, CPU {fmt(p95(full_cpu))}"
        )
        print(f"  where the wall time goes ({len(typist.marks.runs)} queries):")
        stage_table(typist.marks, STEPS)


if __name__ == "__main__":
    main()
