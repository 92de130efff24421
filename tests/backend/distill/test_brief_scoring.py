"""bench/brief_scoring.py: coverage with alternatives, stale values only as history, answer recall."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from brief_scoring import (  # noqa: E402
    Fact,
    Labels,
    Question,
    answer_recall,
    coverage,
    load_labels,
    load_questions,
    mentions,
    stale_mentions,
)


def test_mentions_whole_words_only() -> None:
    assert mentions("go", "written in Go 1.22")
    assert not mentions("go", "uses google auth")
    assert mentions("next.js", "Stack: Next.js 14, Prisma")
    assert mentions("npm run test:e2e", "run   NPM run test:e2e before pushing")
    assert not mentions("pytest", "pytest-asyncio only")  # a different package
    assert mentions("256", "应该统一算作256 token")  # CJK next to a number is not a word character


def test_coverage_counts_any_alternative_and_misses_the_rest() -> None:
    labels = Labels(
        "p",
        (
            Fact("stack", ("postgresql", "postgres")),
            Fact("stack", ("sqlalchemy",)),
            Fact("commands", ("pytest -q",)),
        ),
        (),
    )
    shown, missed = coverage(labels, "· stack: Python, Postgres 16\n· test: pytest -q", "")
    assert shown == 2
    assert [f.any for f in missed] == [("sqlalchemy",)]


def test_global_preference_counts_only_in_the_global_block() -> None:
    fact = Fact("conventions", ("conventional commits",), scope="global")
    labels = Labels("p", (fact,), ())
    assert coverage(labels, "· conventional commits", "")[0] == 0
    assert coverage(labels, "", "· prefer conventional commits")[0] == 1
    project_fact = Fact("conventions", ("type hints",), scope="lang:python")
    assert coverage(Labels("p", (project_fact,), ()), "· type hints everywhere", "")[0] == 1


@pytest.mark.parametrize(
    "line",
    [
        "· test: Vitest (was Jest)",
        "· decided: moved from Jest to Vitest",
        "· test: Vitest, replaced Jest",
        "· test: Vitest instead of Jest",
        "· we switched from Jest to Vitest last week",
    ],
)
def test_a_replaced_value_named_as_history_is_not_stale(line: str) -> None:
    assert stale_mentions(["jest"], line) == []


def test_a_replaced_value_named_as_current_is_stale() -> None:
    block = "· test: Jest (npm test)\n· lint: ESLint"
    assert stale_mentions(["jest"], block) == [("jest", "· test: Jest (npm test)")]
    assert stale_mentions(["jest"], "· test: Vitest, Jest for the legacy app (was Mocha)") != []


def test_answer_recall_is_the_share_of_terms_found() -> None:
    q = Question("how do I run the tests?", (("pytest",), ("-q", "--quiet"), ("tox",)))
    assert answer_recall(q, "run pytest -q") == pytest.approx(2 / 3)
    assert answer_recall(q, "nothing here") == 0.0


def test_labels_and_questions_load_and_bad_ones_name_the_file(tmp_path: Path) -> None:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({
        "project": "p",
        "stack": [{"role": "orm", "any": ["SQLAlchemy"]}],
        "conventions": [{"scope": "global", "any": ["f-strings"]}],
        "stale": ["Django ORM"],
    }))  # fmt: skip
    labels = load_labels(facts)
    assert labels.facts == (
        Fact("stack", ("sqlalchemy",), "project", "orm"),
        Fact("conventions", ("f-strings",), "global"),
    )
    assert labels.stale == ("django orm",)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps([{"q": "which ORM?", "answer": [["sqlalchemy"]]}]))
    assert load_questions(questions) == [Question("which ORM?", (("sqlalchemy",),))]
    facts.write_text(json.dumps({"stack": [{"role": "x", "any": []}]}))
    with pytest.raises(ValueError, match=r"facts.json: stack\[0\]"):
        load_labels(facts)
