"""Personal facts by English patterns (extract/personal.py), on sentences written for the test:
what a speaker says about themself is found, what they deny, wish, ask or say about someone
else is not; in a whole run every fact is an edge from its speaker with its turn and the date
its sentence names; a coding prompt keeps its work records and gains no personal noise."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract.personal import personal_facts
from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import

from .conftest import Chat


def found(sentence: str) -> set[tuple[str, str, str]]:
    return {(f.relation, f.type, f.name) for f in personal_facts(sentence, "Dana")}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I moved to Denver last spring.", {("lives-in", "place", "Denver")}),
        ("Last spring, we finally moved to Lisbon.", {("lives-in", "place", "Lisbon")}),
        ("I've been learning the guitar.", {("learns", "activity", "guitar")}),
        ("I've been learning to paint.", {("learns", "activity", "painting")}),
        ("I'm learning Portuguese for the trip.", {("learns", "activity", "Portuguese")}),
        ("We adopted a dog named Max.", {("has-pet", "pet", "Max")}),
        ("Our cat Luna sleeps all day.", {("has-pet", "pet", "Luna")}),
        ("My sister's wedding is next Saturday.", {("has-sister", "relative", "Dana's sister")}),
        ("I have three kids.", {("has-kids", "group", "Dana's 3 kids")}),
        ("I work as a nurse at the clinic.", {("works-as", "occupation", "nurse")}),
        ("I'm a teacher.", {("works-as", "occupation", "teacher")}),
        ("I'm originally from Ohio.", {("from", "place", "Ohio")}),
        ("We're planning to visit Japan in the fall.", {("plans-to-visit", "place", "Japan")}),
        ("I painted a sunset over the lake.", {("does", "activity", "painting")}),
        ("I ran my first half marathon.", {("does", "activity", "running")}),
        ("We took the twins to the aquarium.", {("visited", "place", "aquarium")}),
        ('I just finished reading "The Hobbit".', {("read", "work", "The Hobbit")}),
        ("I bought a new bike last week.", {("bought", "thing", "bike")}),
        ("My favorite band is Queen.", {("favorite-band", "concept", "Queen")}),
        ('My favourite book is "Dune".', {("favorite-book", "concept", "Dune")}),
    ],
)
def test_what_a_speaker_says_about_themself(sentence: str, expected: set[tuple[str, str, str]]):
    assert found(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I don't like hiking.",  # denied
        "I never moved to Denver.",
        "If I moved to Paris, I would learn French.",  # supposed
        "I wish I had a dog named Max.",
        "Maybe I'll visit Rome.",
        "Did you move to Denver?",  # asked
        "Have you been learning the guitar?",
        "She moved to Boston.",  # someone else
        "Tom adopted a dog named Rex.",
        "I'm a big fan of jazz.",  # "a <word>" that is no occupation
        "I was a teacher.",  # not now
        "I ran into an old friend.",  # not running
        "I ran the tests again.",
        "I'm going to refactor this module.",  # a plan with no place
        "I moved the handler to utils.py.",  # coding talk
        "We moved the tests to src/tests.",
        "I'll run pytest and read the logs.",
        "I gave my children nodes a parent pointer.",  # a tree, not a family
        "Now my parents table has an index.",
        "I am reading the docs now.",
        "I will fix the Python imports.",
        "I'll visit Mom on Sunday.",  # a common word, not a place
        "My favorite part was the end.",  # no name after it
    ],
)
def test_nothing_is_made_up(sentence: str):
    assert found(sentence) == set()


def _conversation(tmp_path: Path, lines: list[tuple[str, str]], when: dt.datetime) -> Path:
    records = [
        {
            "session": "chat-1",
            "id": f"m{k}",
            "role": "user" if speaker == "Dana" else "assistant",
            "speaker": speaker,
            "content": text,
            "timestamp": (when + dt.timedelta(minutes=k)).isoformat(),
        }
        for k, (speaker, text) in enumerate(lines)
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_conversation_run_dates_each_fact_and_points_at_its_turn(home: Home, tmp_path: Path):
    monday = dt.datetime(2024, 3, 4, 9, 0, tzinfo=dt.UTC)  # Monday 4 March 2024
    path = _conversation(
        tmp_path,
        [
            ("Dana", "Big news: we adopted a dog named Max. My sister's wedding is next Saturday!"),
            ("Sam", "Congrats! How is the new city?"),
            ("Dana", "Love it. I moved to Denver two weeks ago and I've been learning the guitar."),
        ],
        monday,
    )
    report = run_import(home, "jsonl", [path], bind=False)
    assert not report.warnings, report.warnings
    run(home, RunOptions(project=False))
    memory = home.memory
    names = {e.id: e for e in memory.entity_records()}
    [dana] = [e for e in names.values() if e.type == "person" and e.name == "Dana"]
    edges = {(e.relation, names[e.to_id].name): e for e in memory.current_edges(src=dana.id)}
    assert {("has-pet", "Max"), ("has-sister", "Dana's sister"), ("lives-in", "Denver"), ("learns", "guitar")} <= set(
        edges
    )
    sister = edges[("has-sister", "Dana's sister")].provenance
    assert sister.node_ids == ("m0",)
    day = dt.datetime.fromtimestamp(sister.event_time, dt.UTC).date()
    assert day == dt.date(2024, 3, 9)  # "next Saturday" said on Monday 4 March
    moved = edges[("lives-in", "Denver")].provenance
    assert moved.node_ids == ("m2",) and moved.turn is not None
    assert dt.datetime.fromtimestamp(moved.event_time, dt.UTC).date() == dt.date(2024, 2, 19)  # week of 19 Feb
    assert not any(names[e.to_id].name == "Dana" for e in memory.current_edges(src=dana.id))
    sam = [e for e in names.values() if e.type == "person" and e.name == "Sam"]
    assert sam and not memory.current_edges(src=sam[0].id)  # Sam stated nothing about himself


def test_a_coding_prompt_keeps_its_work_and_gains_no_personal_noise(home: Home):
    chat = Chat(home, "s1")
    chat.user("I moved the retry logic to utils.py; I ran the tests and I'll run them again. Fix the import.")
    chat.reply("Done.")
    chat.tool("Edit", {"file_path": "/work/proj/utils.py", "old_string": "a", "new_string": "b"})
    chat.commit()
    run(home, RunOptions(project=False))
    memory = home.memory
    assert not memory.timeline(kinds=["event"]).events
    types = {e.type for e in memory.entity_records()}
    assert not types & {"relative", "group", "occupation", "pet", "place", "activity", "thing", "work"}
    [work] = memory.timeline(kinds=["work"]).events
    assert work.summary == "Edited utils.py"


def test_a_coding_prompt_that_says_something_personal_is_remembered_with_its_date(home: Home):
    friday = dt.datetime(2024, 3, 8, 17, 0, tzinfo=dt.UTC).timestamp()
    chat = Chat(home, "s1", start=friday)
    chat.user("I'm off next week, we're moving to Austin on Monday. Please finish the migration before.")
    chat.reply("Sure.")
    chat.commit()
    run(home, RunOptions(project=False))
    memory = home.memory
    [event] = memory.timeline(kinds=["event"]).events
    assert event.summary.startswith("The user") and "Austin" in event.summary
    assert event.provenance.session_id == "s1" and event.provenance.turn == 1
    assert dt.datetime.fromtimestamp(event.event_time, dt.UTC).date() == dt.date(2024, 3, 11)  # that Monday
    [user] = [e for e in memory.entity_records() if e.type == "person" and e.name == "user"]
    assert {(e.relation, memory.entity_by_id(e.to_id).name) for e in memory.current_edges(src=user.id)} == {
        ("lives-in", "Austin")
    }
