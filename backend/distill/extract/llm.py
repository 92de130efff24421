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

from ...llm import ChatClient, LLMError, LLMStopped, TokenBudget, parse_json_reply
from ...memory import relations
from ...memory.records import GLOBAL
from ..model import CollectedTurn, Extraction, SessionBatch
from . import vocabulary
from .builder import RecordBuilder
from .knowledge import CONVENTION, ENDPOINT, ENV_VAR, Knowledge

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
# what a project's brief is made of (knowledge/): the same kinds and slots the rules record
FACT_KINDS = ("stack", "replacement", "dropped", "command", "convention", "preference", "state", "env-var", "endpoint")
COMMAND_KINDS = relations.COMMAND_KINDS
FACT_SLOTS = relations.CATEGORY_ORDER
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
                    "facts": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["kind", "name"],
                            "properties": {
                                "kind": {"enum": list(FACT_KINDS)},
                                "name": {"type": "string", "minLength": 1, "maxLength": 200},
                                "category": {"enum": list(FACT_SLOTS)},
                                "version": {"type": "string", "maxLength": 20},
                                "replaces": {"type": "string", "maxLength": 80},
                                "command_kind": {"enum": list(COMMAND_KINDS)},
                                "passing": {"type": "boolean"},
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
  gives them), with kind decision|learning|event and importance 0..1;
- facts about the project being worked on (coding sessions), each with kind one of
  {", ".join(FACT_KINDS)}: "stack" (a technology used: name as written, category one of
  {", ".join(FACT_SLOTS)}, version if stated), "replacement" (name: the new technology,
  replaces: the old one when the text names it, category), "dropped" (a technology removed), "command" (the exact
  command line that tests, builds, runs, lints, formats, type-checks, migrates or deploys it,
  command_kind one of {", ".join(COMMAND_KINDS)}, only if it ran successfully or is given as the
  way), "convention" (a rule the user states for this project, as one sentence), "preference"
  (a rule the user states for all their projects), "state" (a check's outcome: name = what,
  passing true|false), "env-var" (an environment variable's name, never its value), "endpoint"
  ("GET /path").
Leave out small talk. Answer with one JSON object only:
{{"turns": [{{"turn": "<id>", "entities": [...], "relations": [...], "events": [...], "facts": [...]}}]}}"""


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


def _accept(
    b: RecordBuilder,
    turn: CollectedTurn,
    item: dict[str, Any],
    text: str,
    knowledge: Callable[[], Knowledge] | None = None,
) -> None:
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
    facts = item.get("facts") or ()
    if facts and knowledge is not None:
        _accept_facts(knowledge(), turn, facts, lowered, prov)
    session = turn.session.session_id
    for ordinal, event in enumerate(item.get("events") or ()):
        summary = " ".join(event["summary"].split())
        importance = float(event.get("importance", 0.5))
        key = f"llm:{event['kind']}:{session}:{turn.anchor.id}:{ordinal}"
        b.event(summary, event["kind"], importance, prov, named.values(), key=key)


def _tech(name: str, category: str | None) -> vocabulary.Tech | None:
    """The vocabulary's technology for a name; an unknown one in the category the LLM gave."""
    known = vocabulary.lookup(name)
    if known is not None:
        return known
    if category and category != "library" and re.fullmatch(r"[\w.+#/@ -]{1,40}", name):
        return vocabulary.Tech(name, category, "")
    return None


def _accept_facts(k: Knowledge, turn: CollectedTurn, facts: Sequence[dict[str, Any]], lowered: str, prov) -> None:
    """The brief's facts of one turn, each checked against the turn's text (else left out)."""
    b = k.b
    cap = MAX_LLM_CONFIDENCE
    for fact in facts:
        name = " ".join(fact["name"].split())
        kind = fact["kind"]
        if name.lower() not in lowered:
            continue  # on doubt, leave out: the turn must name it
        if kind in ("stack", "replacement", "dropped"):
            tech = _tech(name, fact.get("category"))
            if tech is not None:
                _accept_tech(k, kind, tech, fact, lowered, prov)
        elif kind == "command" and fact.get("command_kind"):
            k.fact(f"{fact['command_kind']}-command", b.entity("command", name[:80], prov), prov, cap)
        elif kind in ("convention", "preference"):
            entity = b.entity("convention", name[:160], prov, key=f"convention:{name[:160].lower()}")
            if kind == "preference":
                k.fact(CONVENTION, entity, prov, cap, subject=k.person(prov), scope=GLOBAL)
            else:
                k.fact(CONVENTION, entity, prov, cap)
        elif kind == "state" and isinstance(fact.get("passing"), bool):
            status = f"{name[:80]} {'passing' if fact['passing'] else 'failing'}"
            k.fact("test-status", b.entity("status", status, prov, key=f"status:{status}"), prov, cap)
        elif kind == "env-var" and re.fullmatch(r"[A-Z][A-Z0-9_]{1,60}", name):
            k.fact(ENV_VAR, b.entity("env-var", name, prov), prov, cap)
        elif kind == "endpoint" and re.fullmatch(r"(?:GET|POST|PUT|PATCH|DELETE|ANY) /\S{0,80}", name):
            k.fact(ENDPOINT, b.entity("endpoint", name, prov), prov, cap)


def _accept_tech(k: Knowledge, kind: str, tech: vocabulary.Tech, fact: dict[str, Any], lowered: str, prov) -> None:
    cap = MAX_LLM_CONFIDENCE
    if kind == "dropped":
        k.drop(tech, prov, cap)
        return
    old = fact.get("replaces")
    if kind == "replacement":
        old_tech = _tech(old, fact.get("category") or tech.category) if old else None
        if old_tech is not None and old.lower() in lowered:
            k.drop(old_tech, prov, cap)
        elif switch_slot := vocabulary.SWITCH_SLOTS.get(tech.category, ""):
            k.fact(switch_slot, k.tech(tech, prov), prov, cap)  # "we migrated the database to X"
        elif not tech.slot:
            return  # the old one unnamed and no slot for the new one to take: nothing replaced
    k.stack(tech, prov, cap)
    if fact.get("version") and re.fullmatch(r"v?\d+(?:\.\d+){0,2}", fact["version"]):
        k.version(tech, fact["version"].lstrip("v"), prov, cap)


def _subject(b: RecordBuilder, batch: SessionBatch) -> str:
    """The entity the facts are about: the project (the rules' own id for it), else the session."""
    session = batch.session
    first = batch.turns[0].nodes[:1] if batch.turns else ()
    prov = b.provenance(first, turn=batch.turns[0].number if batch.turns else None)
    if session.project_id or session.root:
        name = session.project_name or session.root.rstrip("/").rsplit("/", 1)[-1] or session.project_id
        return b.entity("project", name, prov, key=session.project_key, attrs={"workdir": session.root})
    return b.entity("session", session.title or session.session_id, prov, key=session.session_id)


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
    held: list[Knowledge] = []

    def knowledge() -> Knowledge:  # made on the first fact: a reply without facts adds no subject
        if not held:
            held.append(Knowledge(b, _subject(b, batch)))
        return held[0]

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
        except LLMStopped as exc:  # budget, call limit, CLI missing or signed out, rate limit
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
                _accept(b, turn, item, texts[turn.anchor.id], knowledge)
    if held:
        held[0].flush()
    b.notes.extend(notes)
    return LLMOutcome(b.build(), calls, failed, budget.used - used_before)
