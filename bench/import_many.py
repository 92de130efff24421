"""A first import of many small Claude Code sessions (issue 41), beside the floor, with peak memory.

  python bench/import_throughput.py --many [N] [--quick] [--base CHECKOUT] [--rounds R] [--dir DIR]

The corpus: 3,000 sessions of 20 turns, ~270 KB and ~150 messages each (300 with --quick; the issue's:
680 MB for 3,000), spread over 40 project folders, from the bench's Claude Code generator
(claude_corpus.py: Read/Bash/Edit results of varying sizes, thinking, hook progress records,
file-history snapshots), cached under bench/out/.

Each measured run is a fresh process (`--child`), so its peak RSS (ru_maxrss, the parse-ahead
worker's beside it) is the import's own, not the bench's. Figures, per round, interleaved:
- floor: json.loads of every line plus creating the node files (as import_throughput's floor);
- browsable + searchable: run_import(defer_mirror=True) with the search-index hook, until it
  returns (what the app and `opmem import` show first);
- whole import: the same plus the git mirror (what `opmem import` waits for before it exits).
Each is printed in wall and CPU seconds; the ratio is the floor's records/s against ours.
Targets: browsable + searchable >= 0.3 x the floor's rate; the whole import <= 90 s (3,000
sessions, 2 cores); peak RSS <= 400 MB.
"""

from __future__ import annotations

import inspect
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import report

if os.environ.get("BENCH_CHECKOUT"):  # a run of another checkout (--base): its parse worker too
    from import_ab import _Checkout

    _Checkout.root = os.environ["BENCH_CHECKOUT"]
    sys.meta_path.insert(0, _Checkout)

# ------------------------------------------------------------------ one measured run (a child)


def child(mode: str, root: Path, where: Path) -> dict[str, float]:
    """One run in this fresh process: 'floor' or 'import'; its times and peak memory."""
    wall, cpu = time.perf_counter(), time.process_time()
    out: dict[str, float] = {}
    if mode == "floor":
        from claude_corpus import files_of
        from import_throughput import create_files, json_loads_rate

        files = files_of(root)
        _, records = json_loads_rate(files)
        nodes = int(os.environ.get("BENCH_NODES", "0"))
        tempfile.tempdir = str(where)
        create_files(nodes)
        out["records"] = records
    else:
        from opmem_tui.backend.home import Home
        from opmem_tui.backend.importers import run_import
        from opmem_tui.backend.importers.hooks import IngestHooks
        from opmem_tui.backend.store.mirror_backlog import MirrorWriter

        home = Home(where / "home")
        hooks = IngestHooks(after_ingest=(home.search_index.after_ingest,))
        search = home.search_index
        workers = int(os.environ.get("BENCH_MIRROR_WORKERS", "-1"))
        if "mirrors" in inspect.signature(run_import).parameters:  # as `opmem import`: worker processes
            from opmem_tui.backend.store.mirror_pool import default_workers

            writer = MirrorWriter(
                home.sessions, on_commits=search.after_mirror, workers=default_workers() if workers < 0 else workers
            )
            extra = {"mirrors": writer}
        elif hasattr(search, "after_mirror"):
            writer, extra = MirrorWriter(home.sessions, on_commits=search.after_mirror), {}
        else:  # a checkout from before issue 41
            writer, extra = MirrorWriter(home.sessions, on_written=search.after_ingest), {}
        result = run_import(home, "claude", [root / "projects"], hooks=hooks, defer_mirror=True, **extra)
        out["browsable_wall"] = time.perf_counter() - wall
        out["browsable_cpu"] = time.process_time() - cpu
        writer.add(home.sessions.owed_mirrors() if extra else sorted(result.mirror_pending))
        mirror = writer.run()
        assert not mirror.problems and not home.sessions.pending_mirrors(), mirror.problems
        out.update(
            sessions=result.sessions, nodes=result.nodes, turns=result.turns, commits=mirror.commits,
            warnings=len(result.warnings),
        )  # fmt: skip
    out["wall"] = time.perf_counter() - wall
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["cpu"] = time.process_time() - cpu
    out["cpu_children"] = kids.ru_utime + kids.ru_stime
    out["sys"], out["sys_children"] = own.ru_stime, kids.ru_stime  # file creation is kernel time
    out["rss_mb"] = own.ru_maxrss / 1024
    out["rss_children_mb"] = kids.ru_maxrss / 1024
    return out


