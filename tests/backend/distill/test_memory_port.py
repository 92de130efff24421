"""MemoryPort's reads: stored edges of a relation (read together after a flush), plus staged, minus retired."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.memory_port import MemoryPort
from opmem_tui.backend.distill.model import Extraction, Linked, Reconciled
from opmem_tui.backend.memory.records import GLOBAL, Edge, Patch
from opmem_tui.backend.memory.store import MemoryStore

from ..memory.sample import DAY, T0, edge, entity

API, WORKER = entity("service", "api"), entity("service", "worker")
P8080, P9090, PG = entity("port", ":8080"), entity("port", ":9090"), entity("package", "postgres")
ODD = "x\x00y"  # json_each reads it as "x": the store's query for it matches the edges of "x"


def alone(store: MemoryStore, relation: str, exclude: set[str]) -> tuple[Edge, ...]:
    return tuple(g.edge for g in store.edges(relations=[relation], limit=None) if g.edge.id not in exclude)


def test_relations_read_together_after_a_flush_equal_each_read_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = MemoryStore(tmp_path / "memory")
    old = edge(API, "listens-on", P8080, T0)
    hidden = edge(WORKER, "listens-on", P8080, T0 + DAY, session="s2")
    stored = [
        old,
        hidden,
        edge(WORKER, "listens-on", P9090, T0 + 2 * DAY, session="s3"),
        edge(API, "uses", PG, T0),
        edge(API, "x", PG, T0, session="s4"),
        edge(API, ODD, PG, T0 + DAY, session="s5"),
    ]
    store.append([API, WORKER, P8080, P9090, PG, *stored])
    exclude = {hidden.id}
    port = MemoryPort(store, exclude)
    reads: list[list[str]] = []
    edges = store.edges
    monkeypatch.setattr(store, "edges", lambda **kw: reads.append(list(kw["relations"])) or edges(**kw))

    for relation in ("listens-on", "uses", ODD):
        assert port.relation_edges(relation) == alone(store, relation, exclude)
    assert [e.relation for e in port.relation_edges(ODD)] == ["x"]  # as alone
    new = edge(API, "listens-on", P9090, T0 + 3 * DAY, session="s6")
    port.stage(Reconciled(Linked(Extraction(edges=(new,))), edge_patches=(Patch(old.id, new.id, T0 + 4 * DAY),)))
    assert port.current_edges(API.id, "listens-on", GLOBAL) == (new,)  # the stored one is retired by the staged patch
    port.flush()

    reads.clear()
    uses = port.current_edges(API.id, "uses", GLOBAL)
    listens_on, worker = port.relation_edges("listens-on"), port.current_edges(WORKER.id, "listens-on", GLOBAL)
    odd = port.relation_edges(ODD)
    assert reads == [["listens-on", "uses"], [ODD]]  # those asked before, in one read; the odd one alone
    assert uses == alone(store, "uses", exclude) and listens_on == alone(store, "listens-on", exclude)
    assert worker == tuple(e for e in listens_on if e.from_id == WORKER.id) and len(worker) == 1
    assert odd == alone(store, ODD, exclude)
