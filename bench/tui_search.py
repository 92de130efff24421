"""Search everywhere as you type: first results on screen, beside the backend search alone,
measured in the same run.

  python bench/tui_search.py [--quick] [--turns N]

A real session store (search_bench's corpus: Zipf words, 50 turns per session, written through
the store's batch API; default 20,000 turns, --quick 2,000) is indexed once. For queries of
1-3 words, typed one word at a time, "first results" is what the app does after the last key:
the typing pause (SEARCH_DEBOUNCE), the data layer's search (the hits and their snippets from
the node files), the hit lines built and every visible line of the list drawn. The baseline
is Home.search() alone, the backend call, for the same queries. Figures are p95.
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

from opmem_tui.backend.home import Home
from opmem_tui.memory_data import SEARCH_HITS, MemoryData
from opmem_tui.screens.search import SEARCH_DEBOUNCE
from opmem_tui.widgets.search_hits import SearchHitLines, hit_lines, query_words

TURNS_PER_SESSION = 50


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1] if len(samples) >= 2 else samples[0]


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


async def as_typed(data: MemoryData, queries: list[str]) -> tuple[list[float], list[float]]:
    from textual.app import App, ComposeResult

    class Bench(App[None]):
        def compose(self) -> ComposeResult:
            yield SearchHitLines()

    app = Bench()
    samples, cpu = [], []
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(SearchHitLines)
        await pilot.pause()
        width = view.scrollable_content_region.width
        for query in queries:
            started, started_cpu = time.perf_counter(), time.thread_time()
            results = data.search(query)
            view.words = query_words(query)
            view.set_lines(hit_lines(results.hits, width, lambda sid: sid))
            for y in range(view.size.height):
                view.render_line(y)
            samples.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
    return samples, cpu


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=0, help="turns in the store (default 20,000; --quick 2,000)")
    args = p.parse_args()
    turns = args.turns or (2_000 if args.quick else 20_000)
    corpus = Corpus()
    with tempfile.TemporaryDirectory(prefix="opmem-bench-search-tui-") as tmp:
        home = Home(Path(tmp) / "home", durable=False)
        home.ensure()
        sessions = build(home, corpus, turns)
        fresh = Home(home.path, durable=False)
        fresh.search_index.update()
        data = MemoryData(fresh)
        rng = random.Random(3)
        queries = []
        for _ in range(60):
            words = rng.choices(corpus.words[:5000], cum_weights=corpus.cum[:5000], k=rng.randint(1, 3))
            queries += [" ".join(words[: i + 1]) for i in range(len(words))]  # a word at a time
        for query in queries[:10]:
            fresh.search(query, k=SEARCH_HITS)  # warm the page cache, as a running app has it
        base, base_cpu = [], []
        for query in queries:
            started, started_cpu = time.perf_counter(), time.thread_time()
            fresh.search(query, k=SEARCH_HITS)
            base.append(time.perf_counter() - started)
            base_cpu.append(time.thread_time() - started_cpu)
        ours, ours_cpu = asyncio.run(as_typed(data, queries))
        print(f"store: {turns:,} turns in {sessions:,} sessions; {len(queries)} queries typed a word at a time")
        shown = [SEARCH_DEBOUNCE + t for t in ours]
        report(
            f"first results p95 (pause {SEARCH_DEBOUNCE * 1000:.0f} ms + search + lines + draw)",
            p95(shown),
            p95(base),
            f"Home.search(k={SEARCH_HITS}) alone p95",
            "<= 100 ms",
            p95(shown) <= 0.1,
        )
        print(f"  without the typing pause: {fmt(p95(ours))} p95, {fmt(statistics.median(ours))} median")
        # on a shared, loaded machine the wall time mostly measures waiting for a core
        report(
            "first results p95, CPU (pause + search + lines + draw)",
            SEARCH_DEBOUNCE + p95(ours_cpu),
            p95(base_cpu),
            "Home.search() alone, CPU",
            "<= 100 ms",
            SEARCH_DEBOUNCE + p95(ours_cpu) <= 0.1,
        )


if __name__ == "__main__":
    main()
