"""The LLM extractor: asks an OpenAI-compatible endpoint for entities, relations and events, and
adds what survives checks to the rules' result. Never worse than the rules:

- the rules always run first and their records are always kept (the LLM adds, never replaces;
  work events stay the rules' own);
- a reply must be JSON matching REPLY_SCHEMA (jsonschema); a batch whose call fails (HTTP
  errors after retries, timeouts, malformed JSON, schema errors) keeps the rules' result only;
- on doubt, leave out: an entity whose name does not occur in the turn's text, a relation
  between names the turn does not hold, an unknown type;
- turns go `batch_size` at a time; the run's TokenBudget stops the calls when it is spent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from ...llm import BudgetExhausted, ChatClient, LLMError, TokenBudget, parse_json_reply
from ..model import CollectedTurn, Extraction, SessionBatch
from .builder import RecordBuilder

ENTITY_TYPES = (
    "person",
    "place",
    "organisation",
    "activity",
    "project",
    "file",
    "folder",
    "command",
    "package",
    "test",
    "error",
    "url",
    "port",
    "tool",
    "model",
    "issue",
    "service",
    "concept",
)
EVENT_KINDS = ("decision", "learning", "event")
TURN_CHARS = 2500
MAX_LLM_CONFIDENCE = 0.8

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["turns"],
    "properties": {
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["turn"],
                "properties": {
                    "turn": {"type": "string"},
                    "entities": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "type"],
                            "properties": {
                                "name": {"type": "string", "minLength": 1, "maxLength": 200},
                                "type": {"type": "string"},
                            },
                        },
                    },
                    "relations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["from", "relation", "to"],
                            "properties": {
                                "from": {"type": "string"},
                                "relation": {"type": "string", "maxLength": 40},
                                "to": {"type": "string"},
                                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                            },
                        },
                    },
                    "events": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["summary", "kind"],
                            "properties": {
                                "summary": {"type": "string", "minLength": 3, "maxLength": 400},
                                "kind": {"enum": list(EVENT_KINDS)},
                                "importance": {"type": "number", "minimum": 0, "maximum": 1},
                            },
                        },
                    },
                },
            },
        }
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(REPLY_SCHEMA)

SYSTEM_PROMPT = f"""You extract a knowledge graph from conversation turns for a long-term memory.
For each turn given (identified by its "turn" id), list:
- entities actually named in that turn: name as written, type one of {", ".join(ENTITY_TYPES)};
- relations between those entities: from, relation (short kebab-case verb such as edited,
  depends-on, listens-on, lives-in, works-at, uses, fixed-by), to, confidence 0..1;
- events worth remembering: decisions, learnings, and things people did or will do, each a
  short self-contained sentence naming who did what and when (absolute dates when the turn
  gives them), with kind decision|learning|event and importance 0..1.
Leave out small talk. Answer with one JSON object only:
{{"turns": [{{"turn": "<id>", "entities": [...], "relations": [...], "events": [...]}}]}}"""


@dataclass(frozen=True, slots=True)
class LLMOutcome:
    extraction: Extraction
    batches: int
    failed: int
    tokens: int


def render_turn(turn: CollectedTurn) -> str:
    lines: list[str] = []
    for node in turn.nodes:
        if node.is_tool:
            args = node.input if isinstance(node.input, str) else json.dumps(node.input, ensure_ascii=False)
            lines.append(f"[tool {node.name}] {str(args)[:300]}")
            continue
        speaker = node.metadata.get("speaker") or node.role
        if node.content:
            lines.append(f"{speaker}: {node.content}")
    text = "\n".join(lines)
    return text if len(text) <= TURN_CHARS else text[: TURN_CHARS - 1] + "…"


def _slug_relation(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]


def _accept(b: RecordBuilder, turn: CollectedTurn, item: dict[str, Any], text: str) -> None:
    """Add one turn's reply to the builder, leaving out what the turn does not support."""
    lowered = text.lower()
    named: dict[str, str] = {}
    prov = b.provenance([turn.anchor, max(turn.nodes, key=lambda n: n.seq)], turn=turn.number, commit=turn.commit)
    for entity in item.get("entities") or ():
        name = " ".join(entity["name"].split())
        kind = entity["type"].lower()
        if kind not in ENTITY_TYPES or name.lower() not in lowered:
            continue
        named[name.lower()] = b.entity(kind, name, prov)
    for relation in item.get("relations") or ():
        source, target = named.get(relation["from"].lower()), named.get(relation["to"].lower())
        verb = _slug_relation(relation["relation"])
        if source and target and verb:
            confidence = min(MAX_LLM_CONFIDENCE, float(relation.get("confidence", 0.6)))
            b.edge(source, verb, target, prov, confidence=confidence)
    session = turn.session.session_id
    for ordinal, event in enumerate(item.get("events") or ()):
        summary = " ".join(event["summary"].split())
        importance = float(event.get("importance", 0.5))
        key = f"llm:{event['kind']}:{session}:{turn.anchor.id}:{ordinal}"
        b.event(summary, event["kind"], importance, prov, named.values(), key=key)


def _chunks(turns: Sequence[CollectedTurn], size: int) -> list[Sequence[CollectedTurn]]:
    return [turns[i : i + size] for i in range(0, len(turns), max(1, size))]


def extract_llm(
    batch: SessionBatch,
    client: ChatClient,
    budget: TokenBudget,
    *,
    ingestion_time: float,
    batch_size: int = 8,
    cancel: Callable[[], bool] | None = None,
) -> LLMOutcome:
    """What the LLM adds for a batch (the caller merges it into the rules' result)."""
    b = RecordBuilder(batch.session, ingestion_time)
    calls = failed = 0
    used_before = budget.used
    notes: list[str] = []
    for chunk in _chunks([t for t in batch.turns if t.anchor.content or len(t.nodes) > 1], batch_size):
        if cancel is not None and cancel():
            break
        texts = {t.anchor.id: render_turn(t) for t in chunk}
        prompt = "\n\n".join(f'### turn "{tid}"\n{text}' for tid, text in texts.items())
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
        calls += 1
        try:
            reply = client.chat(messages, max_tokens=1500, budget=budget, json_mode=False)
            data = parse_json_reply(reply.text)
            _VALIDATOR.validate(data)
        except BudgetExhausted as exc:
            failed += 1
            notes.append(f"{batch.session.session_id}: {exc}; the rest keeps the rules' result")
            break
        except (LLMError, jsonschema.ValidationError) as exc:
            failed += 1
            problem = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
            notes.append(f"{batch.session.session_id}: LLM batch kept the rules' result ({problem[:160]})")
            continue
        by_id = {t.anchor.id: t for t in chunk}
        for item in data["turns"]:
            turn = by_id.get(item["turn"])
            if turn is not None:
                _accept(b, turn, item, texts[turn.anchor.id])
    b.notes.extend(notes)
    return LLMOutcome(b.build(), calls, failed, budget.used - used_before)
