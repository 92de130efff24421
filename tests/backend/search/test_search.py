"""search(): provenance on every hit, scopes, dates, hostile queries, snippets, fusion of records."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.home import Home

from .conftest import DAY, T0, add_chat, edge, entity, event, write_log

HOSTILE = [
    "",
    "   ",
    '"',
    '""',
    "'",
    "*",
    "a*",
    "NEAR(worker port)",
    "worker NEAR port",
    "AND OR NOT",
    "(worker",
    "worker)",
    "port:18109",
    "-worker",
    "^worker",
    "{body ctx}: port",
    "body:worker",
    "worker AND",
    "\x00\x1b[31mport",
    "🙂 port",
    "x" * 100_000,
    " ".join(["port"] * 5000),
    "SELECT * FROM docs; DROP TABLE docs; --",
]


def test_every_hit_carries_its_provenance(coding_home: Home) -> None:
    hits = coding_home.search("worker port config tests tomatoes", k=10)
    assert len(hits) >= 4
    for hit in hits:
        assert hit.session_id and hit.node_ids and hit.turn and hit.commit
        assert hit.kind in ("turn", "tool")
        assert hit.pointer == f"session:{hit.session_id}"
        node = coding_home.sessions.get_node(hit.session_id, hit.node_ids[0])
        assert node.id == hit.node_ids[0]
        commits = {c.oid: c.turn for c in coding_home.sessions.session_commits(hit.session_id)}
        assert commits[hit.commit] == hit.turn


def test_best_hit_and_snippet(coding_home: Home) -> None:
    hits = coding_home.search("which port does the worker listen on", k=3)
    assert hits[0].session_id == "s-port" and hits[0].turn == 1
    assert "18109" in hits[0].snippet or "port" in hits[0].snippet.lower()


def test_tool_calls_are_found_by_command_and_path(coding_home: Home) -> None:
    hits = coding_home.search("pytest tests/backend/store", k=5)
    tool = [h for h in hits if h.kind == "tool"]
    assert tool and tool[0].session_id == "s-tests"
    assert "pytest tests/backend/store" in tool[0].snippet


def test_scope_filtering(coding_home: Home) -> None:
    add_chat(coding_home, "s-global", [("tomatoes in a global chat", "yes, tomatoes")], start=T0 + 3 * DAY)
    everything = {h.session_id for h in coding_home.search("tomatoes port", k=20)}
    assert {"s-port", "s-garden", "s-global"} <= everything
    # a project's search holds its own sessions only: a chat of no project is not part of it (issue 37)
    p1 = {h.session_id for h in coding_home.search("tomatoes port", scope="project:p1", k=20)}
    assert p1 == {"s-port"}
    p2 = {h.session_id for h in coding_home.search("tomatoes port", scope="project:p2", k=20)}
    assert p2 == {"s-garden"}
    assert all(h.scope == "project:p2" for h in coding_home.search("tomatoes port", scope="project:p2"))


def test_scope_follows_a_later_binding(coding_home: Home) -> None:
    coding_home.search_index.update()
    coding_home.sessions.update_session("s-garden", project_id="p1")
    coding_home.search_index.update()
    hits = coding_home.search("tomatoes", scope="project:p1")
    assert hits and all(h.session_id == "s-garden" and h.scope == "project:p1" for h in hits)


def test_since_until(coding_home: Home) -> None:
    late = coding_home.search("tomatoes port tests", since=T0 + 15 * DAY, k=20)
    assert {h.session_id for h in late} == {"s-garden"}
    early = coding_home.search("tomatoes port tests", until=T0 + 5 * DAY, k=20)
    assert {h.session_id for h in early} == {"s-port"}
    middle = coding_home.search("tomatoes port tests", since=T0 + 5 * DAY, until=T0 + 15 * DAY, k=20)
    assert {h.session_id for h in middle} == {"s-tests"}
    assert all(T0 + 5 * DAY <= h.time < T0 + 15 * DAY for h in middle)


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_fail(coding_home: Home, query: str) -> None:
    hits = coding_home.search(query, k=5)
    assert isinstance(hits, tuple)
    for hit in hits:
        assert "\x1b" not in hit.snippet and "\x00" not in hit.snippet


def test_hostile_queries_still_find_their_words(coding_home: Home) -> None:
    for query in ("NEAR(worker port)", '"worker', "port*", "worker)"):
        assert any(h.session_id == "s-port" for h in coding_home.search(query)), query


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_query(coding_home_once: Home, query: str) -> None:
    coding_home_once.search(query, k=3)


@pytest.fixture(scope="module")
def coding_home_once(tmp_path_factory: pytest.TempPathFactory) -> Home:
    home = Home(tmp_path_factory.mktemp("h") / "home", durable=False)
    home.ensure()
    add_chat(home, "s1", [("worker port?", '18109 (NEAR the * AND "quotes")')])
    home.search_index.update()
    yield home
    home.search_index.close()


def test_k_bounds(coding_home: Home) -> None:
    assert coding_home.search("port", k=0) == ()
    assert len(coding_home.search("port tomatoes tests", k=2)) == 2
    assert len(coding_home.search("port", k=-3)) == 0


def test_a_distilled_record_is_a_second_key_for_its_turn(home: Home) -> None:
    ids = add_chat(
        home,
        "s1",
        [
            ("I signed up for a class yesterday", "Which one?"),
            ("Something with clay, it calms me", "Nice!"),
            ("The weather is nice", "Yes, sunny."),
        ],
        speakers=("Melanie", "Caroline"),
    )
    write_log(
        home.memory_dir / "timeline" / "2023-11.jsonl",
        [event("Melanie signed up for a pottery class on 13 November 2023", "s1", ids[2:3], T0)],
    )
    hits = home.search("pottery class", k=3)
    assert hits[0].node_ids == (ids[2],) and hits[0].kind == "turn"
    assert hits[0].via


def test_a_record_drawn_from_a_tool_call_is_a_second_key_for_that_call(coding_home: Home) -> None:
    (tool,) = [n for n in coding_home.sessions.get_nodes("s-tests") if n.role == "tool"]
    write_log(
        coding_home.memory_dir / "graph" / "edges.jsonl",
        [edge("session.s-tests", "ran", "command.packwriter-suite", "s-tests", [tool.id], T0 + 10 * DAY)],
    )
    hits = coding_home.search("packwriter suite", k=5)
    assert [h.kind for h in hits if h.node_ids == (tool.id,)] == ["tool"]  # the call, not a lone edge
    assert "edge" not in {h.kind for h in hits}
    (hit,) = [h for h in hits if h.kind == "tool"]
    assert hit.via and "pytest tests/backend/store" in hit.snippet


def test_what_a_session_did_is_no_hit_of_its_own_but_a_fact_is(home: Home) -> None:
    ids = add_chat(home, "s1", [("hello", "hi")])
    write_log(
        home.memory_dir / "graph" / "edges.jsonl",
        [
            edge("session.s1", "part-of", "project.orbiter", "s1", ["gone"], T0),  # its node is not indexed
            edge("service.orbiter", "listens-on", "port.18109", "s1", ["gone"], T0),
        ],
    )
    hits = home.search("orbiter", k=5)
    assert [h.snippet for h in hits if h.kind == "edge"] == ["orbiter (service) listens on 18109 (port)"]
    write_log(
        home.memory_dir / "graph" / "edges.jsonl",
        [edge("session.s1", "part-of", "project.orbiter", "s1", ids[:1], T0)],  # behind a turn: its second key
    )
    home.search_index.update()
    hits = home.search("orbiter", k=5)
    assert any(h.kind == "turn" and h.node_ids == (ids[0],) for h in hits)


def test_a_bare_reply_is_shown_after_the_message_it_answers(home: Home) -> None:
    add_chat(
        home,
        "s1",
        [("hello", "Shall I keep the redis data in ./data beside the compose file?")],
    )
    home.sessions.append_message("s1", "user", "Yes", created_at=T0 + 120)
    home.sessions.commit_turn("s1")
    hits = home.search("where is the redis data kept", k=5)
    snippets = [h.snippet for h in hits]
    # the question ranks first (it holds the words): the reply would add one word to it
    assert snippets[0] == "Shall I keep the redis data in ./data beside the compose file?"
    assert not any(s.endswith("Yes") for s in snippets)
    # a long message's first lines are the reply's context (ctx): there the reply ranks first
    long = "Redis keeps its data in ./data now, beside the compose file. " + "Filler words here. " * 80
    add_chat(home, "s2", [("status?", long)])
    home.sessions.append_message("s2", "user", "Great, thanks", created_at=T0 + 300)
    home.sessions.commit_turn("s2")
    home.search_index.update()
    hits = home.search("redis data compose", k=10)
    first = next(i for i, h in enumerate(hits) if h.session_id == "s2")
    assert hits[first].snippet.endswith(" → Great, thanks") and "Redis keeps its data" in hits[first].snippet


def test_an_event_hit_shows_its_summary_not_the_entity_words_it_is_matched_by(home: Home) -> None:
    add_chat(home, "s1", [("hello", "hi")])
    found = event(
        "Decided: stop tracking .env in git",
        "s1",
        ["gone"],  # behind no indexed turn: a hit of its own
        T0,
        entities=("project.orbiter-3f2a", "file.env"),
    )
    write_log(home.memory_dir / "timeline" / "2023-11.jsonl", [found])
    hits = home.search("orbiter env tracking", k=3)
    assert [(h.kind, h.snippet) for h in hits] == [("event", "Decided: stop tracking .env in git")]


def test_a_hit_that_repeats_an_earlier_snippet_is_left_out(home: Home) -> None:
    add_chat(
        home,
        "s1",
        [("deploy the staging server", "ok"), ("deploy the staging server", "ok"), ("staging is red", "on it")],
    )
    hits = home.search("deploy staging server", k=3)
    snippets = [(h.kind, h.snippet) for h in hits]
    assert len(snippets) == len(set(snippets)) == 3
    assert ("turn", "deploy the staging server") in snippets and ("turn", "staging is red") in snippets


def test_a_record_behind_no_turn_is_a_hit_of_its_own(home: Home) -> None:
    add_chat(home, "s1", [("hello", "hi")])
    write_log(home.memory_dir / "graph" / "entities.jsonl", [entity("place", "Sweden", ["Sverige"])])
    hits = home.search("Sverige", k=3)
    assert hits and hits[0].kind == "entity" and hits[0].record_id and "Sweden" in hits[0].snippet


def test_superseded_records_are_not_hits(home: Home) -> None:
    ids = add_chat(home, "s1", [("x", "y")])
    old = edge("service.worker", "listens-on", "port.18109", "s1", ids[:1], T0)
    new = edge("service.worker", "listens-on", "port.18110", "s1", ids[1:], T0 + DAY)
    path = home.memory_dir / "graph" / "edges.jsonl"
    write_log(path, [old, new, {"op": "supersede", "id": old.id, "by": new.id, "at": T0 + DAY, "reason": "newer"}])
    hits = home.search("worker listens", k=5)
    vias = {r for h in hits for r in h.via}
    assert new.id in vias and old.id not in vias


def test_entity_names_and_aliases_find_their_records(home: Home) -> None:
    ids = add_chat(home, "s1", [("we talked about music", "I play the violin"), ("more", "ok")], speakers=("A", "Mel"))
    mel = entity("person", "Melanie", ["Mel"])
    violin = entity("instrument", "violin")
    write_log(home.memory_dir / "graph" / "entities.jsonl", [mel, violin])
    write_log(home.memory_dir / "graph" / "edges.jsonl", [edge(mel.id, "plays", violin.id, "s1", ids[1:2], T0)])
    hits = home.search("What does Mel do?", k=3)
    assert hits[0].kind == "entity" and hits[0].record_id == mel.id
    behind = [h for h in hits if h.kind == "turn"]
    assert behind[0].node_ids == (ids[1],) and "entities" in behind[0].signals


def test_a_date_in_the_question_prefers_that_time(home: Home) -> None:
    may = 1_683_504_000.0  # 2023-05-08
    june = 1_686_700_000.0  # 2023-06-14
    add_chat(home, "s-may", [("we went camping", "lovely")], start=may)
    add_chat(home, "s-june", [("we went camping", "lovely")], start=june)
    hits = home.search("When did they go camping in June?", k=2)
    assert hits[0].session_id == "s-june"
    hits = home.search("camping in May 2023", k=2)
    assert hits[0].session_id == "s-may"


def test_the_named_speaker_comes_first(home: Home) -> None:
    add_chat(home, "s1", [("I love painting sunsets", "ok")], speakers=("Caroline", "Melanie"))
    add_chat(home, "s3", [("I love painting horses", "ok")], speakers=("Melanie", "Caroline"))
    add_chat(home, "s2", [(f"filler {n}", "more filler") for n in range(6)])  # a corpus where words have weight
    assert home.search("What does Melanie love painting?", k=1)[0].speaker == "Melanie"
    assert home.search("What does Caroline love painting?", k=1)[0].speaker == "Caroline"


def test_the_first_index_build_covers_every_session_whichever_were_asked(home: Home) -> None:
    """A distillation's stage 5 (or an import hook) that creates the index for a few sessions
    must not leave the others out of search for good."""
    add_chat(home, "asked", [("the parser fails on tabs", "fixed the tab parser")])
    add_chat(home, "other", [("the flamingo colour is off", "changed the flamingo palette")])
    assert not home.search_index.index.path.exists()
    home.search_index.update(["asked"])
    assert {hit.session_id for hit in home.search("flamingo palette")} == {"other"}
