"""The memory logs (timeline, entities, edges) into the search index, each read from where it stopped.

Each log has a cursor: the byte offset after its last complete line and the file's identity.
Only whole lines are read (a torn tail waits for its newline); a line that does not parse is
skipped here (the memory store reports it with file:line). A log that shrank or was replaced is
read again from the start, after the rows it gave are dropped.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import CorruptFile
from .index import KIND_EDGE, KIND_ENTITY, KIND_EVENT, RecordRow, SearchIndex
from .records import (
    AliasMerge,
    AliasUnmerge,
    Edge,
    Entity,
    Event,
    Patch,
    entity_key,
    parse_edge_line,
    parse_entity_line,
    parse_timeline_line,
)

_SLUG_HASH = re.compile(r"-?[0-9a-f]{8}$")
Parser = Callable[[Any, Any], Any]
# (session id, scope) -> True when the record stays out of the index (a private session, an
# excluded project: backend/privacy/exclusions.py).
RecordFilter = Callable[[str, str], bool]


def log_files(memory_dir: Path) -> list[tuple[str, Parser]]:
    """(path relative to memory/, line parser) of every log, entities before edges before events."""
    out: list[tuple[str, Parser]] = []
    graph = memory_dir / "graph"
    if (graph / "entities.jsonl").is_file():
        out.append(("graph/entities.jsonl", parse_entity_line))
    if (graph / "edges.jsonl").is_file():
        out.append(("graph/edges.jsonl", parse_edge_line))
    timeline = memory_dir / "timeline"
    if timeline.is_dir():
        for item in sorted(timeline.glob("*.jsonl")):
            out.append((f"timeline/{item.name}", parse_timeline_line))
    return out


def entity_words(entity_id: str) -> str:
    """Readable words from an entity id (`person.caroline-1a2b3c4d` -> `caroline (person)`)."""
    kind, _, slug = entity_id.partition(".")
    if not slug:
        return entity_id
    words = _SLUG_HASH.sub("", slug).replace("-", " ").strip()
    return f"{words} ({kind})" if words else f"({kind})"


def edge_sentence(edge: Edge) -> str:
    return f"{entity_words(edge.from_id)} {edge.relation.replace('-', ' ')} {entity_words(edge.to_id)}"


def update_records(
    index: SearchIndex, memory_dir: Path, problems: list[str], hidden: RecordFilter | None = None
) -> int:
    """Read what the logs gained since their cursors; returns the number of lines applied."""
    applied = 0
    for rel, parser in log_files(memory_dir):
        path = memory_dir / rel
        try:
            st = os.stat(path)
        except OSError:
            continue
        ident = f"{st.st_ino}.{st.st_dev}"
        with index.write() as db:
            offset, known = index.log_cursor(db, rel)
            if (known and known != ident) or st.st_size < offset:
                index.forget_log(db, rel)
                offset = 0
            if st.st_size == offset:
                continue
            try:
                with open(path, "rb") as handle:
                    handle.seek(offset)
                    data = handle.read(st.st_size - offset)
            except OSError as exc:
                problems.append(f"{path}: cannot read ({exc.strerror or exc})")
                continue
            end = data.rfind(b"\n")
            if end < 0:
                continue  # only a torn or unfinished line so far
            for raw in data[: end + 1].splitlines():
                if raw.strip() and _apply_line(index, db, rel, raw, parser, hidden):
                    applied += 1
            index.set_log_cursor(db, rel, offset + end + 1, ident)
    return applied


def reindex_sessions(
    index: SearchIndex,
    memory_dir: Path,
    sessions: set[str],
    scopes: set[str],
    problems: list[str],
    hidden: RecordFilter | None = None,
) -> int:
    """The records of these sessions (and of session-less records in these scopes) read again from
    the logs up to each log's cursor: they were kept out while the sessions were excluded."""
    applied = 0
    for rel, parser in log_files(memory_dir):
        path = memory_dir / rel
        with index.write() as db:
            offset, _ = index.log_cursor(db, rel)
            if offset <= 0:
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read(offset)
            except OSError as exc:
                problems.append(f"{path}: cannot read ({exc.strerror or exc})")
                continue
            for raw in data.splitlines():
                if not raw.strip():
                    continue
                try:
                    record = parser(json.loads(raw), rel)
                except (ValueError, RecursionError, CorruptFile):
                    continue
                if not isinstance(record, Event | Entity | Edge):
                    continue
                prov = record.provenance
                sid = prov.session_id if prov is not None else ""
                if not (sid in sessions or (not sid and record.scope in scopes)):
                    continue
                if _apply_line(index, db, rel, raw, parser, hidden, record):
                    applied += 1
    return applied


def _apply_line(
    index: SearchIndex,
    db: sqlite3.Connection,
    rel: str,
    raw: bytes,
    parser: Parser,
    hidden: RecordFilter | None = None,
    record: Any = None,
) -> bool:
    if record is None:
        try:
            record = parser(json.loads(raw), rel)
        except (ValueError, RecursionError, CorruptFile):
            return False
    if hidden is not None and isinstance(record, Event | Entity | Edge):
        prov = record.provenance
        if hidden(prov.session_id if prov is not None else "", record.scope):
            return True  # read, and kept out: the line counts as applied
    if isinstance(record, Patch):
        index.supersede(db, record.id, record.by)
    elif isinstance(record, AliasMerge):
        index.set_alias(db, record.id, record.into, record.merged)
    elif isinstance(record, AliasUnmerge):
        index.unset_alias(db, record.id)
    elif isinstance(record, Event):
        index.add_record(db, _event_row(record, rel))
    elif isinstance(record, Entity):
        index.add_record(db, _entity_row(record, rel))
    elif isinstance(record, Edge):
        index.add_record(db, _edge_row(record, rel))
    else:
        return False
    return True


def _event_row(event: Event, rel: str) -> RecordRow:
    prov = event.provenance
    return RecordRow(
        record_id=event.id,
        kind=KIND_EVENT,
        session_id=prov.session_id,
        node_ids=prov.node_ids,
        turn=prov.turn,
        commit=prov.commit,
        time=prov.event_time,
        scope=event.scope,
        body=f"{event.summary} {' '.join(entity_words(e) for e in event.entities)}".strip(),
        entities=event.entities,
        source=rel,
    )


def _entity_row(entity: Entity, rel: str) -> RecordRow:
    prov = entity.provenance
    names = tuple(dict.fromkeys(entity_key(n) for n in (entity.name, *entity.aliases) if n.strip()))
    return RecordRow(
        record_id=entity.id,
        kind=KIND_ENTITY,
        session_id=prov.session_id if prov else "",
        node_ids=prov.node_ids if prov else (),
        turn=prov.turn if prov else None,
        commit=prov.commit if prov else None,
        time=prov.event_time if prov else 0.0,
        scope=entity.scope,
        body=" ".join((entity.name, *entity.aliases, f"({entity.type})")),
        entities=(entity.id,),
        source=rel,
        names=names,
    )


def _edge_row(edge: Edge, rel: str) -> RecordRow:
    prov = edge.provenance
    return RecordRow(
        record_id=edge.id,
        kind=KIND_EDGE,
        session_id=prov.session_id,
        node_ids=prov.node_ids,
        turn=prov.turn,
        commit=prov.commit,
        time=edge.event_time,
        scope=edge.scope,
        body=edge_sentence(edge),
        entities=(edge.from_id, edge.to_id),
        source=rel,
    )
