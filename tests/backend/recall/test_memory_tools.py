from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from opmem_tui.backend.memory.records import Event
from opmem_tui.backend.recall.context import Recall, recall_for

from .conftest import ask
from .stores import T0, Built, Memory, _prov, add_memory, build_store


@pytest.fixture
def memory(built: Built) -> Memory:
    return add_memory(built)


def test_timeline_is_newest_first_with_pointers_and_scoped(recall: Recall, built: Built, memory: Memory) -> None:
    reply = ask(recall, "memory_timeline")
    summaries = [e["summary"] for e in reply["events"]]
    assert summaries == [
        "Learnt that uvicorn needs --reload off in tests",
        "Decided the worker listens on :18109 instead of :8000",
        "Added greet.py with a greet() function",
    ]  # the deleted session's event and another project's are not shown
    first = reply["events"][0]
    assert first["source"] == f"session:{built.session_id}" and first["turn"] == 3 and first["kind"] == "learning"
    assert reply["scope"] == f"project:{built.project_id}"
    everywhere = recall_for(built.home, cwd=built.workdir.parent)  # no project: every scope
    assert "Another project's event" in [e["summary"] for e in ask(everywhere, "memory_timeline")["events"]]


def test_a_caller_with_a_project_and_an_agent_sees_the_agents_records(built: Built, memory: Memory) -> None:
    p = _prov(built, 2, T0 + 200, project="")  # a session of the agent outside any project
    note = Event(
        Event.make_id("Agent note outside projects", "learning", p),
        "Agent note outside projects",
        "learning",
        0.8,
        p,
        (),
        "agent:claude",
    )
    built.home.memory.append([note])
    both = recall_for(built.home, cwd=built.workdir, agent="claude", now=T0 + 400)
    reply = ask(both, "memory_timeline")
    assert "Agent note outside projects" in [e["summary"] for e in reply["events"]]
    assert "Another project's event" not in [e["summary"] for e in reply["events"]]
    assert reply["scope"] == f"project:{built.project_id} + agent:claude"
    alone = recall_for(built.home, cwd=built.workdir, now=T0 + 400)
    assert "Agent note outside projects" not in [e["summary"] for e in ask(alone, "memory_timeline")["events"]]


def test_timeline_filters(recall: Recall, memory: Memory) -> None:
    decisions = ask(recall, "memory_timeline", kinds=["decision"])
    assert [e["kind"] for e in decisions["events"]] == ["decision"]
    about = ask(recall, "memory_timeline", entity="the worker")
    assert [e["summary"] for e in about["events"]] == ["Decided the worker listens on :18109 instead of :8000"]
    since = ask(recall, "memory_timeline", since="2025-06-15T15:08:00+00:00")
    assert len(since["events"]) == 1
    relative = ask(recall, "memory_timeline", since="7 minutes ago")  # recall.now is T0 + 400
    assert len(relative["events"]) == 3
    window = ask(recall, "memory_timeline", since="2025-06-15T15:07:00+00:00", until="2025-06-15T15:08:00+00:00")
    assert [e["kind"] for e in window["events"]] == ["decision"]
    assert ask(recall, "memory_timeline", kinds=["gossip"])["error"]["code"] == "bad_argument"
    assert ask(recall, "memory_timeline", since="tomorrow", until="yesterday")["error"]["code"] == "bad_argument"


def test_neighbors_show_current_facts_and_hide_superseded(recall: Recall, memory: Memory) -> None:
    reply = ask(recall, "memory_graph_neighbors", entity="worker", hops=1)
    assert reply["entity"]["id"] == memory.worker and reply["entity"]["aliases"] == ["the worker"]
    facts = {e["fact"] for e in reply["edges"]}
    assert "worker -listens-on-> :18109" in facts and "worker -depends-on-> uvicorn" in facts
    assert "greet.py -part-of-> worker" in facts
    assert not any(":8000" in f for f in facts) and reply["hidden_superseded"] == 1
    edge = next(e for e in reply["edges"] if e["relation"] == "listens-on")
    assert edge["source"].startswith("session:") and edge["turn"] == 2 and edge["from"] == memory.worker


