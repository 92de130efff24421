"""Memory store speed (issue: virtual memory), each figure beside a baseline measured in this run.

  python bench/memory_bench.py [--quick | --mid] [--keep DIR] [--no-search]

A generated memory of 100,000 events and 200,000 edges (--quick: a tenth, --mid: 30%) is written through
MemoryStore.append. The graph is shaped like a coding memory: 40,000 entities, edge sources
uniform, a third of the targets drawn from 400 popular entities (a repo's hub files,
commands and packages), so some two-hop neighbourhoods reach hubs; 2% of edges are retired by
a supersede patch. Every baseline is a scan of the JSONL logs involved (read + json.loads of
every line), what any answer costs without the derived cache.

1. cold open: a fresh process opens the memory and answers one neighbors() query (the time
   from MemoryStore(...) to the answer; interpreter start and imports excluded), target
   <= 0.5 s, beside a scan of all the logs;
2. neighbors(hops=2) p95 over random entities, target <= 5 ms, beside a scan of edges.jsonl;
   printed as wall time and as the thread's CPU time (on a shared, loaded machine the wall
   time mostly measures waiting for a core);
3. timeline p95 (a 30-day window, and one entity's mentions; 50 newest), beside a scan of the
   timeline logs (wall and CPU); core.md rendered (global and project, consolidated at three dates), the
   worst of six, wall and CPU;
4. for information: append throughput beside writing the same lines to a file, the cache
   rebuild from scratch beside the full scan, and the cache's size beside the logs';
5. the search index (bench/search_bench.py documents it): 500,000 indexed turns (--mid 100,000,
   --quick 50,000) plus a fifth as many events and two fifths edges, update turns/s, search p95
   (wall and CPU), index size, each beside plain FTS5.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search_bench  # the search index's section (owned by search)
from harness import best_of, fmt, parser, report

from opmem_tui.backend.memory.cache import CACHE_NAME
from opmem_tui.backend.memory.core import render_core
from opmem_tui.backend.memory.logs import log_names
from opmem_tui.backend.memory.records import Edge, Entity, Event, entity_id
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.model import Provenance

T0 = 1_735_689_600.0  # 2025-01-01
SPAN = 730 * 86_400.0  # two years of history
KINDS = ("work", "work", "work", "decision", "learning", "event")
RELATIONS = ("edited", "read", "ran", "depends-on", "uses", "part-of", "fixed-by", "fails-with", "listens-on")
TYPES = ("file", "folder", "command", "package", "test", "error", "concept", "person", "port", "tool")


def generate(root: Path, n_events: int, n_edges: int, seed: int = 7) -> dict[str, float]:
    """Write the memory through the store; returns append figures."""
    rng = random.Random(seed)
    n_entities = max(100, n_edges // 5)
    sessions = [f"sess-{i:05d}" for i in range(max(10, n_events // 50))]
    entities = [
        Entity(entity_id(TYPES[i % len(TYPES)], f"name {i}"), TYPES[i % len(TYPES)], f"name {i}", (), {}, "global")
        for i in range(n_entities)
    ]
    popular = entities[:400]

    def prov(t: float) -> Provenance:
        return Provenance(
            "proj", rng.choice(sessions), (f"n{rng.randrange(10**6)}",), None, t, t + 60, rng.randrange(200)
        )

    edges: list[Edge] = []
    for _ in range(n_edges):
        src = rng.choice(entities)
        dst = rng.choice(popular) if rng.random() < 0.33 else rng.choice(entities)
        rel = rng.choice(RELATIONS)
        p = prov(T0 + rng.random() * SPAN)
        edges.append(Edge(Edge.make_id(src.id, rel, dst.id, p), src.id, dst.id, rel, p, rng.random(), "project:proj"))
    events: list[Event] = []
    for i in range(n_events):
        p = prov(T0 + rng.random() * SPAN)
        summary = f"Edited {rng.randrange(1, 9)} files under backend/mod{i % 97} and ran pytest: {i % 50} passed"
        kind = rng.choice(KINDS)
        mentions = tuple(rng.choice(entities).id for _ in range(rng.randrange(1, 4)))
        events.append(Event(Event.make_id(summary, kind, p), summary, kind, rng.random(), p, mentions, "project:proj"))

    store = MemoryStore(root)
    start = time.perf_counter()
    store.append(entities)
    for k in range(0, len(edges), 5000):
        store.append(edges[k : k + 5000])
    for k in range(0, len(events), 5000):
        store.append(events[k : k + 5000])
    retired = rng.sample(range(len(edges)), len(edges) // 50)
    with store.batch() as writer:
        for k in retired:
            old = edges[k]
            new = edges[rng.randrange(len(edges))]
            if new.id != old.id:
                writer.supersede(old.id, new.id, "generated contradiction", at=T0 + SPAN)
    ours = time.perf_counter() - start
    store.close()

    plain = root.parent / "plain.jsonl"
    start = time.perf_counter()
    with plain.open("wb") as fh:
        for record in (*entities, *edges, *events):
            fh.write(json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
    baseline = time.perf_counter() - start
    plain.unlink()
    return {"records": len(entities) + len(edges) + len(events), "append": ours, "plain": baseline}


def scan(paths: list[Path]) -> int:
    """The baseline: read every line of the logs and json.loads it."""
    count = 0
    for path in paths:
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
                count += 1
    return count


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[18]


COLD_OPEN = """
import sys, time
from opmem_tui.backend.memory.store import MemoryStore
start = time.perf_counter()
store = MemoryStore(sys.argv[1], session_exists=lambda s: True)
store.neighbors(sys.argv[2], hops=2)
print(time.perf_counter() - start)
"""


def cold_open(root: Path, entity: str, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", COLD_OPEN, str(root), entity], capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(out.stderr)
        times.append(float(out.stdout.strip()))
    return statistics.median(times)


def machine_load() -> str:
    """How busy the machine is while we measure: a fixed json.loads loop, and the load average."""
    start = time.perf_counter()
    for _ in range(20_000):
        json.loads('{"a": [1, 2, "three"]}')
    per = (time.perf_counter() - start) / 20_000
    return f"json.loads of a small object: {per * 1e6:.1f} µs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--keep", type=Path, help="build the memory in DIR and leave it there")
    p.add_argument("--no-search", action="store_true", help="leave out the search index section (5.)")
    p.add_argument("--mid", action="store_true", help="30,000 events, 60,000 edges, 100,000 indexed turns")
    args = p.parse_args()
    n_events, n_edges = (10_000, 20_000) if args.quick else (30_000, 60_000) if args.mid else (100_000, 200_000)
    work = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    root = (args.keep or work) / "memory"
    try:
        print(f"generating {n_events:,} events and {n_edges:,} edges ...", flush=True)
        print(f"machine: {machine_load()}", flush=True)
        built = generate(root, n_events, n_edges)
        logs = [root / name for name in log_names(root)]
        edge_logs = [root / "graph" / "edges.jsonl"]
        timeline_logs = [p for p in logs if p.parent.name == "timeline"]
        all_scan = best_of(lambda: scan(logs), 3)
        rng = random.Random(11)
        store = MemoryStore(root, session_exists=lambda s: True)
        ids = list(store.entity_ids())
        sample = rng.sample(ids, min(500, len(ids)))

        opened = cold_open(root, sample[0])
        report("cold open + first neighbors(hops=2)", opened, all_scan, "scan of all logs", "<= 0.5 s", opened <= 0.5)

        times, cpu, sizes = [], [], []
        for entity in sample:
            start, start_cpu = time.perf_counter(), time.thread_time()
            hood = store.neighbors(entity, hops=2)
            times.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
            sizes.append(len(hood.edges))
        edge_scan = best_of(lambda: scan(edge_logs), 3)
        report("neighbors(hops=2) p95", p95(times), edge_scan, "scan of edges.jsonl", "<= 5 ms", p95(times) <= 0.005)
        report(
            "neighbors(hops=2) p95, CPU time", p95(cpu), edge_scan, "scan of edges.jsonl", "<= 5 ms", p95(cpu) <= 0.005
        )
        print(
            f"  edges per answer: median {statistics.median(sizes):.0f}, max {max(sizes)};"
            f" median {fmt(statistics.median(times))} (CPU {fmt(statistics.median(cpu))});"
            f" {edge_scan / p95(times):,.0f}x faster than the scan"
        )
        wide, wide_cpu, wide_sizes = [], [], []
        for entity in sample:
            start, start_cpu = time.perf_counter(), time.thread_time()
            hood = store.neighbors(entity, hops=2, limit=500, fan_out=50)
            wide.append(time.perf_counter() - start)
            wide_cpu.append(time.thread_time() - start_cpu)
            wide_sizes.append(len(hood.edges))
        print(
            f"  with limit=500, fan_out=50 (wider than the defaults 200/20): p95 {fmt(p95(wide))},"
            f" CPU {fmt(p95(wide_cpu))}; edges per answer median {statistics.median(wide_sizes):.0f}"
        )

        window, mentions, window_cpu, mentions_cpu = [], [], [], []
        for entity in sample[:200]:
            since = T0 + rng.random() * (SPAN - 30 * 86_400)
            start, start_cpu = time.perf_counter(), time.thread_time()
            store.timeline(since=since, until=since + 30 * 86_400, limit=50)
            window.append(time.perf_counter() - start)
            window_cpu.append(time.thread_time() - start_cpu)
            start, start_cpu = time.perf_counter(), time.thread_time()
            store.timeline(entity=entity, limit=50)
            mentions.append(time.perf_counter() - start)
            mentions_cpu.append(time.thread_time() - start_cpu)
        tl_scan = best_of(lambda: scan(timeline_logs), 3)
        report("timeline 30-day window p95", p95(window), tl_scan, "scan of timeline logs", "(none)", True)
        report("timeline 30-day window p95, CPU", p95(window_cpu), tl_scan, "scan of timeline logs", "(none)", True)
        report("timeline of one entity p95", p95(mentions), tl_scan, "scan of timeline logs", "(none)", True)
        report("timeline of one entity p95, CPU", p95(mentions_cpu), tl_scan, "scan of timeline logs", "(none)", True)

        renders, renders_cpu = [], []
        for day in (date(2026, 12, 31), date(2025, 7, 1), date(2025, 1, 10)):  # end, middle, start of the span
            for project in ("proj", ""):
                start, start_cpu = time.perf_counter(), time.thread_time()
                render_core(store, day, project, "Proj")
                renders.append(time.perf_counter() - start)
                renders_cpu.append(time.thread_time() - start_cpu)
        worst, worst_cpu = max(renders), max(renders_cpu)
        report("core.md render (worst of 6)", worst, tl_scan, "scan of timeline logs", "<< 100 ms", worst < 0.1)
        report("core.md render, CPU time", worst_cpu, tl_scan, "scan of timeline logs", "<< 100 ms", worst_cpu < 0.1)

        rate = built["records"] / built["append"]
        plain_rate = built["records"] / built["plain"]
        report("append (records/s)", rate, plain_rate, "plain write of the lines", "(info)", True, unit="rec/s")
        rebuild = best_of(store.rebuild_cache, 1)
        report("cache rebuild from the logs", rebuild, all_scan, "scan of all logs", "(info)", True)
        cache_bytes = sum(f.stat().st_size for f in root.glob(CACHE_NAME + "*"))
        log_bytes = sum(f.stat().st_size for f in logs)
        report("cache size (MB)", cache_bytes / 1e6, log_bytes / 1e6, "the logs", "(info)", True, unit="MB")
        store.close()
        if not args.no_search:
            print("search index (bench/search_bench.py):", flush=True)
            search_bench.run(quick=args.quick, turns=search_bench.MID_TURNS if args.mid else None)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
