"""The virtual memory's records (ARCHITECTURE.md §5): one shape each, as stored in the JSONL logs.

Every record is a frozen dataclass with `to_json` (the line written) and `from_json` (a line
read back; a bad one raises CorruptFile naming where it came from). Ids are deterministic:
the same content and provenance give the same id, so a re-run appends nothing new.

Logs and what each line may be (the `op` key tells patches from records):
    memory/timeline/YYYY-MM.jsonl   Event, or a Patch on an event
    memory/graph/entities.jsonl     Entity, or an AliasMerge / AliasUnmerge
    memory/graph/edges.jsonl        Edge, or a Patch on an edge
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..model import CorruptFile, Provenance

EVENT_KINDS: tuple[str, ...] = ("work", "decision", "learning", "event")
GLOBAL = "global"
_SCOPE_RE = re.compile(r"global|(project|agent):[^\s]+")


_VALID_SCOPES: set[str] = set()  # scopes (exact str) that passed: a memory holds few, met on every record


def check_scope(scope: object, where: Any = "<scope>") -> str:
    if scope.__class__ is str and scope in _VALID_SCOPES:
        return scope  # type: ignore[return-value]
    if not isinstance(scope, str) or not _SCOPE_RE.fullmatch(scope):
        raise CorruptFile(where, f"invalid scope {scope!r}: use global, project:<id> or agent:<id>")
    if scope.__class__ is str and len(_VALID_SCOPES) < 4096:
        _VALID_SCOPES.add(scope)
    return scope


def project_scope(project_id: str) -> str:
    return f"project:{project_id}" if project_id else GLOBAL


def visible_scopes(scope: str | Iterable[str] | None) -> frozenset[str] | None:
    """The scopes a caller in `scope` sees: global plus its own. None (no caller) sees all.

    A caller may stand in several scopes at once (a project and an agent: {"project:P",
    "agent:A"}); it then sees global plus each of them.
    """
    if scope is None:
        return None
    if isinstance(scope, str):
        return frozenset({GLOBAL, scope})
    return frozenset({GLOBAL, *scope})


# json.dumps with these options builds an encoder per call; ids are made per record, so one is kept
_ID_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
_quote = json.encoder.encode_basestring  # how that encoder writes a str (ensure_ascii=False)


def _id_json(parts: tuple[Any, ...]) -> str:
    """`_ID_JSON.encode(parts)`, built by hand for the parts ids are made of (texts, None, lists of
    texts): the same characters, without the encoder's per-call set-up. Anything else: the encoder."""
    out = []
    for part in parts:
        kind = part.__class__
        if kind is str:
            out.append(_quote(part))
        elif part is None:
            out.append("null")
        elif (kind is list or kind is tuple) and all(item.__class__ is str for item in part):
            out.append("[" + ",".join(map(_quote, part)) + "]")
        else:
            return _ID_JSON.encode(parts)
    return "[" + ",".join(out) + "]"


def record_id(prefix: str, *parts: Any) -> str:
    """A deterministic id: `prefix-` + 16 hex digits of a hash of the parts (JSON, sorted keys)."""
    raw = _id_json(parts)
    # surrogatepass: text from JSON may hold lone surrogates ("\ud800"); an id must not crash on them
    return f"{prefix}-{hashlib.blake2b(raw.encode('utf-8', 'surrogatepass'), digest_size=8).hexdigest()}"


def entity_key(name: str) -> str:
    """The normalized form of a name that alias resolution and ids start from."""
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    return re.sub(r"\s+", " ", text)


