from __future__ import annotations

import dataclasses

import pytest

from opmem_tui.backend.recall.context import Recall, recall_for

from .conftest import ask
from .stores import Built, Memory, add_memory, build_index


@pytest.fixture
def indexed(built: Built) -> Memory:
    memory = add_memory(built)
    build_index(built)
    return memory


def test_hits_carry_their_pointers(recall: Recall, built: Built, indexed: Memory) -> None:
    reply = ask(recall, "memory_search", query="pytest")
    assert reply["query"] == "pytest" and reply["scope"] == f"project:{built.project_id}"
    tool = next(h for h in reply["hits"] if h["kind"] == "tool")
    assert tool["source"] == f"session:{built.session_id}" and tool["turn"] == 2 and tool["node"] == "t2"
    assert len(tool["commit"]) == 12
    opened = ask(recall, "memory_open_session", session_id=tool["source"], node=tool["node"])
    assert opened["tool"] == "Bash"


def test_distilled_records_lead_to_their_turn(recall: Recall, indexed: Memory) -> None:
    reply = ask(recall, "memory_search", query="which port does the worker listen on", k=3)
    assert len(reply["hits"]) <= 3
    assert 2 in [h.get("turn") for h in reply["hits"][:2]]  # the turn the decision came from


def test_no_index_is_no_hits_and_says_how_to_build_one(recall: Recall) -> None:
    reply = ask(recall, "memory_search", query="anything")
    assert reply["hits"] == [] and "opmem index rebuild" in reply["note"]


def test_bad_queries(recall: Recall, indexed: Memory) -> None:
    assert ask(recall, "memory_search", query="")["error"]["code"] == "bad_argument"
    assert ask(recall, "memory_search", query="   ")["error"]["code"] == "bad_argument"
    assert ask(recall, "memory_search", query="x", k=0)["error"]["code"] == "bad_argument"
    assert ask(recall, "memory_search", query="x", since="when pigs fly")["error"]["code"] == "bad_argument"
    odd = ask(recall, "memory_search", query='"unbalanced AND ( NEAR* -')
    assert "error" not in odd  # any text is a query, never a syntax error


def test_other_projects_stay_out_and_pages_fit_the_budget(built: Built, indexed: Memory) -> None:
    small = dataclasses.replace(recall_for(built.home, cwd=built.workdir), max_reply_bytes=1024)
    first = ask(small, "memory_search", query="project event greet tests worker", k=20)
    hits = list(first["hits"])
    page = first.get("next_page")
    while page is not None:
        reply = ask(small, "memory_search", query="project event greet tests worker", k=20, page=page)
        hits += reply["hits"]
        page = reply["next_page"]
    assert hits and all(indexed.other_project_event not in h.get("via", ()) for h in hits)
    seen = ask(small, "memory_search", query="Another project's event")["hits"]
    assert all(h.get("record") != indexed.other_project_event for h in seen)
    assert all(indexed.other_project_event not in h.get("via", ()) for h in seen)
    everywhere = recall_for(built.home, cwd=built.workdir.parent)  # no project: every scope
    found = ask(everywhere, "memory_search", query="Another project's event")["hits"]
    assert indexed.other_project_event in found[0]["via"]
