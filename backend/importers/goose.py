"""Goose (Block): ``~/.local/share/goose/sessions/sessions.db`` (v1.20+; ``$GOOSE_PATH_ROOT``
moves it to ``$GOOSE_PATH_ROOT/data/sessions``) and the older ``*.jsonl`` session files there or
in ``~/.goose/sessions``.

- SQLite: ``sessions`` (``id`` like ``20250102_1``, ``name``, ``user_set_name``,
  ``session_type`` user|sub_agent|scheduled|hidden, ``working_dir``, ``created_at`` text; later
  ``provider_name``, ``model_config_json``) and ``messages`` (``session_id``, ``role``,
  ``content_json``, ``created_timestamp`` in seconds). Nothing else is read.
- JSONL: a first line of session metadata (``working_dir``, ``description``), then one message
  ``{role, created, content}`` a line.

``content``: a list of ``text``, ``toolRequest {id, toolCall {status, value {name, arguments}}}``
(assistant), ``toolResponse {id, toolResult {status, value [content] | {content, isError}}}``
(in user-role messages: they fill their calls, they are no prompt), ``thinking``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .agent_db import open_agent_db, require, snapshot, tables
from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, json_value, session, sqlite_files

SOURCE = "goose"


def goose_sessions_dir() -> Path:
    root = os.environ.get("GOOSE_PATH_ROOT")
    if root:
        return Path(root).expanduser() / "data" / "sessions"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "goose" / "sessions"


def _result_text(result: dict[str, Any]) -> tuple[str, bool]:
    value = result.get("value")
    if isinstance(value, dict):
        return as_text(value.get("content")), bool(value.get("isError"))
    failed = result.get("status") == "error"
    return (as_text(value) if value is not None else as_str(result.get("error"))), failed


def messages_into(b: SessionBuilder, messages: list[tuple[str, str, Any, float]], report: ImportReport) -> None:
    """(source id, role, content list, time) in order -> nodes."""
    calls: dict[str, str] = {}
    results: dict[str, tuple[str, bool]] = {}
    for sid, role, content, when in messages:
        parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
        texts = [as_str(p.get("text")) for p in parts if p.get("type") == "text"]
        if role == "user":
            for p in parts:
                if p.get("type") == "toolResponse":
                    results[as_str(p.get("id"))] = _result_text(as_dict(p.get("toolResult")))
            if any(t.strip() for t in texts):
                b.chain(sid, "user", "\n".join(texts), created_at=when)
            continue
        if role != "assistant":
            report.unknown(f"goose:role:{role}")
            continue
        thinking = "\n".join(as_str(p.get("thinking")) for p in parts if p.get("type") == "thinking")
        owner = b.chain(sid, "assistant", "\n".join(texts), created_at=when, metadata={"thinking": thinking})
        for index, p in enumerate(parts):
            if p.get("type") != "toolRequest":
                continue
            call = as_dict(p.get("toolCall"))
            value = as_dict(call.get("value"))
            call_id = as_str(p.get("id"))
            tid = b.tool(
                call_id or f"{sid}:tool{index}",
                owner,
                as_str(value.get("name")) or "tool",
                value.get("arguments"),
                "",
                created_at=when,
                metadata={"call_id": call_id},
            )
            calls[tid] = call_id
    position = {n.id: i for i, n in enumerate(b.nodes)}
    nodes = []
    for n in b.nodes:
        call_id = calls.get(n.id)
        if call_id in results:
            text, failed = results[call_id]
            n = replace(n, content=text, metadata={**n.metadata, "is_error": True} if failed else n.metadata)
        elif call_id is not None:  # its response not written yet: the call waits with its reply
            owner = position[n.called_by or n.id]
            b.first_open = owner if b.first_open is None else min(b.first_open, owner)
        nodes.append(n)
    b.nodes = nodes


def read_db(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    with open_agent_db(path) as conn:
        found = tables(conn)
        require(
            path,
            found,
            {"sessions": ("id", "working_dir"), "messages": ("session_id", "role", "content_json")},
            "Goose",
        )
        scols = [
            c
            for c in (
                "id",
                "name",
                "description",
                "user_set_name",
                "session_type",
                "working_dir",
                "created_at",
                "provider_name",
                "model_config_json",
                "accumulated_input_tokens",
                "accumulated_output_tokens",
            )
            if c in found["sessions"]
        ]
        time_col = "created_timestamp" if "created_timestamp" in found["messages"] else "NULL"
        mid_col = "message_id" if "message_id" in found["messages"] else "NULL"
        with snapshot(conn):
            srows = [dict(zip(scols, r, strict=True)) for r in conn.execute(f"SELECT {', '.join(scols)} FROM sessions")]
            mrows = conn.execute(
                f"SELECT rowid, {mid_col}, session_id, role, content_json, {time_col} FROM messages ORDER BY rowid"
            ).fetchall()
    by_session: dict[str, list[tuple[str, str, Any, float]]] = {}
    for rowid, mid, sid, role, content, when in mrows:
        value = json_value(content)
        if not isinstance(value, list):
            report.warn(path, None, f"message {rowid} of session {sid}: its content is not a JSON list")
            continue
        by_session.setdefault(str(sid), []).append((as_str(mid) or f"{sid}:{rowid}", role, value, parse_time(when)))
    out = []
    for info in srows:
        sid = str(info["id"])
        b = SessionBuilder()
        messages_into(b, by_session.get(sid, []), report)
        config = as_dict(json_value(info.get("model_config_json")))
        model = as_str(config.get("model_name"))
        title = as_str(info.get("name")) or as_str(info.get("description"))
        extra = {
            "layout": "sqlite",
            "session_type": info.get("session_type"),
            "provider": info.get("provider_name"),
            "created_at": info.get("created_at"),
            # the session's totals (Goose records no per-reply counts): backend/usage/tokens.py
            "token_usage": {
                "input_tokens": info.get("accumulated_input_tokens"),
                "output_tokens": info.get("accumulated_output_tokens"),
            }
            if info.get("accumulated_input_tokens") or info.get("accumulated_output_tokens")
            else None,
        }
        out.append(
            session(
                SOURCE,
                sid,
                path,
                b,
                final=final,
                title=title,
                title_source="user" if info.get("user_set_name") else "llm",
                cwd=as_str(info.get("working_dir")),
                model=model,
                kind="subagent" if info.get("session_type") == "sub_agent" else "trunk",
                extra={k: v for k, v in extra.items() if v},
            )
        )
    return out


def read_jsonl(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    header: dict[str, Any] = {}
    messages: list[tuple[str, str, Any, float]] = []
    for number, record in json_lines(path, report):
        if "role" in record:
            mid = as_str(record.get("id")) or f"{path.stem}:{number}"
            messages.append((mid, as_str(record.get("role")), record.get("content"), parse_time(record.get("created"))))
        elif not header:
            header = record
    b = SessionBuilder()
    messages_into(b, messages, report)
    return [
        session(
            SOURCE,
            path.stem,
            path,
            b,
            final=final,
            title=as_str(header.get("description")),
            cwd=as_str(header.get("working_dir")),
            extra={"layout": "jsonl"},
        )
    ]


class GooseImporter(WholeImporter):
    name = "goose"
    source = SOURCE
    label = "Goose"
    locations = ("$GOOSE_PATH_ROOT/data/sessions", "~/.local/share/goose/sessions", "~/.goose/sessions")
    shape = Shape(
        ("sessions.db", "*.jsonl"),
        records=(("working_dir", "description", "!type"), ("role", "created", "content", "!type")),
        tables=(("sessions", "messages.content_json"),),
    )
    reads = "sessions and messages (text, toolRequest, toolResponse, thinking)"
    looks_for = "sessions.db or *.jsonl session files"

    def default_paths(self) -> list[Path]:
        return [goose_sessions_dir(), Path.home() / ".goose" / "sessions"]

    def is_db(self, path: Path) -> bool:
        return path.suffix == ".db"

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = dict.fromkeys(sqlite_files(paths, ("sessions.db",)))
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".jsonl":
                found[path] = None
            elif path.is_dir():
                found.update(dict.fromkeys(sorted(p for p in path.glob("*.jsonl") if p.is_file())))
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_db(path, report, final=final) if self.is_db(path) else read_jsonl(path, report, final=final)
