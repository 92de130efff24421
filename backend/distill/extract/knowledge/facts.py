"""The accumulator every fact-kind module records into: one batch's facts, latest sighting wins."""

from __future__ import annotations

from dataclasses import dataclass, field

from ....memory import relations
from ....model import Provenance
from .. import vocabulary
from ..builder import RecordBuilder
from .techs import IMPLIED_LANGUAGE

# the relations the knowledge rules write (their properties: memory/relations.py)
USES = "uses"
CHOSE = "chose"  # a library the user said to use ("use Loguru for logging"): on the stack line
DROPPED = "dropped"
CONVENTION = "convention"
ENV_VAR = "env-var"
ENDPOINT = "endpoint"
EXPOSES = "exposes"
PROBLEM = "has-problem"
ARCHITECTURE = "architecture"  # project ──architecture──► "hexagonal architecture"
COMPONENT = "component"  # project ──component──► "API: services/api"
TASK_DONE = "task-done"  # what a session says is done / still to do ("done: X", "TODO: Y", "- [x] Z")
TASK_PENDING = "task-pending"


AGREEING = 0.05


@dataclass(slots=True)
class Knowledge:
    """One batch's knowledge, gathered turn by turn, recorded at the end (latest sighting wins)."""

    b: RecordBuilder
    subject: str
    pending: dict[tuple[str, str, str, str], tuple[Provenance, float]] = field(default_factory=dict)
    user: str = ""
    decided: set[str] = field(default_factory=set)  # nodes whose text gave a replacement or a drop
    told: bool = False  # the current turn's messages gave a fact (its work event need not retell them)
    recommended: list[tuple[vocabulary.Tech, Provenance]] = field(default_factory=list)  # awaiting the user's word
    proposal: tuple[str, str, Provenance] | None = None  # (verb, name) the user proposed: awaiting the answer
    sources: dict[tuple[str, str, str, str], set[str]] = field(default_factory=dict)  # the kinds of evidence seen
    source: str = ""  # the kind of evidence being read (a tool call, a manifest, a sentence, a list, a block)
    # technologies the messages name: name -> (turns naming it, the technology, first sighting) (named.py)
    named: dict[str, tuple[set[int], vocabulary.Tech, Provenance]] = field(default_factory=dict)

    # entity helpers
    def tech(self, tech: vocabulary.Tech, prov: Provenance) -> str:
        return self.b.entity(
            "tech", tech.name, prov, attrs={"category": tech.category}, key=f"tech:{tech.name.lower()}"
        )

    def fact(self, relation: str, target: str, prov: Provenance, confidence: float, *, subject: str = "",
             scope: str = "") -> str:  # fmt: skip
        if relations.relation(relation) is None:
            raise ValueError(f"{relation!r} is not in the relation table (memory/relations.py)")
        key = (subject or self.subject, relation, target, scope or self.b.scope)
        seen = self.sources.setdefault(key, set())
        seen.add(self.source)
        # each other kind of evidence that agrees (a run and a manifest, an answer's list and an
        # install) makes the fact surer
        confidence = min(0.99, confidence + AGREEING * (len(seen) - 1))
        old = self.pending.get(key)
        if old is None or (prov.event_time, confidence) >= (old[0].event_time, old[1]):
            self.pending[key] = (prov, max(confidence, old[1]) if old else confidence)
        return target

    def stack(self, tech: vocabulary.Tech, prov: Provenance, confidence: float, *, slot: bool = True,
              subject: str = "", scope: str = "") -> str:  # fmt: skip
        eid = self.tech(tech, prov)
        self.fact(USES, eid, prov, confidence, subject=subject, scope=scope)
        if slot and tech.slot:
            self.fact(tech.slot, eid, prov, confidence, subject=subject, scope=scope)
        implied = IMPLIED_LANGUAGE.get(tech.name)
        language = vocabulary.lookup(implied) if implied else None
        if language is not None:  # "a Flask app" is a Python project
            self.stack(language, prov, min(confidence, 0.7), slot=False, subject=subject, scope=scope)
        return eid

    def version(self, tech: vocabulary.Tech, number: str, prov: Provenance, confidence: float) -> None:
        self.stack(tech, prov, confidence, slot=False)
        name = f"{tech.name} {number}"
        eid = self.b.entity("tech", name, prov, attrs={"category": tech.category, "version": number},
                            key=f"tech:{name.lower()}")  # fmt: skip
        self.fact(relations.version_relation(tech.name), eid, prov, confidence)

    def drop(self, tech: vocabulary.Tech, prov: Provenance, confidence: float = 0.9) -> str:
        eid = self.tech(tech, prov)
        self.fact(DROPPED, eid, prov, confidence)
        return eid

    def person(self, prov: Provenance) -> str:
        if not self.user:
            self.user = self.b.entity("person", "user", prov, key="user")
        return self.user

    def flush(self) -> None:
        # by time, then in the order read (the end of an answer, its closing summary, is its newest)
        for (subject, relation, target, scope), (prov, confidence) in sorted(
            self.pending.items(), key=lambda item: item[1][0].event_time
        ):
            self.b.edge(subject, relation, target, prov, confidence, scope=scope)
        self.pending.clear()
        self.sources.clear()
