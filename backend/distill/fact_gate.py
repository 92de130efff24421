"""The gate every extracted fact passes before it is written, whatever extractor made it.

Two shapes are nonsense and are never stored:
- a fact about a session: a session is where something was said, not a thing that has a stack
  or conventions (its entity's name is its title, so "for the messages of the copilot:
  ──frontend-framework──► Angular" would reach the global block);
- a fact that points to itself: the same entity at both ends, or two ends with the same name
  ("by default the dark mode… ──convention──► by default the dark mode…").
Activity edges from a session (read, edited, ran, part-of, the tool or model it used) are
provenance, not facts: they pass.
An entity only such a dropped fact named is dropped with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..memory import relations
from ..memory.records import Edge, Entity
from .model import Extraction

SESSION_TYPE = "session"
ACTIVITY_TARGETS = frozenset({"tool", "model"})
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Refused:
    edge: Edge
    reason: str


def _type_of(entity_id: str, by_id: dict[str, Entity]) -> str:
    entity = by_id.get(entity_id)
    return entity.type if entity is not None else entity_id.split(".", 1)[0]


def _same_words(a: str, b: str) -> bool:
    """Equal once case, punctuation and an ellipsis cut are set aside (a title is cut at 50 characters)."""
    x, y = (_NOT_WORD.sub(" ", s.rstrip("…").casefold()).strip() for s in (a, b))
    if not x or not y:
        return False
    if x == y:
        return True
    shorter, longer = sorted((x, y), key=len)
    cut = a.endswith("…") or b.endswith("…")
    return cut and len(shorter) >= 12 and longer.startswith(shorter)


def is_knowledge(name: str) -> bool:
    """What is known about a subject (its stack, commands, conventions, state, layout, progress),
    as the relation table (memory/relations.py) says; not activity, nor a plain link."""
    row = relations.relation(name)
    return row is not None and (row.stack or row.role not in (relations.ACTIVITY, relations.LINK))


def refusal(edge: Edge, by_id: dict[str, Entity]) -> str:
    """Why `edge` may not be stored ("" when it may)."""
    if edge.from_id == edge.to_id:
        return "points to itself"
    source, target = by_id.get(edge.from_id), by_id.get(edge.to_id)
    if source is not None and target is not None and _same_words(source.name, target.name):
        return "points to itself (same name at both ends)"
    if _type_of(edge.from_id, by_id) == SESSION_TYPE and is_knowledge(edge.relation):
        if edge.relation == "uses" and _type_of(edge.to_id, by_id) in ACTIVITY_TARGETS:
            return ""  # the tool or the model a session used: what it did, not a fact about it
        return "a session is not the subject of a fact"
    return ""


def gate(extraction: Extraction, known: Iterable[Entity] = ()) -> tuple[Extraction, tuple[Refused, ...]]:
    """The extraction without the facts that may not be stored (and entities only they named)."""
    by_id = {e.id: e for e in known}
    by_id.update((e.id, e) for e in extraction.entities)
    kept: list[Edge] = []
    refused: list[Refused] = []
    for edge in extraction.edges:
        reason = refusal(edge, by_id)
        if reason:
            refused.append(Refused(edge, reason))
        else:
            kept.append(edge)
    if not refused:
        return extraction, ()
    named = {x for e in kept for x in (e.from_id, e.to_id)}
    named.update(x for event in extraction.events for x in event.entities)
    orphans = {e.edge.to_id for e in refused} - named
    entities = tuple(e for e in extraction.entities if e.id not in orphans)
    return replace(extraction, edges=tuple(kept), entities=entities), tuple(refused)
