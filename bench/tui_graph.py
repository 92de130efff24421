"""Graph explorer on a memory of 100,000 events and 200,000 edges (40,000 entities): recentre
and the entity finder, each beside the backend call alone, measured in the same run.

  python bench/tui_graph.py [--quick] [--recentres N]

The memory is generated as bench/memory_bench.py does (--quick: a tenth), with the sessions
it names (bench/memory_home.py).

Recentre: the real app (OpmemApp, Memory tab) walks the graph: the cursor on a neighbour,
`enter`, and the time until the first frame written after the tree shows that neighbour as the
centre. Wall and CPU (the whole process's, every thread) from the key press to that frame; the
baseline is the backend read the tab does (MemoryData.graph: neighbors(), the centre's aliases
and merges) alone, for the same centres, wall and CPU. A table says where the wall time goes
(key handling, the message to the tab, the worker's start, the read, the hop back to the UI
thread, the tree, the frame). p95 over the walk, at 1 hop (the explorer's default) and 2.

Entity finder: the same typed queries (names typed a key at a time, typos) through the
finder's prefilter and through a plain rapidfuzz scan of every name (`scan_all`), wall and CPU
per query, and how many answers agree with the plain scan on every strong (>= 90) rank.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import fmt, parser, report
from memory_home import fill_memory
from tui_stages import FramedApp, Marks, key_to_frame, p95, stage_table

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.entity_finder import EntityFinder
from opmem_tui.gc_tuning import quiet_gc
from opmem_tui.memory_data import MemoryData
from opmem_tui.tabs.memory import MemoryTab
from opmem_tui.widgets.graph_explorer import GraphExplorer

NOW = 1_767_225_600.0
RECENTRE_S = 0.050
FIND_S = 0.030
STRONG = 90.0

STEPS = (
    ("press", "selected", "key -> ItemLines.Chosen -> choose()"),
    ("selected", "requested", "Requested message reaches the tab"),
    ("requested", "read start", "thread worker starts"),
    ("read start", "read end", "MemoryData.graph() in the worker"),
    ("read end", "show start", "hop back to the UI thread"),
    ("show start", "show end", "tree lines rebuilt (show_graph)"),
    ("show end", "frame", "refresh, compose and write the frame"),
)


class Walk:
    """The app under test, with marks around the steps of a recentre."""

    def __init__(self) -> None:
        self.target = ""
        self.marks = Marks()
        is_target = self._is_target
        self.marks.wrap(GraphExplorer, "choose", before="selected", when=lambda _s, entity, **_k: is_target(entity))
        self.marks.wrap(MemoryTab, "on_graph_explorer_requested", before="requested")
        self.marks.wrap(MemoryData, "graph", "read start", "read end", when=lambda _s, entity, *_a: is_target(entity))
        self.marks.wrap(
            MemoryTab, "_show_graph", "show start", "show end", when=lambda _s, view: is_target(view.center.id)
        )

    def _is_target(self, entity: str) -> bool:
        return entity == self.target

    async def run(self, home: Path, start: str, hops: int, count: int) -> tuple[list[float], list[float], list[str]]:
        """(wall, CPU, centre) per recentre."""
        app = FramedApp(Home(home, durable=False), now=lambda: NOW, watch=False, poll_interval=0, idle_distil=0)
        walls, cpus, centres = [], [], []
        rng = random.Random(hops)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.press("3")
            while not app.screen.query(MemoryTab):
                await pilot.pause()
            graph = app.screen.query_one(MemoryTab).graph
            graph.hops = hops
            while graph.center != start or not graph.tree.graph.root.children:
                await pilot.pause(0.01)
            graph.tree.focus()
            await pilot.pause()
            while len(walls) < count:
                tree = graph.tree
                children = [c for c in tree.graph.root.children if c.entity != graph.center]
                if not children:  # a dead end: go back where there are neighbours
                    graph.action_back()
                    await pilot.pause(0.05)
                    continue
                child = rng.choice(children)
                self.target = child.entity
                tree.move_to(child.index)
                await pilot.pause()
                wall, cpu = await key_to_frame(app, pilot, self.marks, "enter", "show end")
                assert graph.center == self.target
                walls.append(wall)
                cpus.append(cpu)
                centres.append(self.target)
                self.marks.keep()
        return walls, cpus, centres


def backend_reads(data: MemoryData, centres: list[str], hops: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for entity in centres:
        started, started_cpu = time.perf_counter(), time.thread_time()
        data.graph(entity, hops)
        walls.append(time.perf_counter() - started)
        cpus.append(time.thread_time() - started_cpu)
    return walls, cpus


def recentre(home: Home, count: int) -> None:
    data = MemoryData(Home(home.path, durable=False))
    start = data.find_entities("")[0].id  # what the tab opens on: the busiest entity of late
    for hops in (1, 2):
        walk = Walk()
        walls, cpus, centres = asyncio.run(walk.run(home.path, start, hops, count))
        data.graph(centres[0], hops)  # the app has the memory open when you walk
        base, base_cpu = backend_reads(data, centres, hops)
        name = f"graph recentre p95, {hops} hop{'s' if hops > 1 else ''} (enter -> frame on screen)"
        report(name, p95(walls), p95(base), "MemoryData.graph() alone", "<= 50 ms", p95(walls) <= RECENTRE_S)
        report(
            f"{name}, CPU",
            p95(cpus),
            p95(base_cpu),
            "MemoryData.graph() alone, CPU",
            "<= 50 ms",
            p95(cpus) <= RECENTRE_S,
        )
        med = statistics.median
        print(f"  median: wall {fmt(med(walls))} vs {fmt(med(base))}; CPU {fmt(med(cpus))} vs {fmt(med(base_cpu))}")
        print(f"  where the wall time goes ({len(walk.marks.runs)} recentres):")
        stage_table(walk.marks, STEPS)


def typed_queries(names: list[str], rng: random.Random) -> list[str]:
    out = []
    for name in rng.sample(names, 12):
        out += [name[:n] for n in range(1, len(name) + 1)]  # a key at a time
        cut = rng.randrange(len(name))
        out.append(name[:cut] + name[cut + 1 :])  # a key missed
    return out


def finder(home: Home) -> None:
    finder = EntityFinder(Home(home.path, durable=False).memory)
    started, started_cpu = time.perf_counter(), time.process_time()
    count = finder.load()
    print(
        f"entity finder: {count:,} names loaded in {fmt(time.perf_counter() - started)} "
        f"(CPU {fmt(time.process_time() - started_cpu)}; the Memory tab loads them when it opens)"
    )
    names = [e.name for e in finder.memory.entity_records()]
    queries = typed_queries(names, random.Random(5))
    ours, ours_cpu, plain, plain_cpu, agree = [], [], [], [], 0
    for query in queries:
        started, started_cpu = time.perf_counter(), time.thread_time()
        found = finder.find(query, 30)
        ours.append(time.perf_counter() - started)
        ours_cpu.append(time.thread_time() - started_cpu)
        started, started_cpu = time.perf_counter(), time.thread_time()
        reference = finder.find(query, 30, scan_all=True)
        plain.append(time.perf_counter() - started)
        plain_cpu.append(time.thread_time() - started_cpu)
        strong = [m.score for m in reference if m.score >= STRONG]
        agree += [m.score for m in found][: len(strong)] == strong
    print(
        f"  {len(queries)} queries typed a key at a time; strong ranks agree with the plain scan: {agree}/{len(queries)}"
    )
    report("entity finder p95 per key", p95(ours), p95(plain), "plain rapidfuzz scan", "<= 30 ms", p95(ours) <= FIND_S)
    report(
        "entity finder p95 per key, CPU",
        p95(ours_cpu),
        p95(plain_cpu),
        "plain scan, CPU",
        "<= 30 ms",
        p95(ours_cpu) <= FIND_S,
    )
    med = statistics.median
    print(f"  median: wall {fmt(med(ours))} vs {fmt(med(plain))}; CPU {fmt(med(ours_cpu))} vs {fmt(med(plain_cpu))}")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--recentres", type=int, default=0, help="recentres per hop count (default 60; --quick 20)")
    p.add_argument("--home", type=Path, help="use (and keep) this home; the memory is generated once")
    args = p.parse_args()
    n_events = 10_000 if args.quick else 100_000
    count = args.recentres or (20 if args.quick else 60)
    work = Path(tempfile.mkdtemp(prefix="opmem-bench-graph-"))
    try:
        home = Home(args.home or work / "home", durable=False)
        if (home.memory_dir / "graph" / "entities.jsonl").is_file():
            print(f"memory: as found in {home.path}")
        else:
            fill_memory(home.path, n_events, sessions=True)
            print(f"memory: {n_events:,} events, {2 * n_events:,} edges, {2 * n_events // 5:,} entities")
        finder(home)
        quiet_gc()  # as OpmemApp.run does (run_test does not go through run)
        recentre(home, count)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
