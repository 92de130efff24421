"""Distillation figures (issue: distillation), each beside a baseline measured in the same run.

  python bench/distill_bench.py [--quick]

1. Rules distillation throughput, nodes/s, on a generated corpus of coding sessions (prompts,
   Read/Edit/Grep/Bash calls with test output, decisions, installs, commits): a whole run
   (collect, extract, link, reconcile, durable memory writes, cursors; stage 5 timed apart)
   beside just reading the same nodes (SessionStore.get_nodes of every session, cold).
   Target: >= 0.3 x the reading speed.
2. An incremental run with nothing new over 10,000 sessions (1,000 with --quick), beside a bare
   os.scandir of the sessions folder. Target: <= 0.5 s.

Both corpora are generated once (through the store, so every session is a real repo) and kept
under bench/out/; the 10,000-session home is distilled once when it is made.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import OUT, fmt, median_of, parser, report

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.distill.project import project_all
from opmem_tui.backend.home import Home

FILES = [f"src/{pkg}/{name}.py" for pkg in ("store", "api", "core", "ui") for name in ("main", "util", "models", "db")]
PROMPTS = [
    "fix the failing test in {f}",
    "the worker crashes on start, look at {f}",
    "add a cache to {f} and run the tests",
    "rename the handler in {f}",
    "why is {f} so slow? profile it",
]
REPLIES = [
    "Done. The fix was a missing lock around the write.",
    "Turns out the cache key ignored the scope, so two projects shared entries.",
    "We decided to keep SQLite for the index; Postgres is overkill here.",
    "Updated the handler and the call sites.",
    "The tests pass again.",
]
PYTEST = "{dots}\n=================== {p} passed, {f} failed in 1.23s ===================\n"
TRACE = "Traceback (most recent call last):\n  File \"{f}\", line 12, in run\n    x = cache[key]\nKeyError: 'scope'\n"


def write_session(home: Home, sid: str, turns: int, rng: random.Random, start: float) -> int:
    nodes = 0
    clock = start
    with home.sessions.batch(sid) as batch:
        last = None
        for _ in range(turns):
            f = rng.choice(FILES)
            clock += 30
            user = batch.append(
                "user",
                rng.choice(PROMPTS).format(f=f),
                parent_id=last,
                created_at=clock,
                session_meta={"cwd": "/w/app"},
            )
            reply = batch.append(
                "assistant", "Let me look.", parent_id=user.id, name="claude-test-1", created_at=clock + 1
            )
            calls = [
                ("Read", {"file_path": f"/w/app/{f}"}, "\n".join(f"{i:>5}→line {i} of code" for i in range(60))),
                ("Grep", {"pattern": "def run", "path": "src"}, f"{f}:12:def run(self):"),
                ("Edit", {"file_path": f"/w/app/{f}", "old_string": "x = 1", "new_string": "x = 2"}, "updated"),
            ]
            failed = rng.random() < 0.3
            output = PYTEST.format(dots="." * 40, p=rng.randint(5, 60), f=1 if failed else 0)
            calls.append(("Bash", {"command": "pytest -q tests"}, output + (TRACE.format(f=f) if failed else "")))
            if rng.random() < 0.1:
                calls.append(("Bash", {"command": "pip install httpx"}, "Successfully installed httpx-0.27.0"))
            for k, (name, args, out) in enumerate(calls):
                meta = {"exit_code": 1} if failed and name == "Bash" else None
                batch.append(
                    "tool", out, parent_id=reply.id, called_by=reply.id, name=name, input=args,
                    metadata=meta, created_at=clock + 2 + k,
                )  # fmt: skip
            last = batch.append(
                "assistant", rng.choice(REPLIES), parent_id=reply.id, name="claude-test-1", created_at=clock + 9
            ).id
            batch.commit_turn()
            nodes += 3 + len(calls)
    return nodes


def coding_corpus(sessions: int, turns: int) -> tuple[Path, int]:
    """A cached home of generated coding sessions (never distilled: the bench copies it)."""
    root = OUT / f"distill-corpus-{sessions}x{turns}"
    marker = root / "nodes.txt"
    if marker.exists():
        return root, int(marker.read_text())
    shutil.rmtree(root, ignore_errors=True)
    home = Home(root / "home", durable=False)
    rng = random.Random(7)
    nodes = sum(write_session(home, f"s{k:05d}", turns, rng, 1_700_000_000.0 + 3600 * k) for k in range(sessions))
    marker.write_text(str(nodes))
    return root, nodes


def idle_corpus(sessions: int) -> Path:
    """A cached, already distilled home of `sessions` one-turn sessions."""
    root = OUT / f"distill-idle-{sessions}"
    marker = root / "ready"
    if marker.exists():
        return root / "home"
    shutil.rmtree(root, ignore_errors=True)
    home = Home(root / "home", durable=False)
    rng = random.Random(11)
    t0 = time.perf_counter()
    for k in range(sessions):
        write_session(home, f"i{k:05d}", 1, rng, 1_600_000_000.0 + 60 * k)
    print(f"  (made {sessions:,} sessions in {time.perf_counter() - t0:.0f} s)")
    t0 = time.perf_counter()
    first = run(home, RunOptions(project=False))
    print(f"  (first distillation: {first.line()} in {time.perf_counter() - t0:.0f} s)")
    marker.write_text("ok")
    return root / "home"


def read_all(home_path: Path) -> int:
    home = Home(home_path, durable=False)
    listing = home.sessions.list_sessions()
    return sum(len(home.sessions.get_nodes(m.id)) for m in listing.sessions)


def throughput(sessions: int, turns: int) -> None:
    corpus, nodes = coding_corpus(sessions, turns)
    print(f"corpus: {sessions} coding sessions x {turns} turns, {nodes:,} nodes")
    work = OUT / "distill-work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(corpus / "home", work)
    start = time.perf_counter()
    assert read_all(work) == nodes
    reading = time.perf_counter() - start
    home = Home(work)  # durable, as a user's home
    start = time.perf_counter()
    result = run(home, RunOptions(project=False))
    ours = time.perf_counter() - start
    assert result.nodes == nodes, result.line()
    print(f"  {result.line()}")
    report(
        "rules distillation",
        nodes / ours,
        nodes / reading,
        "reading the nodes",
        ">= 0.3 x",
        nodes / ours >= 0.3 * nodes / reading,
        unit="nodes/s",
    )
    start = time.perf_counter()
    notes = project_all(home, None)
    print(f"  stage 5 (all core.md files and entity views, apart): {fmt(time.perf_counter() - start)}; {notes[-1]}")


def incremental(sessions: int) -> None:
    home_path = idle_corpus(sessions)
    home = Home(home_path)
    noop = median_of(lambda: run(Home(home_path), RunOptions(project=False)), repeat=5)
    check = run(home, RunOptions(project=False))
    assert check.written.total == 0 and check.nodes == 0, check.line()
    scan = median_of(lambda: sum(1 for _ in os.scandir(home.sessions_dir)), repeat=5)
    report(
        f"incremental run, nothing new, {sessions:,} sessions",
        noop,
        scan,
        "os.scandir of sessions/",
        "<= 0.5 s",
        noop <= 0.5,
    )


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.quick:
        throughput(40, 10)
        incremental(1_000)
    else:
        throughput(200, 20)
        incremental(10_000)


if __name__ == "__main__":
    main()
