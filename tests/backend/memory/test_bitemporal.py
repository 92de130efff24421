"""as_of and known_at on a hand-made history with out-of-order ingestion; scope filtering.

The history (d = days after T0), as a user who imports an old transcript late would produce it:
    d1   ingested d1   worker listens-on :8080
    d10  ingested d10  worker listens-on :9090, which supersedes :8080 (patch at d10)
    d5   ingested d20  worker listens-on :7070 (an old transcript imported late); the reconciler
                       calls supersede(:9090, :7070) and supersede(:8080, :7070) at d20
So :8080 was true d1..d5, :7070 d5..d10, :9090 from d10 on; the late import never retires
:9090, and before d20 the memory did not know :7070 at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.memory.results import EntityNotFound
from opmem_tui.backend.memory.store import MemoryStore

from .sample import DAY, T0, edge, entity, event

WORKER = entity("service", "worker")
PORTS = {p: entity("port", p) for p in (":8080", ":9090", ":7070")}


def d(n: float) -> float:
    return T0 + n * DAY


@pytest.fixture
def history(tmp_path: Path) -> tuple[MemoryStore, dict[str, str]]:
    store = MemoryStore(tmp_path / "memory")
    e8080 = edge(WORKER, "listens-on", PORTS[":8080"], d(1))
    e9090 = edge(WORKER, "listens-on", PORTS[":9090"], d(10))
    e7070 = edge(WORKER, "listens-on", PORTS[":7070"], d(5), d(20))
    store.append([WORKER, *PORTS.values(), e8080])
    store.append([e9090])
    store.supersede(e8080.id, e9090.id, "listens-on is single-valued", at=d(10))
    store.append([e7070])
    patch = store.supersede(e9090.id, e7070.id, "listens-on is single-valued", at=d(20))
    assert (patch.id, patch.by) == (e7070.id, e9090.id)  # the later fact keeps the present
    store.supersede(e8080.id, e7070.id, "listens-on is single-valued", at=d(20))
    return store, {":8080": e8080.id, ":9090": e9090.id, ":7070": e7070.id}


def ports(store: MemoryStore, **kw) -> list[str]:
    page = store.neighbors("worker", **kw)
    return sorted(page.entities[g.target].name for g in page.edges)


@pytest.mark.parametrize(
    "as_of, expected",
    [(0, []), (1, [":8080"]), (3, [":8080"]), (5, [":7070"]), (7, [":7070"]), (10, [":9090"]), (30, [":9090"])],
)
def test_as_of_is_what_was_true_then(history, as_of, expected):
    store, _ = history
    assert ports(store, as_of=d(as_of)) == expected


@pytest.mark.parametrize(
    "known_at, as_of, expected",
    [
        (0.5, None, []),  # nothing ingested yet
        (5, None, [":8080"]),  # before the :9090 edge arrived
        (15, None, [":9090"]),  # :7070 unknown until d20
        (15, 7, [":8080"]),  # then, :8080 looked true on d7
        (25, 7, [":7070"]),  # today we know better
        (25, None, [":9090"]),
    ],
)
def test_known_at_is_what_the_memory_held_then(history, known_at, as_of, expected):
    store, _ = history
    kw = {"known_at": d(known_at)}
    if as_of is not None:
        kw["as_of"] = d(as_of)
    assert ports(store, **kw) == expected


def test_hidden_counts_and_history_with_reasons(history):
    store, ids = history
    current = store.neighbors("worker")
    assert current.hidden_superseded == 2 and [g.edge.id for g in current.edges] == [ids[":9090"]]
    everything = store.neighbors("worker", include_superseded=True)
    retired = {g.edge.id: (g.edge.superseded_by, g.valid_to, g.superseded_reason) for g in everything.edges}
    assert retired == {
        ids[":9090"]: (None, None, ""),
        ids[":7070"]: (ids[":9090"], d(10), "listens-on is single-valued"),
        ids[":8080"]: (ids[":7070"], d(5), "listens-on is single-valued"),  # the earliest retirement wins
    }
    # as known on d15, :8080 was retired by :9090 only
    then = {
        g.edge.id: g.edge.superseded_by
        for g in store.neighbors("worker", known_at=d(15), include_superseded=True).edges
    }
    assert then == {ids[":8080"]: ids[":9090"], ids[":9090"]: None}
    assert store.neighbors("worker", known_at=d(15)).hidden_superseded == 1


def test_same_answers_after_a_rebuild_from_the_logs(history, tmp_path: Path):
    store, _ = history
    store.rebuild_cache()
    assert ports(store) == [":9090"] and ports(store, as_of=d(7)) == [":7070"]
    assert ports(store, known_at=d(15), as_of=d(7)) == [":8080"]


def test_timeline_as_of_and_known_at(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    early = event("Release 1.0 planned for June", d(1), importance=0.8, entities=(WORKER,))
    later = event("Release 1.0 moved to July", d(8), importance=0.8, entities=(WORKER,))
    late_import = event("Kick-off meeting", d(0), d(20), kind="event", entities=(WORKER,))
    store.append([WORKER, early, later, late_import])
    store.supersede(early.id, later.id, "same plan, revised", at=d(8))

    def summaries(**kw) -> list[str]:
        return [e.summary for e in store.timeline(**kw).events]

    assert summaries() == ["Release 1.0 moved to July", "Kick-off meeting"]
    assert summaries(as_of=d(5)) == ["Release 1.0 planned for June", "Kick-off meeting"]
    assert summaries(known_at=d(10)) == ["Release 1.0 moved to July"]
    assert summaries(known_at=d(5)) == ["Release 1.0 planned for June"]
    assert summaries(since=d(0.5), until=d(5), include_superseded=True) == ["Release 1.0 planned for June"]
    assert summaries(kinds=["event"]) == ["Kick-off meeting"]
    assert summaries(entity="worker", newest_first=False) == ["Kick-off meeting", "Release 1.0 moved to July"]
    assert store.timeline().hidden_superseded == 1 and store.timeline(known_at=d(5)).hidden_superseded == 0
    page = store.timeline(limit=1)
    assert page.truncated and len(page.events) == 1


def test_scopes_a_project_sees_global_and_its_own(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    glob = entity("person", "ann")
    mine = entity("file", "app.py", scope="project:p")
    theirs = entity("file", "lib.py", scope="project:q")
    agent = entity("concept", "scratch", scope="agent:a")
    e_mine = edge(glob, "edited", mine, d(1), scope="project:p")
    e_theirs = edge(glob, "edited", theirs, d(2), scope="project:q")
    e_agent = edge(glob, "noted", agent, d(3), scope="agent:a")
    e_glob = edge(glob, "prefers", entity("concept", "tabs"), d(4))
    store.append([glob, mine, theirs, agent, entity("concept", "tabs"), e_mine, e_theirs, e_agent, e_glob])
    store.append([event("p work", d(1), scope="project:p"), event("q work", d(2), scope="project:q")])
    store.append([event("personal", d(3))])

    def relations(scope):
        page = store.neighbors("ann", scope=scope)
        return sorted(f"{g.relation} {page.entities[g.target].name}" for g in page.edges)

    assert relations("project:p") == ["edited app.py", "prefers tabs"]
    assert relations("project:q") == ["edited lib.py", "prefers tabs"]
    assert relations("agent:a") == ["noted scratch", "prefers tabs"]
    assert relations("global") == ["prefers tabs"]
    assert len(relations(None)) == 4
    assert [e.summary for e in store.timeline(scope="project:p").events] == ["personal", "p work"]
    assert store.entity("app.py", scope="project:p").id == mine.id
    with pytest.raises(EntityNotFound, match=r"no entity 'app\.py'"):
        store.entity("app.py", scope="project:q")


def test_a_caller_in_a_project_and_an_agent_sees_both(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    glob = entity("person", "ann")
    mine = entity("file", "app.py", scope="project:p")
    scratch = entity("concept", "scratch", scope="agent:a")
    other = entity("concept", "notes", scope="agent:b")
    store.append([glob, mine, scratch, other, entity("file", "lib.py", scope="project:q")])
    store.append(
        [
            edge(glob, "edited", mine, d(1), scope="project:p"),
            edge(glob, "noted", scratch, d(2), scope="agent:a"),  # a session of agent a outside any project
            edge(glob, "noted", other, d(3), scope="agent:b"),
            edge(glob, "edited", entity("file", "lib.py", scope="project:q"), d(4), scope="project:q"),
        ]
    )
    store.append(
        [event(f"{s} work", d(i), scope=s) for i, s in enumerate(["global", "project:p", "agent:a", "agent:b"])]
    )
    both = frozenset({"project:p", "agent:a"})
    page = store.neighbors("ann", scope=both)
    assert sorted(f"{g.relation} {page.entities[g.target].name}" for g in page.edges) == [
        "edited app.py",
        "noted scratch",
    ]
    assert [e.summary for e in store.timeline(scope=both).events] == ["agent:a work", "project:p work", "global work"]
    assert {g.edge.scope for g in store.edges(scope=both)} == {"project:p", "agent:a"}
    assert store.entity("scratch", scope=both).id == scratch.id
    assert [e.summary for e in store.ranked_events(d(10), both, half_life=DAY, limit=5)] == [
        "agent:a work",
        "project:p work",
        "global work",
    ]
    with pytest.raises(EntityNotFound):
        store.entity("notes", scope=both)
    assert store.timeline(scope=["project:p"]).events == store.timeline(scope="project:p").events
