"""Long modes of the reliability suites (tests/reliability/): run one and print its figures.

    python bench/reliability.py --suite crash --long [--trials 200] [--minutes 10] [--seed N]
    python bench/reliability.py --suite bad-input --long
    python bench/reliability.py --suite concurrency --long

Without --long each suite runs its short (CI) size. The seed is printed: `--seed` replays a run
(same workloads and kill delays; where the kill lands still depends on the machine's load).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the suites live in tests/reliability


def crash(args: argparse.Namespace, base: Path) -> int:
    from tests.reliability.test_crash import KINDS, run_trials, suite_seed

    seed = args.seed if args.seed is not None else suite_seed()
    total = args.trials or (200 if args.long else 20)
    per_kind = -(-total // len(KINDS))
    print(
        f"crash: seed {seed} (replay: --seed {seed}); up to {per_kind * len(KINDS)} trials, {args.minutes} min at most"
    )
    started = time.monotonic()
    figures = run_trials(KINDS, per_kind, seed, base, long=args.long, deadline=started + args.minutes * 60)
    elapsed = time.monotonic() - started
    trials = sum(figures.trials.values())
    print(f"trials run: {trials} in {elapsed:.0f} s ({trials / elapsed * 60:.1f} per minute)")
    for kind in KINDS:
        print(f"  {kind:<11} trials {figures.trials[kind]:>4}  killed mid-write {figures.killed[kind]:>4}")
    print(f"acknowledged writes checked: {figures.acknowledged}")
    print(f"acknowledged writes lost: {figures.lost}")
    print(f"corrupt files after recovery: {figures.corrupt}")
    for problem in figures.problems[:20]:
        print(f"  {problem}")
    return 1 if figures.lost or figures.corrupt else 0


SUITES = {"crash": crash}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", choices=sorted(SUITES), required=True)
    p.add_argument("--long", action="store_true", help="the long mode (default: the CI size)")
    p.add_argument("--trials", type=int, default=0, help="crash: number of trials (default 200 long, 20 short)")
    p.add_argument("--minutes", type=float, default=10.0, help="stop starting new trials after this long")
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="opmem-reliability-") as tmp:
        sys.exit(SUITES[args.suite](args, Path(tmp)))


if __name__ == "__main__":
    main()
