"""The record shapes of ARCHITECTURE.md §5: round trips, deterministic ids, bad lines named."""

from __future__ import annotations

import pytest

from opmem_tui.backend.memory.records import (
    AliasMerge,
    AliasUnmerge,
    Edge,
    Entity,
    Event,
    Patch,
    check_scope,
    entity_id,
    parse_edge_line,
    parse_entity_line,
    parse_timeline_line,
    visible_scopes,
)
from opmem_tui.backend.model import CorruptFile, Provenance

PROV = Provenance("proj", "sess-1", ("n1", "n2"), "abc123", 1_700_000_000.0, 1_700_000_100.0, turn=2)


def test_event_round_trip_and_deterministic_id():
    event = Event(
        Event.make_id("Edited a.py", "work", PROV), "Edited a.py", "work", 0.7, PROV, ("file.a",), "project:proj"
    )
    assert Event.from_json(event.to_json()) == event
    assert event.id == Event.make_id("Edited a.py", "work", PROV)
    assert event.id != Event.make_id("Edited b.py", "work", PROV)
    assert parse_timeline_line(event.to_json(), "t.jsonl:1") == event
    assert "key" not in event.to_json()


def test_event_key_round_trips_and_stays_out_of_the_id():
    plain = Event(Event.make_id("Edited a.py", "work", PROV), "Edited a.py", "work", 0.7, PROV)
    keyed = Event(plain.id, "Edited a.py", "work", 0.7, PROV, key="work:sess-1:n1")
    assert keyed.to_json()["key"] == "work:sess-1:n1"
    assert Event.from_json(keyed.to_json()) == keyed
    assert keyed.id == plain.id


def test_edge_entity_and_patches_round_trip():
    edge = Edge(Edge.make_id("a", "listens-on", "b", PROV), "a", "b", "listens-on", PROV, 0.9, "project:proj")
    assert parse_edge_line(edge.to_json(), "e:1") == edge
    assert edge.to_json()["from"] == "a" and edge.to_json()["event_time"] == PROV.event_time
    entity = Entity(entity_id("file", "a.py"), "file", "a.py", ("./a.py",), {"lang": "python"}, provenance=PROV)
    assert parse_entity_line(entity.to_json(), "n:1") == entity
    patch = Patch("old", "new", 5.0, "listens-on is single-valued")
    assert parse_edge_line(patch.to_json(), "e:2") == patch
    merge = AliasMerge(AliasMerge.make_id("x", "y"), "x", "y", "acronym", 6.0, 0.9)
    assert parse_entity_line(merge.to_json(), "n:2") == merge
    unmerge = AliasUnmerge(merge.id, 7.0)
    assert parse_entity_line(unmerge.to_json(), "n:3") == unmerge


def test_entity_ids_normalize_spelling_and_separate_types():
    assert entity_id("person", "Caroline") == entity_id("person", "  caroline ")
    assert entity_id("person", "Caroline") != entity_id("place", "Caroline")
    assert entity_id("file", "a/b.py") != entity_id("file", "a-b.py")  # the hash keeps them apart
    assert entity_id("person", "Zoë").startswith("person.zo")


@pytest.mark.parametrize(
    "line, problem",
    [
        ({"id": "e", "summary": "s", "kind": "gossip", "provenance": PROV.to_json()}, "unknown event kind"),
        ({"id": "e", "summary": "s", "kind": "work"}, "provenance"),
        ({"id": "e", "summary": "s", "kind": "work", "provenance": PROV.to_json(), "scope": "../x"}, "invalid scope"),
        (["not", "an", "object"], "not a JSON object"),
    ],
)
def test_bad_lines_name_where_they_are(line, problem):
    with pytest.raises(CorruptFile) as info:
        parse_timeline_line(line, "memory/timeline/2026-01.jsonl:7")
    assert "2026-01.jsonl:7" in str(info.value) and problem in str(info.value)


def test_visible_scopes():
    assert visible_scopes("project:p") == {"global", "project:p"}
    assert visible_scopes(None) is None


def test_an_edge_id_is_record_id_of_its_parts():
    """Edge.make_id writes record_id's JSON itself (the hot path of extraction): the very same id."""
    from hypothesis import given
    from hypothesis import strategies as st

    from opmem_tui.backend.memory.records import Edge, record_id
    from opmem_tui.backend.model import Provenance

    text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=12) | st.sampled_from(
        ['a"b', "back\\slash", "\ud800", "\u2028", "日本", ""]
    )

    @given(text, text, text, text, st.lists(text, max_size=4))
    def check(from_id: str, relation: str, to_id: str, session: str, nodes: list[str]) -> None:
        prov = Provenance("p", session, tuple(nodes), None, 1.0, 2.0)
        assert Edge.make_id(from_id, relation, to_id, prov) == record_id(
            "ed", from_id, relation, to_id, session, list(nodes)
        )

    check()


def test_check_scope_answers_alike_the_first_time_and_after():
    class Text(str):
        pass

    for _ in range(2):  # the second round meets the scopes already checked
        for scope in ("global", "project:p1", "agent:a-b", Text("project:p2")):
            assert check_scope(scope) is scope
        for bad in ("project:", "agent:a b", " global", "Global", Text("nope"), ["global"], None, 3):
            with pytest.raises(CorruptFile, match="invalid scope"):
                check_scope(bad, "here")
