"""Rules for plain conversations (personal-assistant sessions, LoCoMo-style chats).

Each message becomes at most one event that says who did what when: its statements rewritten
in the third person ("I went ..." -> "Caroline went ..."), with every date phrase resolved
against the message's time ("yesterday [7 May 2023]"); the event's time is the first resolved
date, and it points at the message it came from. People, places, organisations, activities
and dates become entities (names.py finds them), linked to the speaker by relations such as
attended, visited, does, likes, lives-in, works-at and has-<kin>.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from ...model import Node
from ..model import CollectedTurn, SessionBatch
from .builder import RecordBuilder
from .cues import find_cues
from .dates import ResolvedDate, find_dates
from .names import Mention, find_mentions, is_statement, third_person
from .personal_records import fact_edges

CAPTION_KEYS = ("blip_caption", "caption", "image_caption", "img_caption", "alt_text")
LIFE_EVENTS = re.compile(
    r"\b(married|engaged|wedding|born|birth|pregnan\w*|adopt\w*|moved|moving|graduat\w*|promot\w*|new job|hired|"
    r"fired|quit|retir\w*|passed away|died|funeral|divorc\w*|broke up|accident|surgery|hospital|diagnos\w*|won|"
    r"award|launch\w*|started|opened|bought|sold|trip|vacation|travel\w*|concert|race|marathon|competition)\b",
    re.IGNORECASE,
)
MAX_EVENT = 320


def speaker_of(node: Node, session_speakers: Sequence[str]) -> str:
    speaker = node.metadata.get("speaker")
    if isinstance(speaker, str) and speaker.strip():
        return speaker.strip()
    if node.role == "assistant":
        return "the assistant"
    return "the user"


def _addressee(speaker: str, speakers: Sequence[str]) -> str:
    others = [s for s in speakers if s != speaker]
    return others[0] if len(others) == 1 else ""


def _caption(node: Node) -> str:
    for key in CAPTION_KEYS:
        value = node.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _when(node: Node, fallback: float) -> dt.datetime:
    stamp = node.created_at or fallback
    return dt.datetime.fromtimestamp(stamp, tz=dt.UTC).replace(tzinfo=None)


def _noon(day: dt.date) -> float:
    return dt.datetime(day.year, day.month, day.day, 12, tzinfo=dt.UTC).timestamp()


def _with_dates(sentence: str, dates: Sequence[ResolvedDate]) -> str:
    for date in dates:
        if date.phrase in sentence and f"[{date.label}]" not in sentence:
            sentence = sentence.replace(date.phrase, f"{date.phrase} [{date.label}]", 1)
    return sentence


def last_question(text: str) -> str:
    """The last question a message asks ("" when it asks none)."""
    questions = [q.strip() for q in re.findall(r"[^.!?\n]*\?", text) if len(q.split()) >= 3]
    return questions[-1] if questions else ""


def message_summary(
    text: str, speaker: str, addressee: str, dates: Sequence[ResolvedDate], caption: str, asked: str = ""
) -> str:
    """The message's statements in the third person, dates resolved; "" when it states nothing.

    `asked`: the question the message answers (the other speaker's previous message), already in
    the third person; it leads the event so the answer can be found by the question's words.
    """
    parts: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if not sentence or not is_statement(sentence):
            continue
        parts.append(_with_dates(third_person(sentence, speaker, addressee), dates))
    if caption and caption not in text:
        parts.append(f"{speaker} shared {caption.rstrip('.')}.")
    if not parts and not (asked and text.strip()):
        return ""
    if not parts:  # a short answer ("Yes, twice!") says something only with its question
        parts.append(third_person(" ".join(text.split()), speaker, addressee))
    body = " ".join(parts)
    if not body.lower().startswith(speaker.lower()):
        body = f"{speaker}: {body}"
    if asked:
        body = f"{addressee or 'Someone'} asked: {asked} — {body}"
    return body if len(body) <= MAX_EVENT else body[: MAX_EVENT - 1].rstrip() + "…"


def _importance(summary: str, dates: Sequence[ResolvedDate], mentions: Sequence[Mention]) -> float:
    score = 0.3 + (0.15 if dates else 0.0) + min(0.2, 0.05 * len(mentions))
    if LIFE_EVENTS.search(summary):
        score += 0.2
    return round(min(0.9, score), 3)


def extract_message(
    b: RecordBuilder,
    turn: CollectedTurn,
    node: Node,
    people: dict[str, str],
    known: dict[str, str],
    previous: Node | None = None,
) -> None:
    session = turn.session
    speaker = speaker_of(node, session.speakers)
    addressee = _addressee(speaker, session.speakers)
    text = node.content or ""
    caption = _caption(node)
    when = _when(node, session.created_at)
    dates = find_dates(text, when)
    event_time = _noon(dates[0].start) if dates else None
    prov = b.provenance([node], turn=turn.number, commit=turn.commit, event_time=event_time)
    node_prov = b.provenance([node], turn=turn.number, commit=turn.commit)
    speaker_id = people.get(speaker) or b.entity("person", speaker, node_prov)
    people[speaker] = speaker_id
    named: list[str] = []  # the speaker is every event's subject already: naming it adds only noise
    mentions = find_mentions(text + (f" {caption}" if caption else ""), speakers=session.speakers, known=known)
    for mention in mentions:
        eid = b.entity(mention.type, mention.name, node_prov)
        named.append(eid)
        if mention.relation:
            subject = speaker_id if mention.subject == "speaker" else people.get(mention.subject, speaker_id)
            b.edge(subject, mention.relation, eid, prov, confidence=mention.confidence)
    stated = {(m.relation, m.name.lower()) for m in mentions if m.relation}
    for _sentence, _fact, fact_id in fact_edges(
        b, node, text, speaker_id, speaker, dates, turn=turn.number, commit=turn.commit, known=stated
    ):
        named.append(fact_id)
    for date in dates:
        date_id = b.entity("date", date.label, node_prov, attrs={"start": date.iso, "granularity": date.granularity})
        named.append(date_id)
    asked = ""
    if previous is not None and speaker_of(previous, session.speakers) != speaker:
        question = last_question(previous.content or "")
        if question:
            asked = third_person(question, addressee or speaker_of(previous, session.speakers), speaker)
    summary = message_summary(text, speaker, addressee, dates, caption, asked)
    if summary:
        key = f"event:{session.session_id}:{node.id}"
        b.event(summary, "event", _importance(summary, dates, mentions), prov, named, key=key)
    for ordinal, cue in enumerate(find_cues(text, from_user=True, limit=2)):
        sentence = _with_dates(third_person(cue.sentence, speaker, addressee), dates)
        kind_key = f"{cue.kind}:{session.session_id}:{node.id}:{ordinal}"
        b.event(sentence, cue.kind, 0.6, prov, named, key=kind_key)


def extract_conversation(b: RecordBuilder, batch: SessionBatch) -> None:
    people: dict[str, str] = {}
    known: dict[str, str] = {}
    first = batch.turns[0].nodes[0] if batch.turns else None
    for speaker in batch.session.speakers:
        prov = b.provenance([first] if first else [], turn=batch.turns[0].number if batch.turns else None)
        people[speaker] = b.entity("person", speaker, prov)
    by_id = {n.id: n for turn in batch.turns for n in turn.nodes}
    for turn in batch.turns:
        for node in turn.nodes:
            if node.role in ("user", "assistant") and not node.is_tool and (node.content or _caption(node)):
                previous = by_id.get(node.parent_id) if node.parent_id else None
                extract_message(b, turn, node, people, known, previous)