def entity_id(entity_type: str, name: str) -> str:
    """`type.slug`: readable, and the same for two spellings that normalize alike."""
    key = entity_key(name)
    slug = re.sub(r"[^a-z0-9]+", "-", key.encode("ascii", "ignore").decode()).strip("-")[:48]
    digest = hashlib.blake2b(f"{entity_type}\x00{key}".encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{entity_type}.{slug + '-' if slug else ''}{digest}"


def _frozen(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


def _text(data: Mapping[str, Any], key: str, where: Any, *, required: bool = True) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise CorruptFile(where, f"{key} must be a non-empty string")
    return value


def _number(data: Mapping[str, Any], key: str, where: Any, default: float | None = None) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CorruptFile(where, f"{key} must be a number")
    return float(value)


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key) or ()
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()


def _provenance(data: Mapping[str, Any], where: Any) -> Provenance:
    return Provenance.from_json(data.get("provenance"), where)


@dataclass(frozen=True, slots=True)
class Event:
    """A timeline entry: what happened, when (provenance.event_time), and where it came from."""

    id: str
    summary: str
    kind: str  # one of EVENT_KINDS
    importance: float  # 0..1
    provenance: Provenance
    entities: tuple[str, ...] = ()  # entity ids
    scope: str = GLOBAL
    superseded_by: str | None = None  # set only when folded with a supersede patch
    # The slot an event fills, e.g. `work:<session>:<user node>` (one work event per turn): a
    # re-distilled event with the same key and another id is a newer copy and supersedes it.
    key: str = ""

    @property
    def event_time(self) -> float:
        return self.provenance.event_time

    @property
    def ingestion_time(self) -> float:
        return self.provenance.ingestion_time

    @staticmethod
    def make_id(summary: str, kind: str, provenance: Provenance) -> str:
        return record_id("ev", kind, summary, provenance.session_id, list(provenance.node_ids), provenance.commit)

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "summary": self.summary,
            "kind": self.kind,
            "importance": self.importance,
            "provenance": self.provenance.to_json(),
            "entities": list(self.entities),
            "scope": self.scope,
        }
        if self.key:
            data["key"] = self.key
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<event>") -> Event:
        if not isinstance(data, Mapping):
            raise CorruptFile(where, "event is not a JSON object")
        kind = _text(data, "kind", where)
        if kind not in EVENT_KINDS:
            raise CorruptFile(where, f"unknown event kind {kind!r}")
        importance = _number(data, "importance", where, 0.5)
        return cls(
            id=_text(data, "id", where),
            summary=_text(data, "summary", where),
            kind=kind,
            importance=min(1.0, max(0.0, importance)),
            provenance=_provenance(data, where),
            entities=_strings(data, "entities"),
            scope=check_scope(data.get("scope", GLOBAL), where),
            key=data["key"] if isinstance(data.get("key"), str) else "",
        )


