"""Cold open of a long session to its last turn (issue 8), beside os.listdir(history) in the same run.

  python bench/session_open.py [--quick]

A 2,000-turn session (4 nodes a turn, as bench/store_bench.py) is written once; then each
repetition uses a new SessionStore, as a process that has not opened the session yet:
`last_turn()` is what a replay needs to put the last turn on screen (tail.py: meta.json, a
listing of history/, the files of the last turn). The full open (`get_turns`, every node file
parsed and the git mirror checked) is printed for comparison. The OS file cache is warm in
every figure, as it is for a session the user looked at recently.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, median_wall_cpu, parser, report, report_cpu
from store_bench import grow

from opmem_tui.backend.model import turn_count
from opmem_tui.backend.store.sessions import SessionStore


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    turns = 400 if args.quick else 2000
    with tempfile.TemporaryDirectory(prefix="opmem-bench-") as tmp:
        root = Path(tmp) / "sessions"
        grow(SessionStore(root, durable=False), "s", turns)
        history = root / "s" / "history"

        def cold_last_turn() -> None:
            last = SessionStore(root).last_turn("s")
            assert last.turn_count == turns and last.turn is not None

        base, base_cpu = median_wall_cpu(lambda: os.listdir(history), 9)
        ours, ours_cpu = median_wall_cpu(cold_last_turn, 9)
        n = len(os.listdir(history))
        report(
            f"cold open to the last turn, {turns}-turn session ({n} nodes)",
            ours,
            base,
            "os.listdir(history)",
            "<= 100 ms",
            ours <= 0.1,
        )
        report_cpu("cold open to the last turn", ours_cpu, base_cpu, "os.listdir(history)")
        full = best_of(lambda: turn_count(SessionStore(root).get_turns("s")), 3)
        print(f"(for comparison, a full cold open with get_turns: {fmt(full)})")


if __name__ == "__main__":
    main()
