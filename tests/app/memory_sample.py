"""The sample store distilled: what the Memory tab's tests and snapshots read.

The rules distiller runs over the sample sessions (no LLM), then a few hand-made records give
the explorer what a short sample cannot: an alias merge with its reason and a single-valued
fact that a later one superseded, and a fact naming the hostile session's title (markup and an
escape, to be shown as typed wherever the graph is drawn). core.md files are written for a fixed consolidation day,
so every run draws the same.
"""

from __future__ import annotations

from datetime import date

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import write_cores
from opmem_tui.backend.memory.records import Edge, Entity, entity_id
from opmem_tui.backend.model import Provenance

from .sample_store import DAY, HOSTILE_TITLE, NOW

CONSOLIDATED = date(2026, 1, 1)
MERGED_NAME = "./src/auth/middleware.py"
MERGE_REASON = "same path under the project"
OLD_PORT, NEW_PORT = "8000", "8080"


def _provenance(home: Home, turn: int, at: float, session: str = "fix-login") -> Provenance:
    turns = home.sessions.get_turns(session)
    nodes = tuple(n.id for n in turns[turn - 1].nodes[:1])
    meta = home.sessions.get_meta(session)
    return Provenance(meta.project_id, session, nodes, turns[turn - 1].commit, at, at, turn)


def distil_sample(home: Home) -> None:
    run(home, RunOptions(project=False))
    memory = home.memory
    middleware = memory.entity("src/auth/middleware.py")
    alias = Entity(entity_id("file", MERGED_NAME), "file", MERGED_NAME, scope=middleware.scope)
    first, second = _provenance(home, 1, NOW - 3 * DAY + 100), _provenance(home, 2, NOW - 2 * DAY + 700)
    project = memory.entity("webapp")
    ports = [Entity(entity_id("port", p), "port", p) for p in (OLD_PORT, NEW_PORT)]
    edges = [
        Edge(Edge.make_id(project.id, "listens-on", port.id, prov), project.id, port.id, "listens-on", prov, 0.9)
        for port, prov in zip(ports, (first, second), strict=True)
    ]
    hostile = Entity(entity_id("tool", HOSTILE_TITLE), "tool", HOSTILE_TITLE)
    said = _provenance(home, 1, NOW - DAY, "hostile")
    depends = Edge(
        Edge.make_id(project.id, "depends-on", hostile.id, said), project.id, hostile.id, "depends-on", said, 0.9
    )
    memory.append([alias, *ports, *edges, hostile, depends])
    memory.merge(middleware.id, alias.id, MERGE_REASON, score=0.97, at=NOW - DAY)
    memory.supersede(edges[0].id, edges[1].id, reason="a newer value of listens-on", at=NOW - DAY)
    names = {p.id: p.name for p in home.projects.list_projects()}
    write_cores(memory, CONSOLIDATED, names)