@dataclass(frozen=True, slots=True)
class Entity:
    """A thing the sessions talk about: a file, a person, a package, a port, ..."""

    id: str  # type.slug, see entity_id
    type: str  # file, folder, project, command, package, test, error, commit, url, port, tool,
    #            model, issue, person, place, organisation, activity, date, concept, ...
    name: str
    aliases: tuple[str, ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    scope: str = GLOBAL
    provenance: Provenance | None = None  # where it was first seen

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "name": self.name,
            "aliases": list(self.aliases),
            "attrs": dict(self.attrs),
            "scope": self.scope,
        }
        if self.provenance is not None:
            data["provenance"] = self.provenance.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<entity>") -> Entity:
        if not isinstance(data, Mapping):
            raise CorruptFile(where, "entity is not a JSON object")
        attrs = data.get("attrs") or {}
        return cls(
            id=_text(data, "id", where),
            type=_text(data, "type", where),
            name=_text(data, "name", where),
            aliases=_strings(data, "aliases"),
            attrs=_frozen(attrs if isinstance(attrs, Mapping) else {}),
            scope=check_scope(data.get("scope", GLOBAL), where),
            provenance=_provenance(data, where) if data.get("provenance") is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Edge:
    """A relation between two entities, true from event_time until superseded."""

    id: str
    from_id: str  # JSON "from"
    to_id: str  # JSON "to"
    relation: str  # edited, read, created, ran, installed, fixed-by, fails-with, depends-on, ...
    provenance: Provenance
    confidence: float = 1.0  # 0..1
    scope: str = GLOBAL
    superseded_by: str | None = None  # set only when folded with a supersede patch

    @property
    def event_time(self) -> float:
        return self.provenance.event_time

    @property
    def ingestion_time(self) -> float:
        return self.provenance.ingestion_time

    @staticmethod
    def make_id(from_id: str, relation: str, to_id: str, provenance: Provenance) -> str:
        session, nodes = provenance.session_id, provenance.node_ids
        if (  # record_id's JSON written straight out (the same characters): ids are made per edge
            from_id.__class__ is str
            and relation.__class__ is str
            and to_id.__class__ is str
            and session.__class__ is str
            and all(node.__class__ is str for node in nodes)
        ):
            raw = f"[{_quote(from_id)},{_quote(relation)},{_quote(to_id)},{_quote(session)},[{','.join(map(_quote, nodes))}]]"
            return f"ed-{hashlib.blake2b(raw.encode('utf-8', 'surrogatepass'), digest_size=8).hexdigest()}"
        return record_id("ed", from_id, relation, to_id, session, list(nodes))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "from": self.from_id,
            "to": self.to_id,
            "relation": self.relation,
            "event_time": self.event_time,
            "ingestion_time": self.ingestion_time,
            "provenance": self.provenance.to_json(),
            "confidence": self.confidence,
            "scope": self.scope,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<edge>") -> Edge:
        if not isinstance(data, Mapping):
            raise CorruptFile(where, "edge is not a JSON object")
        return cls(
            id=_text(data, "id", where),
            from_id=_text(data, "from", where),
            to_id=_text(data, "to", where),
            relation=_text(data, "relation", where),
            provenance=_provenance(data, where),
            confidence=min(1.0, max(0.0, _number(data, "confidence", where, 1.0))),
            scope=check_scope(data.get("scope", GLOBAL), where),
        )


@dataclass(frozen=True, slots=True)
class Patch:
    """`{"op": "supersede", "id": old, "by": new, "at": ingestion time, "reason": ...}`.

    The superseding record's event_time ends the old one's validity (as_of); `at` says when
    the memory learnt it (known_at).
    """

    id: str  # the record retired
    by: str  # the record that retires it
    at: float
    reason: str = ""
    op: str = "supersede"

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "id": self.id, "by": self.by, "at": self.at, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<patch>") -> Patch:
        if data.get("op") != "supersede":
            raise CorruptFile(where, f"unknown patch op {data.get('op')!r}")
        return cls(
            id=_text(data, "id", where),
            by=_text(data, "by", where),
            at=_number(data, "at", where),
            reason=_text(data, "reason", where, required=False),
        )


@dataclass(frozen=True, slots=True)
class AliasMerge:
    """`{"op": "alias", ...}`: entity `merged` is folded into `into`; undone by an AliasUnmerge."""

    id: str  # record_id("al", into, merged)
    into: str  # the canonical entity id
    merged: str  # the entity id folded into it
    reason: str  # why: "same path under the project", "acronym of ...", "similarity 93", ...
    at: float
    score: float = 1.0
    op: str = "alias"

    @staticmethod
    def make_id(into: str, merged: str) -> str:
        return record_id("al", into, merged)

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "id": self.id,
            "into": self.into,
            "merged": self.merged,
            "reason": self.reason,
            "score": self.score,
            "at": self.at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<alias>") -> AliasMerge:
        return cls(
            id=_text(data, "id", where),
            into=_text(data, "into", where),
            merged=_text(data, "merged", where),
            reason=_text(data, "reason", where, required=False),
            at=_number(data, "at", where),
            score=_number(data, "score", where, 1.0),
        )


@dataclass(frozen=True, slots=True)
class AliasUnmerge:
    """`{"op": "unmerge", "id": <alias record id>, "at": ...}`: `opmem memory unmerge`."""

    id: str
    at: float
    reason: str = ""
    op: str = "unmerge"

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "id": self.id, "at": self.at, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: Any = "<unmerge>") -> AliasUnmerge:
        return cls(
            id=_text(data, "id", where),
            at=_number(data, "at", where),
            reason=_text(data, "reason", where, required=False),
        )


TimelineLine = Event | Patch
EntityLine = Entity | AliasMerge | AliasUnmerge
EdgeLine = Edge | Patch


def parse_timeline_line(data: Mapping[str, Any], where: Any) -> TimelineLine:
    if not isinstance(data, Mapping):
        raise CorruptFile(where, "line is not a JSON object")
    return Patch.from_json(data, where) if "op" in data else Event.from_json(data, where)


def parse_entity_line(data: Mapping[str, Any], where: Any) -> EntityLine:
    if not isinstance(data, Mapping):
        raise CorruptFile(where, "line is not a JSON object")
    op = data.get("op")
    if op is None:
        return Entity.from_json(data, where)
    if op == "alias":
        return AliasMerge.from_json(data, where)
    if op == "unmerge":
        return AliasUnmerge.from_json(data, where)
    raise CorruptFile(where, f"unknown op {op!r}")


def parse_edge_line(data: Mapping[str, Any], where: Any) -> EdgeLine:
    if not isinstance(data, Mapping):
        raise CorruptFile(where, "line is not a JSON object")
    return Patch.from_json(data, where) if "op" in data else Edge.from_json(data, where)
