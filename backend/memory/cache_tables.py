"""The memory cache's tables (cache.py fills and folds them, readonly.py reads them): the schema,
its version, and the row each record kind is stored as."""

from __future__ import annotations

import json

from .records import (
    AliasMerge,
    AliasUnmerge,
    Edge,
    Entity,
    Event,
    entity_key,
)
from .temporal import pack_ids

SCHEMA_VERSION = "5"

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(name TEXT PRIMARY KEY, offset INTEGER, lines INTEGER, size INTEGER,
                   mtime_ns INTEGER, ino INTEGER, fp TEXT, torn INTEGER);
CREATE TABLE problems(path TEXT, line INTEGER, message TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, t REAL, it REAL, kind TEXT,
                    importance REAL, scope TEXT, summary TEXT, entities TEXT, project TEXT,
                    session TEXT, nodes TEXT, turn INTEGER, commit_ TEXT,
                    key TEXT, sup_t REAL, sup_by TEXT, sup_reason TEXT);
CREATE INDEX events_t ON events(t);
CREATE INDEX events_scope ON events(scope, t);
CREATE INDEX events_key ON events(key) WHERE key != '';
CREATE INDEX events_sup ON events(t) WHERE sup_t IS NOT NULL;
CREATE TABLE mentions(entity TEXT, seq INTEGER);
CREATE INDEX mentions_entity ON mentions(entity, seq);
CREATE TABLE edges(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, src TEXT, dst TEXT, relation TEXT,
                   t REAL, it REAL, confidence REAL, scope TEXT, project TEXT, session TEXT,
                   nodes TEXT, turn INTEGER, commit_ TEXT, sup_t REAL, sup_by TEXT, sup_reason TEXT);
CREATE INDEX edges_src ON edges(src, t);
CREATE INDEX edges_scope ON edges(scope, t);
CREATE INDEX edges_relation ON edges(relation, src);
CREATE TABLE adj(node TEXT, t REAL, seq INTEGER, id TEXT, src TEXT, dst TEXT, relation TEXT, it REAL,
                 confidence REAL, scope TEXT, project TEXT, session TEXT, nodes TEXT, turn INTEGER,
                 commit_ TEXT, sup_t REAL, sup_by TEXT, sup_reason TEXT,
                 PRIMARY KEY(node, t, seq)) WITHOUT ROWID;
CREATE TABLE entities(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT, name TEXT,
                      scope TEXT, it REAL, data TEXT);
CREATE TABLE names(key TEXT, entity TEXT, UNIQUE(key, entity));
CREATE TABLE patches(seq INTEGER PRIMARY KEY, kind TEXT, id TEXT, by TEXT, at REAL, reason TEXT,
                     path TEXT, line INTEGER, UNIQUE(kind, id, by));
CREATE INDEX patches_by ON patches(kind, by);
CREATE TABLE aliases(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, into_ TEXT, merged TEXT,
                     reason TEXT, score REAL, at REAL, path TEXT, line INTEGER);
CREATE TABLE unmerges(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, at REAL, reason TEXT,
                      path TEXT, line INTEGER);
"""
INDEXES = [(statement.split()[2], statement.strip()) for statement in SCHEMA.split(";") if "CREATE INDEX" in statement]
# The adjacency table holds each edge once per end (`node`), clustered by (node, t, seq) with every
# column an answer needs: a neighbourhood walks one b-tree range newest first and stops when full.
ADJ_COLUMNS = (
    "t, seq, id, src, dst, relation, it, confidence, scope, project, session, nodes, turn, commit_,"
    " sup_t, sup_by, sup_reason"
)
ADJ_FILL = (
    f"INSERT OR IGNORE INTO adj SELECT src, {ADJ_COLUMNS} FROM edges WHERE {{where}}"
    f" UNION ALL SELECT dst, {ADJ_COLUMNS} FROM edges WHERE {{where}}"
)
ADJ_SUP = "UPDATE adj SET sup_t = ?, sup_by = ?, sup_reason = ? WHERE node = ? AND t = ? AND seq = ?"
MAX_SEQ = 2**63 - 1  # SQLite's largest rowid: at it, new rowids are picked at random
DATA_TABLES = ("problems", "events", "mentions", "edges", "adj", "entities", "names", "patches", "aliases", "unmerges")
RECORD_TABLE = {"event": "events", "edge": "edges"}
TABLE_OF = {Event: "events", Edge: "edges", Entity: "entities", AliasMerge: "aliases", AliasUnmerge: "unmerges"}


def event_row(record: Event) -> tuple:
    p = record.provenance
    return (
        record.id,
        p.event_time,
        p.ingestion_time,
        record.kind,
        record.importance,
        record.scope,
        record.summary,
        pack_ids(record.entities),
        p.project_id,
        p.session_id,
        pack_ids(p.node_ids),
        p.turn,
        p.commit,
        record.key,
    )


def edge_row(record: Edge) -> tuple:
    p = record.provenance
    return (
        record.id,
        record.from_id,
        record.to_id,
        record.relation,
        p.event_time,
        p.ingestion_time,
        record.confidence,
        record.scope,
        p.project_id,
        p.session_id,
        pack_ids(p.node_ids),
        p.turn,
        p.commit,
    )


def entity_row(record: Entity) -> tuple:
    it = record.provenance.ingestion_time if record.provenance else 0.0
    return (record.id, record.type, record.name, record.scope, it, json.dumps(record.to_json(), ensure_ascii=False))


def name_keys(record: Entity) -> list[str]:
    return sorted({entity_key(record.name), *(entity_key(a) for a in record.aliases)} - {""})


ROW_SQL: dict[type, str] = {
    Event: "INSERT OR IGNORE INTO events(id, t, it, kind, importance, scope, summary, entities, project,"
    " session, nodes, turn, commit_, key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    Edge: "INSERT OR IGNORE INTO edges(id, src, dst, relation, t, it, confidence, scope, project, session,"
    " nodes, turn, commit_) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    Entity: "INSERT OR IGNORE INTO entities(id, type, name, scope, it, data) VALUES (?,?,?,?,?,?)",
}
ROW_OF = {Event: event_row, Edge: edge_row, Entity: entity_row}