def test_neighbors_as_of_a_past_date(recall: Recall, memory: Memory) -> None:
    before = ask(recall, "memory_graph_neighbors", entity="worker", hops=1, as_of="2025-06-15T15:07:00+00:00")
    facts = {e["fact"] for e in before["edges"]}
    assert "worker -listens-on-> :8000" in facts and "worker -listens-on-> :18109" not in facts


def test_unknown_and_ambiguous_entities(recall: Recall, memory: Memory) -> None:
    reply = ask(recall, "memory_graph_neighbors", entity="wroker")
    assert reply["error"]["code"] == "unknown_entity" and "worker" in reply["error"]["did_you_mean"]
    reply = ask(recall, "memory_timeline", entity="uvicron")
    assert reply["error"]["code"] == "unknown_entity" and "uvicorn" in reply["error"]["did_you_mean"]
    assert ask(recall, "memory_graph_neighbors", entity="worker", hops=4)["error"]["code"] == "bad_argument"


def test_an_empty_memory_answers_empty(recall: Recall) -> None:
    assert ask(recall, "memory_timeline")["events"] == []
    assert ask(recall, "memory_graph_neighbors", entity="worker")["error"]["code"] == "unknown_entity"


def test_a_ten_thousand_edge_neighbourhood_stays_within_the_budget(tmp_path: Path) -> None:
    built = build_store(tmp_path)
    memory = add_memory(built, hub_edges=10_000)
    for max_bytes in (1024, 16384):
        recall = dataclasses.replace(recall_for(built.home, cwd=built.workdir), max_reply_bytes=max_bytes)
        first = ask(recall, "memory_graph_neighbors", entity="hub", hops=2)
        assert first["entity"]["id"] == memory.hub
        assert first["pages"] > 1 and first["edges"]
        assert "more_edges" in first  # the store read a capped neighbourhood, and says so
        last = ask(recall, "memory_graph_neighbors", entity="hub", hops=2, page=first["pages"] - 1)
        assert last["next_page"] is None and last["edges"]
    assert T0


def test_each_call_sees_what_was_appended_since(recall: Recall, built: Built, memory: Memory) -> None:
    assert len(ask(recall, "memory_timeline")["events"]) == 3
    from opmem_tui.backend.memory.records import Event, project_scope
    from opmem_tui.backend.model import Provenance

    p = Provenance(built.project_id, built.session_id, ("u3",), None, T0 + 300, T0 + 301, 3)
    late = Event(
        Event.make_id("Shipped it", "event", p), "Shipped it", "event", 0.9, p, (), project_scope(built.project_id)
    )
    store = built.home.memory
    store.append([late])
    store.close()
    assert ask(recall, "memory_timeline")["events"][0]["summary"] == "Shipped it"


def test_a_record_from_a_project_commit_points_at_the_commit_not_at_an_empty_session(
    recall: Recall, built: Built, memory: Memory
) -> None:
    """Distilled project commits have no session (a commit made outside opmem): their pointer was
    "session:" with nothing after it, which memory_open_session cannot open. It names the project
    and the commit instead, which memory_git_show opens."""
    from opmem_tui.backend.memory.records import project_scope
    from opmem_tui.backend.model import Provenance

    p = Provenance(built.project_id, "", (), built.user_commit, T0 + 400, T0 + 401, None)
    summary = f"Committed {built.user_commit[:7]} to shop: a change by hand"
    event = Event(Event.make_id(summary, "work", p), summary, "work", 0.5, p, (), project_scope(built.project_id))
    store = built.home.memory
    store.append([event])
    store.close()
    (found,) = [e for e in ask(recall, "memory_timeline")["events"] if e["summary"] == summary]
    assert found["source"] == f"project:{built.project_id}" and found["commit"] == built.user_commit[:12]
    shown = ask(recall, "memory_git_show", project_id=built.project_id, commit=found["commit"])
    assert shown["commit"]["oid"] == built.user_commit
