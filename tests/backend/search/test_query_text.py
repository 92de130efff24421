from __future__ import annotations

from datetime import UTC, datetime

from backend.memory.query_text import STOPWORDS, find_dates, parse_query


def day(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, tzinfo=UTC).timestamp()


def test_terms_drop_stopwords_but_never_everything() -> None:
    assert parse_query("What did Caroline research?").terms == ("caroline", "research")
    assert parse_query("what is it").terms == ("what", "is", "it")
    assert parse_query('NEAR("a" b*) OR c:d').terms == ("near", "b", "c")
    assert parse_query(None).empty and parse_query("?!").empty


def test_fts_expression_is_quoted_terms() -> None:
    assert parse_query("port 18109 config/worker.toml").fts() == '"port" OR "18109" OR "config" OR "worker" OR "toml"'


def test_long_queries_are_capped() -> None:
    parsed = parse_query(" ".join(f"w{i}" for i in range(1000)))
    assert len(parsed.terms) == 24


def test_dates() -> None:
    (one,) = find_dates("When did she go camping in June?")
    assert one.month == 6 and one.contains(day(2021, 6, 3)) and not one.contains(day(2021, 7, 1))
    (two,) = find_dates("What happened on 7 May 2023?")
    assert two.contains(day(2023, 5, 7) + 3600) and not two.contains(day(2023, 5, 8) + 1)
    (three,) = find_dates("in May 2023")
    assert three.contains(day(2023, 5, 31)) and not three.contains(day(2023, 6, 1))
    (four,) = find_dates("since 2022-02-28")
    assert four.contains(day(2022, 2, 28))
    (five,) = find_dates("what did we ship in 2024")
    assert five.contains(day(2024, 12, 31)) and not five.contains(day(2025, 1, 1))
    assert find_dates("you may go in may") == []
    (six,) = find_dates("31 February 2023")  # no such day: the month is what is left
    assert six.contains(day(2023, 2, 1)) and not six.contains(day(2023, 3, 1))


def test_stopwords_are_grammar_words() -> None:
    assert {"the", "what", "did"} <= STOPWORDS and "pottery" not in STOPWORDS
