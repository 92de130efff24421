"""What the privacy filter costs the memory's reads, each figure beside a baseline in this run.

  python bench/privacy_bench.py [--quick]

A generated memory (bench/memory_home.py: 20,000 events, 40,000 edges; --quick 4,000) whose
sessions exist as meta.json folders. Every memory query asks, once per session it meets,
whether that session may be shown. The baseline is the check it replaces (the session folder
exists: a stat); ours reads the session's meta.json (private flag, project, cwd) and applies
the [memory] exclusions (two of each configured):

1. core.md rendered (global and project), the worst of five;
2. a timeline page (100 newest) and a 30-day window;
3. `opmem sessions private` on one session of that memory (withdraw: index rows dropped, every
   core.md and entity view re-projected), beside the stage-5 projection of a whole memory.
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, parser, report
from memory_home import fill_memory

from opmem_tui.backend.distill.project import project_all
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import render_core
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.orchestration import set_private


def alternating(baseline, ours, rounds: int = 5) -> tuple[float, float]:
    """Best of `rounds` for each, run in turn (a loaded machine then slows both alike)."""
    pairs = [(best_of(baseline, 2), best_of(ours, 2)) for _ in range(rounds)]
    return min(p[0] for p in pairs), min(p[1] for p in pairs)


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    events = 4_000 if args.quick else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "home"
        fill_memory(path, events, sessions=True)
        (path / "config.toml").write_text(
            '[memory]\nexclude_projects = ["client-a", "client-b"]\n'
            'exclude_paths = ["~/work/secret-client/**", "/srv/private/*"]\n',
            encoding="utf-8",
        )
        home = Home(path, durable=False)
        base = MemoryStore(home.memory_dir, session_exists=home.sessions.exists, durable=False)
        ours = MemoryStore(home.memory_dir, session_exists=home.visible, durable=False)
        day = dt.date(2026, 1, 1)
        base.timeline(limit=1), ours.timeline(limit=1)  # the caches built

        def cores(memory: MemoryStore):
            return lambda: (render_core(memory, day), render_core(memory, day, "proj", "proj"))

        t_base, t_ours = alternating(cores(base), cores(ours))
        report("core.md (global + project)", t_ours, t_base, "exists() filter", "<= 1.5x", t_ours <= 1.5 * t_base)
        until = 1_767_225_600.0

        def page(memory: MemoryStore):
            return lambda: (memory.timeline(limit=100), memory.timeline(until - 30 * 86400, until, limit=100))

        t_base, t_ours = alternating(page(base), page(ours))
        report("timeline pages", t_ours, t_base, "exists() filter", "<= 1.5x", t_ours <= 1.5 * t_base)
        base.close()
        ours.close()

        start = time.perf_counter()
        project_all(home, None, ())
        t_project = time.perf_counter() - start
        start = time.perf_counter()
        set_private(home, "sess-00001")
        t_private = time.perf_counter() - start
        report(
            "sessions private (withdraw)",
            t_private,
            t_project,
            "a whole stage 5",
            "<= 1.5x",
            t_private <= 1.5 * t_project,
        )


if __name__ == "__main__":
    main()
