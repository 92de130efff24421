"""The SessionStart hook (`opmem hook session-start`, what Claude Code runs before every session)
beside `opmem --help`, both cold: a new process each run, as the agent starts it.

The store: 10,000 sessions (meta.json folders), a 100,000-event memory (200,000 edges, via
bench/memory_home.py), 50 bound projects in projects/projects.json holding the 10,000 session
ids, and the core.md files the distillation writes (memory/core.md, memory/projects/<id>/
core.md, rendered by the memory's own renderer). The hook is given Claude Code's JSON on stdin
with a `cwd` two folders deep inside the project the memory is about, and (one more figure) a
`cwd` in a git repository that is no bound project's (the global block).

Prints the median and best of N alternating runs of each, the ratio, and the target: the hook
<= 100 ms (median, cold).
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import fmt, parser
from memory_home import fill_memory, write_sessions

from opmem_tui.backend.agents.connect import connect
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import write_cores
from opmem_tui.backend.memory.store import MemoryStore

TARGET_MS = 100.0


def build(root: Path, sessions: int, events: int, projects: int) -> tuple[Home, Path]:
    home_path = root / "opmem"
    started = time.perf_counter()
    fill_memory(home_path, events)
    write_sessions(home_path / "sessions", sessions)
    work = root / "work"
    ids = [f"sess-{i:05d}" for i in range(sessions)]
    items = []
    for p in range(projects):
        pid = "proj" if p == 0 else f"proj-{p:02d}"
        folder = work / pid
        (folder / "src" / "api").mkdir(parents=True)
        share = ids[p::projects]
        items.append(
            {
                "id": pid,
                "name": f"project {p}",
                "workdir": str(folder.resolve()),
                "status": "active",
                "created_at": 0.0,
                "sessions": share,
            }
        )
    (home_path / "projects").mkdir(parents=True, exist_ok=True)
    (home_path / "projects" / "projects.json").write_text(json.dumps({"projects": items}, indent=1))
    home = Home(home_path, durable=False)
    memory = MemoryStore(home.memory_dir, durable=False)
    try:
        cores = write_cores(memory, date(2026, 1, 1), {i["id"]: i["name"] for i in items})
    finally:
        memory.close()
    print(
        f"store: {sessions:,} sessions, {events:,} events, {projects} projects, {len(cores)} core.md files; built in {time.perf_counter() - started:.1f} s"
    )
    return home, work / "proj" / "src" / "api"


CPU: dict[int, float] = {}


def run_once(argv: list[str], stdin: str) -> float:
    """Wall time of one cold run; its CPU time (user + sys, less sensitive to a loaded machine)
    is kept in CPU under the same key."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    CPU[len(CPU)] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed


def timed(argv: list[str], stdin: str, walls: list[float], cpus: list[float]) -> None:
    walls.append(run_once(argv, stdin))
    cpus.append(CPU[len(CPU) - 1])


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=15)
    args = p.parse_args()
    sessions, events, projects = (1_000, 10_000, 10) if args.quick else (10_000, 100_000, 50)
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = build(Path(tmp), sessions, events, projects)
        connect(home, "claude", Path(tmp) / "user", {"PATH": ""})  # writes the hook's precomputed contexts
        settings = json.loads((Path(tmp) / "user" / ".claude" / "settings.json").read_text())
        hook = shlex.split(settings["hooks"]["SessionStart"][0]["hooks"][0]["command"])  # as Claude Code runs it
        exe = hook[: hook.index("--home")]
        stdin = json.dumps(
            {
                "session_id": "b3",
                "transcript_path": "/dev/null",
                "cwd": str(cwd),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
        )
        out = subprocess.run(hook, input=stdin, capture_output=True, text=True, check=True).stdout
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert "project 0" in context, "the hook did not find the project's core block"
        print(f"hook output: {len(out):,} bytes, additionalContext {len(context):,} chars")
        help_argv = [*exe, "--home", str(home.path), "--help"]
        # a folder outside every bound project's folder: a git repository of its own, which
        # projects/identity.py reads (its .git, HEAD, config) to see it is no bound project's
        outside = Path(tmp) / "elsewhere" / "repo" / "src"
        outside.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(outside.parent)], check=True)
        away = json.loads(stdin) | {"cwd": str(outside)}
        away_stdin = json.dumps(away)
        hooks, helps, python, live, aways = [], [], [], [], []
        hook_cpu, help_cpu, python_cpu, live_cpu, away_cpu = [], [], [], [], []
        cache = home.path / "agents" / "context"
        for _ in range(args.runs):  # interleaved, so all of them see the same machine load
            timed(hook, stdin, hooks, hook_cpu)
            timed(help_argv, "", helps, help_cpu)
            timed([sys.executable, "-c", "pass"], "", python, python_cpu)
            saved = {p: p.read_bytes() for p in cache.glob("*.json")}
            for p in saved:
                p.unlink()
            timed(hook, stdin, live, live_cpu)  # no precomputed context: reads, redacts, renders
            for p, data in saved.items():
                p.write_bytes(data)
            timed(hook, away_stdin, aways, away_cpu)
    print(f"load average during the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, walls, cpus in (
        ("python -c pass (floor)           ", python, python_cpu),
        ("opmem hook session-start         ", hooks, hook_cpu),
        ("  the same, no precomputed context", live, live_cpu),
        ("  in a repository of no project   ", aways, away_cpu),
        ("opmem --help                     ", helps, help_cpu),
    ):
        print(
            f"{name}: wall median {fmt(statistics.median(walls))}, best {fmt(min(walls))}; cpu median {fmt(statistics.median(cpus))}"
        )
    ours, base = statistics.median(hooks), statistics.median(helps)
    ours_cpu = statistics.median(hook_cpu)
    print(
        f"session-start / --help: wall ratio {ours / base:.3f}, cpu ratio {ours_cpu / statistics.median(help_cpu):.3f}"
    )
    ok = ours * 1e3 <= TARGET_MS
    print(
        f"target <= {TARGET_MS:.0f} ms cold (wall median {fmt(ours)}, cpu median {fmt(ours_cpu)}): {'MET' if ok else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
