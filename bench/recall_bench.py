"""Recall tool calls, each beside the store read it is built on, measured in the same run.

    python bench/recall_bench.py            # a 500-turn session, a 5 MB tool output, 10,000 commits
    python bench/recall_bench.py --quick    # 100 turns, 2,000 commits

Every figure is the median of repeated calls through the registry (`call`, as the MCP server and
the CLI run them: argument check, tool, reply bounded to 16 KB) in one warm process, beside the
backend read it wraps (SessionStore.get_turns on a warm store, ProjectGit.log / show), so the
ratio is what recall adds: a read-only reopen of the session, formatting and bounding.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.projects.repository import ProjectGit
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.registry import call_json

T0 = 1_700_000_000.0
FIVE_MB = 5 * 1024 * 1024


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def build_session(home: Home, sid: str, turns: int) -> None:
    output = "E   assert response.status == 200\n" * (FIVE_MB // 33)
    with home.sessions.batch(sid) as batch:
        parent = None
        clock = T0
        for n in range(turns):
            user = batch.append(
                "user", f"turn {n}: fix the failing test in module {n}", parent_id=parent, created_at=clock
            )
            reply = batch.append("assistant", f"Looking at module {n}.", parent_id=user.id, created_at=clock + 1)
            for k in range(2):
                text = output if n == turns // 2 and k == 0 else f"line {k} of tool output\n" * 80
                batch.append(
                    "tool",
                    text,
                    called_by=reply.id,
                    name="Bash",
                    input={"command": f"pytest tests/test_{n}.py"},
                    created_at=clock + 2 + k,
                )
            last = batch.append("assistant", f"Fixed module {n}.", parent_id=reply.id, created_at=clock + 5)
            batch.commit_turn(last.id)
            parent = last.id
            clock += 60
    home.sessions.flush()


def build_repo(path: Path, count: int) -> None:
    repo = pygit2.init_repository(str(path), initial_head="main")
    blobs = [repo.create_blob(f"file {i}\n".encode()) for i in range(20)]
    parents: list[pygit2.Oid] = []
    for i in range(count):
        slot = i % 20
        blobs[slot] = repo.create_blob(("".join(f"line {j} of step {i}\n" for j in range(200))).encode())
        tree = repo.TreeBuilder()
        for j in range(20):
            tree.insert(f"m{j:02d}.py", blobs[j], FileMode.BLOB)
        sig = pygit2.Signature("Uma User", "uma@example.com", int(T0) + i * 90, 0)
        oid = repo.create_commit(None, sig, sig, f"change m{slot:02d} step {i}\n", tree.write(), parents)
        parents = [oid]
    repo.references.create("refs/heads/main", parents[0], force=True)


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    turns, commits, repeat = (100, 2000, 7) if args.quick else (500, 10_000, 9)
    root = Path(tempfile.mkdtemp(prefix="opmem-recall-bench-"))
    try:
        home = Home(root / "home", durable=False)
        home.ensure()
        sid = "bench-session"
        build_session(home, sid, turns)
        build_repo(root / "repo", commits)
        project = home.projects.resolve_project(root / "repo", name="bench")
        recall = recall_for(Home(home.path, durable=False), cwd=root / "repo")
        warm = Home(home.path, durable=False).sessions
        warm.get_turns(sid)

        def tool(name: str, **arguments: object) -> Callable[[], object]:
            return lambda: call_json(recall, name, arguments)

        ours = median_time(tool("memory_open_session", session_id=sid), repeat)
        base = median_time(lambda: warm.get_turns(sid), repeat)
        report(
            f"memory_open_session overview ({turns} turns)",
            ours,
            base,
            "SessionStore.get_turns (warm)",
            "<= 3x",
            ours <= 3 * base,
        )
        big = turns // 2 + 1
        ours = median_time(tool("memory_open_session", session_id=sid, turn=big), repeat)
        report(
            f"memory_open_session turn {big} (a 5 MB tool output)",
            ours,
            base,
            "SessionStore.get_turns (warm)",
            "<= 3x",
            ours <= 3 * base,
        )

        def fresh_log() -> object:
            return ProjectGit(root / "repo").log(50)

        ours = median_time(tool("memory_git_log", project_id=project.id), repeat)
        base = median_time(fresh_log, repeat)
        report(f"memory_git_log 50 of {commits:,} commits", ours, base, "ProjectGit.log(50)", "<= 3x", ours <= 3 * base)
        ours = median_time(tool("memory_git_show", commit="HEAD", project_id=project.id), repeat)
        base = median_time(lambda: ProjectGit(root / "repo").show("HEAD"), repeat)
        report("memory_git_show HEAD", ours, base, "ProjectGit.show", "<= 3x", ours <= 3 * base)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