def run_child(mode: str, root: Path, nodes: int = 0, checkout: str = "") -> dict[str, float]:
    where = Path(tempfile.mkdtemp(prefix=f"opmem-many-{mode}-"))
    try:
        os.sync()  # nothing dirty from the run before (not timed)
        env = dict(os.environ, BENCH_NODES=str(nodes), BENCH_CHECKOUT=checkout)
        done = subprocess.run(
            [sys.executable, __file__, "--child", mode, str(root), str(where)],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"{mode} run failed:\n{done.stderr}")
        return json.loads(done.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(where, ignore_errors=True)


# ------------------------------------------------------------------ the bench


def file_creation_ms(count: int = 500) -> float:
    """Kernel time to create one empty file where the runs write (tempfile's folder): node files
    are one each, so this moves every figure (0.02-0.9 ms measured on the shared VM)."""
    where = Path(tempfile.mkdtemp(prefix="opmem-many-probe-"))
    try:
        before = os.times().system
        for n in range(count):
            os.close(os.open(where / f"f{n}", os.O_CREAT | os.O_WRONLY, 0o644))
        return (os.times().system - before) * 1000 / count
    finally:
        shutil.rmtree(where, ignore_errors=True)


def measure(sessions: int, base: str = "", rounds: int = 2) -> None:
    """`base`: a checkout from before (e.g. `git worktree add --detach /tmp/b <commit>`), imported in
    the same rounds, its figures printed beside (its own parse worker too)."""
    from claude_corpus import many_corpus

    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print(f"creating a file here costs {file_creation_ms():.3f} ms of kernel time (varies with the disk's load)")
    t0 = time.perf_counter()
    root = many_corpus(sessions)
    files = sorted((root / "projects").rglob("*.jsonl"))
    size = sum(f.stat().st_size for f in files)
    print(f"corpus: {len(files)} sessions, {size / 1e6:.1f} MB ({time.perf_counter() - t0:.1f} s to generate/find)")
    floors: list[dict[str, float]] = []
    imports: list[dict[str, float]] = []
    nodes = 0
    bases: list[dict[str, float]] = []
    for number in range(rounds):  # interleaved: the load moves them alike
        if base and number % 2:
            bases.append(run_child("import", root, checkout=base))
        first = run_child("import", root)
        nodes = int(first["nodes"])
        imports.append(first)
        if base and not number % 2:
            bases.append(run_child("import", root, checkout=base))
        floors.append(run_child("floor", root, nodes))
    records = int(floors[0]["records"])
    last = imports[-1]
    print(
        f"{records:,} records -> {last['sessions']:.0f} sessions, {nodes:,} nodes, {last['turns']:,.0f} turns, "
        f"{last['commits']:,.0f} turn commits, {last['warnings']:.0f} warnings ({rounds} rounds, best of each)"
    )
    floor_wall = min(f["wall"] for f in floors)
    floor_cpu = min(f["cpu"] for f in floors)
    b_wall = min(i["browsable_wall"] for i in imports)
    b_cpu = min(i["browsable_cpu"] for i in imports)
    print(f"floor (json.loads + creating {nodes:,} node files): {floor_wall:.2f} s wall, {floor_cpu:.2f} s CPU")
    report(
        "browsable + searchable (backlog import, index hook)",
        records / b_wall,
        records / floor_wall,
        "floor",
        ">= 0.3",
        b_wall * 0.3 <= floor_wall,
        unit="records/s",
    )
    print(f"  {b_wall:.2f} s wall, {b_cpu:.2f} s CPU (+ parse worker); CPU ratio {floor_cpu / b_cpu:.2f}")
    for number, (imp, flo) in enumerate(zip(imports, floors, strict=True), 1):
        print(
            f"  round {number}: import browsable {imp['browsable_wall']:.2f} s, whole {imp['wall']:.2f} s "
            f"({imp['cpu']:.2f} CPU, {imp['sys']:.2f} of it kernel, + {imp['cpu_children']:.2f} parse and mirror "
            f"workers); floor {flo['wall']:.2f} s "
            f"({flo['cpu']:.2f} CPU); ratio {flo['wall'] / imp['browsable_wall']:.2f}"
        )
    whole = min(i["wall"] for i in imports)
    limit = 90.0 * sessions / 3000
    report(
        f"whole import (git mirror included), {sessions} sessions", whole, limit, "the limit", "<= 1", whole <= limit
    )
    peak = max(i["rss_mb"] for i in imports)
    worker = max(i["rss_children_mb"] for i in imports)
    report("peak RSS of the import process", peak, 400, "400", "<= 1", peak <= 400, unit="MB")
    print(f"  parse worker peak RSS {worker:.0f} MB")
    if bases:
        then = {key: min(run[key] for run in bases) for key in ("browsable_wall", "browsable_cpu", "wall", "cpu")}
        now = {key: min(run[key] for run in imports) for key in then}
        print(
            f"before ({base}): browsable {then['browsable_wall']:.2f} s wall ({then['browsable_cpu']:.2f} CPU), "
            f"whole {then['wall']:.2f} s ({then['cpu']:.2f} CPU), peak RSS {max(r['rss_mb'] for r in bases):.0f} MB; "
            f"now / before: browsable {now['browsable_wall'] / then['browsable_wall']:.2f} wall, "
            f"{now['browsable_cpu'] / then['browsable_cpu']:.2f} CPU; whole {now['wall'] / then['wall']:.2f} wall, "
            f"{now['cpu'] / then['cpu']:.2f} CPU"
        )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))))
        return
    base = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else ""
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
    measure(300 if "--quick" in sys.argv else 3000, base, rounds)


if __name__ == "__main__":
    main()
