"""Long modes of the reliability suites (tests/reliability/): run one and print its figures.

    python bench/reliability.py --suite crash --long [--trials 200] [--minutes 10] [--seed N]
    python bench/reliability.py --suite bad-input --long
    python bench/reliability.py --suite concurrency --long
    python bench/reliability.py --suite faults --long
    python bench/reliability.py --suite sync --long     (opmem sync killed midway: 20 trials, 3 short)

Without --long each suite runs its short (CI) size. The seed is printed: `--seed` replays a run
(same workloads and kill delays; where the kill lands still depends on the machine's load).
"""

from __future__ import annotations

import argparse
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the suites live in tests/reliability


def process_cpu() -> float:
    """CPU seconds of this process and its finished children (the writers, git): load-independent."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def crash(args: argparse.Namespace, base: Path) -> int:
    from tests.reliability.test_crash import KINDS, run_trials, suite_seed

    seed = args.seed if args.seed is not None else suite_seed()
    total = args.trials or (200 if args.long else 20)
    per_kind = -(-total // len(KINDS))
    print(
        f"crash: seed {seed} (replay: --seed {seed}); up to {per_kind * len(KINDS)} trials, {args.minutes} min at most"
    )
    started, cpu = time.monotonic(), process_cpu()
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))  # finish the trial, print the figures
    done = Counter()

    def progress(kind: str, result) -> None:
        done[kind] += 1
        flag = " LOST/CORRUPT" if result.lost or result.corrupt else ""
        print(
            f"  [{sum(done.values()):>3}] {kind:<11} seed {result.seed:<10} acked {result.acknowledged:>5} "
            f"{'killed' if result.killed else 'finished'} {time.monotonic() - started:>6.0f} s{flag}",
            flush=True,
        )

    figures = run_trials(
        KINDS,
        per_kind,
        seed,
        base,
        long=args.long,
        deadline=lambda: stop["now"] or time.monotonic() > started + args.minutes * 60,
        progress=progress,
    )
    elapsed = time.monotonic() - started
    trials = sum(figures.trials.values())
    print(
        f"trials run: {trials} in {elapsed:.0f} s wall, {process_cpu() - cpu:.0f} s CPU (this process and its writers)"
    )
    print(f"  ({trials / elapsed * 60:.1f} per minute{'; stopped by SIGTERM' if stop['now'] else ''})")
    for kind in KINDS:
        window = figures.durations.get(kind, 0.0)
        print(
            f"  {kind:<11} trials {figures.trials[kind]:>4}  killed mid-write {figures.killed[kind]:>4}"
            f"  (writer timed at {window:.1f} s)"
        )
    print(f"acknowledged writes checked: {figures.acknowledged}")
    print(f"acknowledged writes lost: {figures.lost}")
    print(f"corrupt files after recovery: {figures.corrupt}")
    for problem in figures.problems[:20]:
        print(f"  {problem}")
    return 1 if figures.lost or figures.corrupt else 0


def bad_input(args: argparse.Namespace, base: Path) -> int:
    from tests.reliability.nasty_files import CASES, SOURCES
    from tests.reliability.test_bad_input import InputFigures, damaged_store_files, import_corpus, run_hypothesis

    huge = 50 if args.long else 4
    examples = 300 if args.long else 15
    print(f"bad input: corpus with {huge} MB lines ({len(CASES)} kinds), {examples} hypothesis examples per importer")
    started, cpu = time.monotonic(), process_cpu()
    (base / "corpus").mkdir()
    figures = import_corpus(base / "corpus", seed=args.seed or 0, huge_mb=huge)
    for source in SOURCES:
        run_hypothesis(source, Path(tempfile.mkdtemp(dir=base)), examples, figures)
    store, tried = damaged_store_files(base / "store")
    for source in SOURCES:
        print(f"  {source:<12} inputs tried {figures.tried[source]:>5}")
    print(f"hand-edited store files tried: {tried}")
    crashes = figures.crashes + store.crashes
    print(f"crashes: {len(crashes)}")
    print(f"errors not naming the file: {len(figures.unclear) + len(store.unclear)}")
    print(
        f"valid records not read / stored data lost: {len(figures.unread) + len(store.rest_unread)} / {len(figures.lost)}"
    )
    print(f"in {time.monotonic() - started:.0f} s wall, {process_cpu() - cpu:.0f} s CPU")
    for problem in [*crashes, *figures.unclear, *store.unclear, *figures.unread, *store.rest_unread, *figures.lost][
        :20
    ]:
        print(f"  {problem}")
    assert isinstance(figures, InputFigures)
    return (
        1 if crashes or figures.unclear or figures.unread or figures.lost or store.unclear or store.rest_unread else 0
    )


def concurrency(args: argparse.Namespace, base: Path) -> int:
    from tests.reliability.test_concurrency import run_contention

    turns, lines = (60, 2000) if args.long else (8, 120)
    print(
        f"concurrency: 4 appenders x {turns} turns (2 on one session), import of {lines} lines, "
        f"opmem watch of {lines // 4} lines, 2 distillation runs, 1 reader (the app's data layer)"
    )
    started, cpu = time.monotonic(), process_cpu()
    outcome = run_contention(base, turns, lines)
    print(
        f"writes checked: {outcome.nodes} nodes in {time.monotonic() - started:.0f} s wall, "
        f"{process_cpu() - cpu:.0f} s CPU (this process and its workers)"
    )
    print(f"errors (lost writes, exceptions, fsck): {len(outcome.errors)}")
    print(f"reader: {outcome.reads} reads, longest single read {outcome.longest_read * 1000:.0f} ms")
    for problem in outcome.errors[:20]:
        print(f"  {problem}")
    return 1 if outcome.errors else 0


def faults(args: argparse.Namespace, base: Path) -> int:
    import errno

    from tests.reliability.test_crash import suite_seed
    from tests.reliability.test_faults import faulted_runs, sqlite_full_runs

    seed = args.seed if args.seed is not None else suite_seed()
    per = 8 if args.long else 2
    runs = [("import", errno.ENOSPC), ("import", errno.EROFS), ("distill", errno.ENOSPC), ("distill", errno.EROFS)]
    print(f"faults: seed {seed} (replay: --seed {seed}); {per} trials per fault and command, and SQLITE_FULL")
    started, cpu = time.monotonic(), process_cpu()
    problems: list[str] = []
    trials = 0
    for n, (workload, code) in enumerate(runs):
        (base / f"{workload}-{code}").mkdir()
        found = faulted_runs(base / f"{workload}-{code}", workload, code, per, seed + n)
        print(f"  {workload:<8} {errno.errorcode[code]:<7} trials {per:>3}  problems {len(found)}", flush=True)
        problems += found
        trials += per
    for workload in ("import", "distill"):
        (base / f"{workload}-sqlite").mkdir()
        found = sqlite_full_runs(base / f"{workload}-sqlite", workload, per, seed + 10)
        print(f"  {workload:<8} SQLITE_FULL trials {per:>3}  problems {len(found)}", flush=True)
        problems += found
        trials += per
    print(f"trials run: {trials} in {time.monotonic() - started:.0f} s wall, {process_cpu() - cpu:.0f} s CPU")
    print(f"problems (tracebacks, half-written files, failed next runs, index/cache mismatches): {len(problems)}")
    for problem in problems[:20]:
        print(f"  {problem}")
    return 1 if problems else 0


def sync_kills(args: argparse.Namespace, base: Path) -> int:
    """`opmem sync` SIGKILLed at a random point of a push and of a pull (tests/backend/sync/test_sync_faults.py)."""
    from tests.backend.sync.test_sync_faults import kill_trial
    from tests.reliability.test_crash import suite_seed

    seed = args.seed if args.seed is not None else suite_seed()
    total = args.trials or (20 if args.long else 3)
    print(f"sync: seed {seed} (replay: --seed {seed}); {total} trials, each a killed push and a killed pull")
    started, cpu = time.monotonic(), process_cpu()
    problems: list[str] = []
    for n in range(total):
        (base / f"t{n}").mkdir()
        found = kill_trial(base / f"t{n}", seed + n)
        print(
            f"  [{n + 1:>3}] seed {seed + n:<10} problems {len(found)}  {time.monotonic() - started:>6.0f} s",
            flush=True,
        )
        problems += found
    print(f"trials run: {total} in {time.monotonic() - started:.0f} s wall, {process_cpu() - cpu:.0f} s CPU")
    print(f"problems (corrupt sessions or memory, a next sync that failed, sessions missing): {len(problems)}")
    for problem in problems[:20]:
        print(f"  {problem}")
    return 1 if problems else 0


SUITES = {"crash": crash, "bad-input": bad_input, "concurrency": concurrency, "faults": faults, "sync": sync_kills}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", choices=sorted(SUITES), required=True)
    p.add_argument("--long", action="store_true", help="the long mode (default: the CI size)")
    p.add_argument("--trials", type=int, default=0, help="crash: number of trials (default 200 long, 20 short)")
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="crash: stop starting new trials after this long (90 long, 10 short)",
    )
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    if args.minutes is None:
        args.minutes = 90.0 if args.long else 10.0
    with tempfile.TemporaryDirectory(prefix="opmem-reliability-") as tmp:
        sys.exit(SUITES[args.suite](args, Path(tmp)))


if __name__ == "__main__":
    main()
