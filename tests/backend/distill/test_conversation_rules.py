"""The conversation rules on sentences written for the test: mentions, relations, dates, third person."""

from __future__ import annotations

import datetime as dt

import pytest

from opmem_tui.backend.distill.extract.dates import find_dates
from opmem_tui.backend.distill.extract.names import find_mentions, is_statement, third_person

SPEAKERS = ("Melanie", "Caroline")
MONDAY = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)


def facts(text: str) -> set[tuple[str, str, str]]:
    return {(m.type, m.name, m.relation) for m in find_mentions(text, speakers=SPEAKERS) if m.relation}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister Anna called.", {("person", "Anna", "has-sister")}),  # "My" opening the sentence
        ("I miss my dog Rex.", {("pet", "Rex", "has-dog")}),
        ("I work at Acme Labs now.", {("organisation", "Acme Labs", "works-at")}),
        ("I moved from Sweden four years ago.", {("place", "Sweden", "moved-from")}),
        ("I went to a C++ meetup.", {("activity", "c++ meetup", "attended")}),
        ("Last week I went to an LGBTQ+ pride parade.", {("activity", "lgbtq+ pride parade", "attended")}),
        ("I just signed up for a pottery class.", {("activity", "pottery class", "attended")}),
        ("We are hosting a bake sale fundraiser.", {("activity", "bake sale fundraiser", "organized")}),
        ("I love painting.", {("activity", "painting", "likes")}),
        ("I'm off to go swimming with the kids.", {("activity", "swimming", "does")}),
    ],
)
def test_relations_from_the_speakers_sentences(text: str, expected: set[tuple[str, str, str]]):
    assert facts(text) == expected


def test_names_are_typed_by_their_context_and_a_short_form_is_the_speaker():
    found = {
        (m.type, m.name) for m in find_mentions("I had lunch with Jordan in Paris, then met Mel.", speakers=SPEAKERS)
    }
    assert found == {("person", "Jordan"), ("place", "Paris"), ("person", "Mel")}
    assert not find_mentions("We went out. It was fun.", speakers=SPEAKERS)  # no names out of sentence openings


@pytest.mark.parametrize(
    ("text", "phrase", "label", "day"),
    [
        ("We met last Saturday.", "last Saturday", "6 May 2023", dt.date(2023, 5, 6)),  # the full stop stays out
        ("I went there two weeks ago", "two weeks ago", "week of 24 April 2023", dt.date(2023, 4, 24)),
        ("We may go next month", "next month", "June 2023", dt.date(2023, 6, 1)),
        ("It opens this coming Friday!", "this coming Friday", "12 May 2023", dt.date(2023, 5, 12)),
        ("I started yesterday", "yesterday", "7 May 2023", dt.date(2023, 5, 7)),
        ("It was back in March.", "in March", "March 2023", dt.date(2023, 3, 1)),
        ("I was there in 2022", "in 2022", "2022", dt.date(2022, 1, 1)),
    ],
)
def test_relative_dates_resolve_against_the_message_time(text: str, phrase: str, label: str, day: dt.date):
    (found,) = find_dates(text, MONDAY)  # Monday 8 May 2023
    assert (found.phrase, found.label, found.start) == (phrase, label, day)


@pytest.mark.parametrize("text", ["We did it.", "You may go.", "I will march on.", "Sun was out."])
def test_words_that_only_look_like_dates_are_not_dates(text: str):
    assert find_dates(text, MONDAY) == []


def test_third_person_and_statements():
    assert third_person("I told you my plan and you liked it.", "Caroline", "Melanie") == (
        "Caroline told Melanie Caroline's plan and Melanie liked it."
    )
    assert [is_statement(s) for s in ("Thanks, Mel!", "How are you?", "I went to the gym today.")] == [
        False,
        False,
        True,
    ]
