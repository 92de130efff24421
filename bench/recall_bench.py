"""Recall tool calls, each beside the store read it is built on, measured in the same run.

    python bench/recall_bench.py            # a 500-turn session, a 5 MB tool output, 10,000 commits,
                                            # 10,000 events + 20,000 edges in memory
    python bench/recall_bench.py --quick    # 100 turns, 2,000 commits, 2,000 events + 4,000 edges

Every figure is the median of repeated calls through the registry (`call`, as the MCP server and
the CLI run them: argument check, tool, reply bounded to 16 KB) in one warm process, beside the
backend read it wraps (SessionStore.get_turns on a warm store, ProjectGit.log / show, the
MemoryStore queries, the search service, core.md's renderer), so the ratio is what recall adds:
a read-only reopen (sessions, the memory's cache, the index), formatting and bounding. The
first-query figure is a new Recall (as `opmem mcp` starts) beside a new MemoryStore, both
finding the memory's disk cache in place; the Recall reads a private copy of that cache (so it
writes nothing), which costs a read of the whole file: its target is absolute.
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
from opmem_tui.backend.memory.core import consolidation_day, render_core
from opmem_tui.backend.memory.records import Edge, Entity, Event, entity_id, project_scope
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.model import Provenance
from opmem_tui.backend.projects.repository import ProjectGit
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.core_block import core_block
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


def paired(ours: Callable[[], object], base: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Medians of `ours` and `base` called in turn, so a burst of load on the shared machine
    falls on both sides of the ratio."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        a.append(median_time(ours, 1))
        b.append(median_time(base, 1))
    return statistics.median(a), statistics.median(b)


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


def build_memory(home: Home, project_id: str, sid: str, events: int, edges: int) -> str:
    """Events over the session's turns and a graph of `edges` edges among events // 2 entities."""
    scope = project_scope(project_id)
    names = [f"module_{i}.py" for i in range(max(10, events // 2))]
    entities = [
        Entity(entity_id("file", n), "file", n, (), {}, scope, Provenance(project_id, sid, (), None, T0, T0, 1))
        for n in names
    ]
    records: list[object] = list(entities)
    for i in range(events):
        p = Provenance(project_id, sid, (), None, T0 + i * 30, T0 + i * 30, i % 100 + 1)
        summary = f"Fixed the failing test in {names[i % len(names)]} (assert status {200 + i % 7})"
        kind = "decision" if i % 10 == 0 else "work"
        records.append(
            Event(Event.make_id(summary, kind, p), summary, kind, 0.5, p, (entities[i % len(names)].id,), scope)
        )
    for i in range(edges):
        src, dst = entities[i % 50].id, entities[(i * 7 + 1) % len(entities)].id
        p = Provenance(project_id, sid, (), None, T0 + i, T0 + i, i % 100 + 1)
        records.append(Edge(Edge.make_id(src, "imports", dst, p), src, dst, "imports", p, 0.8, scope))
    home.memory.append(records)  # type: ignore[arg-type]
    home.memory.close()
    return names[0]


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    turns, commits, repeat = (100, 2000, 7) if args.quick else (500, 10_000, 9)
    events, edges = (2000, 4000) if args.quick else (10_000, 20_000)
    root = Path(tempfile.mkdtemp(prefix="opmem-recall-bench-"))
    try:
        home = Home(root / "home", durable=False)
        home.ensure()
        sid = "bench-session"
        build_session(home, sid, turns)
        build_repo(root / "repo", commits)
        project = home.projects.resolve_project(root / "repo", name="bench")
        hub = build_memory(home, project.id, sid, events, edges)
        home.search_index.rebuild()
        home.search_index.close()
        scope = project_scope(project.id)

        def first_query_recall() -> object:
            return call_json(recall_for(Home(home.path, durable=False), cwd=root / "repo"), "memory_timeline", {})

        def first_query_store() -> object:
            memory = MemoryStore(home.memory_dir, durable=False)
            try:
                return memory.timeline(scope=scope, limit=500)
            finally:
                memory.close()

        ours, base = paired(first_query_recall, first_query_store, 3)
        report(
            f"first memory_timeline of a new Recall ({events:,} events, {edges:,} edges)",
            ours,
            base,
            "a new MemoryStore's timeline",
            "<= 0.5 s (the memory's cold-open target)",
            ours <= 0.5,
        )
        recall = recall_for(Home(home.path, durable=False), cwd=root / "repo")
        warm = Home(home.path, durable=False).sessions
        warm.get_turns(sid)

        def tool(name: str, **arguments: object) -> Callable[[], object]:
            return lambda: call_json(recall, name, arguments)

        ours, base = paired(tool("memory_open_session", session_id=sid), lambda: warm.get_turns(sid), repeat)
        report(
            f"memory_open_session overview ({turns} turns)",
            ours,
            base,
            "SessionStore.get_turns (warm)",
            "<= 3x",
            ours <= 3 * base,
        )
        big = turns // 2 + 1
        ours, base = paired(tool("memory_open_session", session_id=sid, turn=big), lambda: warm.get_turns(sid), repeat)
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

        ours, base = paired(tool("memory_git_log", project_id=project.id), fresh_log, repeat)
        report(f"memory_git_log 50 of {commits:,} commits", ours, base, "ProjectGit.log(50)", "<= 3x", ours <= 3 * base)
        ours, base = paired(
            tool("memory_git_show", commit="HEAD", project_id=project.id),
            lambda: ProjectGit(root / "repo").show("HEAD"),
            repeat,
        )
        report("memory_git_show HEAD", ours, base, "ProjectGit.show", "<= 3x", ours <= 3 * base)

        memory = Home(home.path, durable=False).memory
        memory.timeline(scope=scope)
        ours, base = paired(tool("memory_timeline"), lambda: memory.timeline(scope=scope, limit=500), repeat)
        report(
            "memory_timeline (newest 500, one page)",
            ours,
            base,
            "MemoryStore.timeline(limit=500)",
            "<= 3x",
            ours <= 3 * base,
        )
        ours, base = paired(
            tool("memory_graph_neighbors", entity=hub, hops=2),
            lambda: memory.neighbors(hub, 2, scope=scope, limit=500, fan_out=50),
            repeat,
        )
        report(
            "memory_graph_neighbors hops=2 (limit 500)", ours, base, "MemoryStore.neighbors", "<= 3x", ours <= 3 * base
        )
        service = Home(home.path, durable=False).search_index
        question = "which test failed in module_12.py"
        service.search(question, scope, 10)
        ours, base = paired(tool("memory_search", query=question), lambda: service.search(question, scope, 10), repeat)
        report("memory_search k=10", ours, base, "SearchService.search (writable index)", "<= 3x", ours <= 3 * base)
        day = consolidation_day(time.time())
        ours, base = paired(
            lambda: core_block(recall), lambda: render_core(memory, day, project.id, project.name), repeat
        )
        report("core block (no core.md yet: rendered)", ours, base, "render_core", "<= 3x", ours <= 3 * base)
        service.close()
        memory.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
