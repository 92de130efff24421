"""A reader's wait while another process writes the same session (issue 14), beside the same
read with no writer, in the same run; wall and CPU time.

  python bench/store_reads.py [--quick]

A session of N turns is written once. The baseline: a warm SessionStore re-reads it after each
new turn another store wrote (get_turns: refresh + turns), nobody writing meanwhile. Under
contention: a child process holds the session's lock the whole time (an import batch appending
a turn every few ms); the reader does the same reads. Before reads were lock-free (store/
reader.py), each such read waited for the batch to end (reliability measured 1.55 s). The
longest single read is the figure; the target is that it stays within 5x the idle median (the
read never waits for the writer; what remains is sharing 2 cores with it).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import fmt, parser, report
from store_bench import grow

from opmem_tui.backend.model import turn_count
from opmem_tui.backend.store.sessions import SessionStore

BATCH = textwrap.dedent(
    """
    import sys
    from opmem_tui.backend.store.sessions import SessionStore
    store = SessionStore(sys.argv[1], durable=False)
    with store.batch("s") as batch:
        print("held", flush=True)
        k = 0
        while not sys.stdin.closed:
            user = batch.append("user", f"batch question {k}")
            batch.append("assistant", f"batch answer {k}", parent_id=user.id)
            batch.commit_turn()
            k += 1
            import select
            if select.select([sys.stdin], [], [], 0.005)[0]:
                break
    """
)


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _reads(root: Path, count: int, between) -> list[tuple[float, float]]:
    reader = SessionStore(root)
    reader.get_turns("s")
    out = []
    for _ in range(count):
        between()
        out.append(_timed(lambda: turn_count(reader.get_turns("s"))))
    return out


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    turns, count = (200, 15) if args.quick else (2000, 40)
    with tempfile.TemporaryDirectory(prefix="opmem-bench-") as tmp:
        root = Path(tmp) / "sessions"
        writer = SessionStore(root, durable=False)
        grow(writer, "s", turns)

        def one_more_turn() -> None:
            user = writer.append_message("s", "user", "idle question")
            writer.append_message("s", "assistant", "idle answer", parent_id=user.id)
            writer.commit_turn("s")

        idle = _reads(root, count, one_more_turn)
        child = subprocess.Popen(
            [sys.executable, "-c", BATCH, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "held"
            busy = _reads(root, count, lambda: time.sleep(0.02))  # the batch writes meanwhile
            still_held = child.poll() is None
        finally:
            if child.stdin is not None:
                child.stdin.close()
            child.wait(600)
        assert still_held, "the writer's batch ended before the reads did"
        idle_wall = statistics.median(w for w, _ in idle)
        idle_cpu = statistics.median(c for _, c in idle)
        worst_wall, worst_cpu = max(busy)
        print(f"{turns}-turn session, {count} reads each; the batch held the session's lock for every busy read")
        report(
            "longest read while a batch holds the lock (wall)",
            worst_wall,
            idle_wall,
            "idle read median (wall)",
            "<= 5x",
            worst_wall <= 5 * idle_wall,
        )
        report("that read's CPU", worst_cpu, idle_cpu, "idle read median (CPU)", "<= 5x", worst_cpu <= 5 * idle_cpu)
        print(
            f"(busy reads: median wall {fmt(statistics.median(w for w, _ in busy))}, "
            f"median CPU {fmt(statistics.median(c for _, c in busy))})"
        )


if __name__ == "__main__":
    main()
