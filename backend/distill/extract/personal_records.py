"""Personal facts (personal.py) as records: an edge from the speaker for each, dated.

Shared by the conversation rules (every message) and the coding rules (the user's own
prompts, where the speaker is "the user"). An edge's provenance is its message's turn, its
event_time the first date of the fact's own sentence resolved against the message's time
(else the message's time), so "my sister's wedding is next Saturday" is dated that Saturday.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from ...model import Node
from .builder import RecordBuilder
from .dates import ResolvedDate, find_dates
from .names import is_statement, third_person
from .personal import Fact, personal_facts

SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def noon(day: dt.date) -> float:
    return dt.datetime(day.year, day.month, day.day, 12, tzinfo=dt.UTC).timestamp()


def statements(text: str) -> list[str]:
    return [s.strip() for s in SENTENCES.split(text) if s.strip() and is_statement(s.strip())]


def sentence_date(sentence: str, dates: Sequence[ResolvedDate]) -> ResolvedDate | None:
    return next((d for d in dates if d.phrase in sentence), None)


def fact_edges(
    b: RecordBuilder,
    node: Node,
    text: str,
    speaker_id: str,
    speaker: str,
    dates: Sequence[ResolvedDate],
    *,
    turn: int | None,
    commit: str | None,
    known: set[tuple[str, str]] = frozenset(),  # type: ignore[assignment]
) -> list[tuple[str, Fact, str]]:
    """Edges for the facts the message states; returns (sentence, fact, entity id) of each new one."""
    made: list[tuple[str, Fact, str]] = []
    seen = set(known)
    for sentence in statements(text):
        for fact in personal_facts(sentence, speaker):
            if (fact.relation, fact.name.lower()) in seen:
                continue
            seen.add((fact.relation, fact.name.lower()))
            date = sentence_date(sentence, dates)
            prov = b.provenance([node], turn=turn, commit=commit, event_time=noon(date.start) if date else None)
            eid = b.entity(fact.type, fact.name, b.provenance([node], turn=turn, commit=commit), attrs=fact.attrs)
            b.edge(speaker_id, fact.relation, eid, prov, confidence=fact.confidence)
            made.append((sentence, fact, eid))
    return made


def user_facts(b: RecordBuilder, node: Node, text: str, *, turn: int | None, commit: str | None) -> list[str]:
    """A coding session's prompt: the user's personal facts, each an edge and a dated event."""
    if not personal_facts_possible(text):
        return []
    when = dt.datetime.fromtimestamp(node.created_at, tz=dt.UTC).replace(tzinfo=None)
    dates = find_dates(text, when)
    user = b.entity("person", "user", b.provenance([node], turn=turn, commit=commit), key="user")
    made = fact_edges(b, node, text, user, "the user", dates, turn=turn, commit=commit)
    named: list[str] = []
    for ordinal, (sentence, _fact, eid) in enumerate(made):
        named.append(eid)
        date = sentence_date(sentence, dates)
        summary = third_person(sentence, "The user")
        if date is not None and f"[{date.label}]" not in summary:
            summary = summary.replace(date.phrase, f"{date.phrase} [{date.label}]", 1)
        prov = b.provenance([node], turn=turn, commit=commit, event_time=noon(date.start) if date else None)
        key = f"personal:{node.id}:{ordinal}"
        b.event(summary, "event", 0.6, prov, [user, eid], key=key)
    return named


_FIRST_PERSON = re.compile(r"\b(?:I|[Ww]e|[Mm]y|[Oo]ur)\b")


def personal_facts_possible(text: str) -> bool:
    """Cheap gate: a prompt with no first-person word states no personal fact."""
    return bool(_FIRST_PERSON.search(text))
