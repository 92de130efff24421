"""Zed's agent threads: ``<Zed data dir>/threads/threads.db`` (``~/.local/share/zed`` or
``$XDG_DATA_HOME/zed`` on Linux, ``~/Library/Application Support/Zed`` on macOS).

One SQLite table, ``threads (id TEXT PRIMARY KEY, summary TEXT, updated_at TEXT (RFC 3339),
data_type TEXT (json | zstd), data BLOB)``; ``data`` is a thread's JSON, zstd-compressed when
``data_type`` is ``zstd`` (what Zed writes). A thread of version ``0.3.0`` is ``{title, messages,
updated_at, detailed_summary, initial_project_snapshot {worktree_snapshots [{worktree_path,
git_state {current_branch}}]}, model {provider, model}, version}``; a message is serde's externally
tagged enum: ``{User: {id, content: [{Text: text} | {Mention: {uri, content}} | {Image: ...}]}}``,
``{Agent: {content: [{Text: text} | {Thinking: {text, signature}} | {RedactedThinking: data} |
{ToolUse: {id, name, input, raw_input}}], tool_results: {tool use id: {tool_use_id, tool_name,
is_error, content, output}}}}`` or ``Resume`` (``{Resume: id}`` in newer files). Older threads
(the first agent, no version) are ``{summary, updated_at, messages: [{id, role, segments
[{type: text | thinking | redacted_thinking, text}], tool_uses [{id, name, input}],
tool_results [{tool_use_id, is_error, content}], context}]}``; Zed upgrades them on load, and so
does this reader. Later Zed adds columns: ``parent_id`` (a subagent's thread names its parent's),
``folder_paths`` (the thread's folders, one a line: the first is the session's folder) and
``created_at``. Messages carry no time: the first is dated ``created_at`` when the row has one,
the last ``updated_at``, the rest the time before them.
Checked against the agent's source, zed-industries/zed: crates/agent/src/db.rs at 3991ce8
(``ThreadsDatabase``, ``DbThread``, ``upgrade_from_agent_1``, ``save_thread_sync``) and the
``Message`` / ``AgentMessageContent`` enums of crates/agent/src/thread.rs; the data dir from
crates/paths/src/paths.rs at 010c9b6 (``$FLATPAK_XDG_DATA_HOME`` or the XDG data dir, + ``zed``;
``~/Library/Application Support/Zed`` on macOS); the later columns from a newer db.rs
(``ALTER TABLE threads ADD COLUMN parent_id | folder_paths | created_at``). Also checked against a
second reader, kenn-io/agentsview internal/parser/zed.go and zed_paths.go at 5386007.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import zstandard

from .agent_db import column, open_agent_db, require, snapshot, tables
from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, session, sqlite_files

MAX_THREAD = 256 << 20  # a thread's JSON is never near this: a larger one is not decompressed


def zed_data_dirs() -> list[Path]:
    if sys.platform == "darwin":
        return [Path.home() / "Library" / "Application Support" / "Zed"]
    data = os.environ.get("FLATPAK_XDG_DATA_HOME") or os.environ.get("XDG_DATA_HOME")
    return [Path(data).expanduser() / "zed" if data else Path.home() / ".local" / "share" / "zed"]


def read_threads(path: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    with open_agent_db(path) as conn:
        found = tables(conn)
        require(path, found, {"threads": ("id", "updated_at", "data_type", "data")}, "Zed")
        extra = ", ".join(column(found, "threads", c) for c in ("created_at", "parent_id", "folder_paths"))
        with snapshot(conn):
            rows = list(
                conn.execute(f"SELECT id, updated_at, data_type, data, {extra} FROM threads ORDER BY updated_at")
            )
    out = []
    for tid, updated, data_type, data, created, parent, folders in rows:
        try:
            raw = _decompress(data) if data_type == "zstd" else bytes(data)
            thread = as_dict(json.loads(raw))
        except (zstandard.ZstdError, ValueError, TypeError) as exc:
            report.warn(path, None, f"thread {tid}: cannot be read ({exc}); skipped")
            continue
        row = _Row(str(tid), parse_time(updated), parse_time(created), as_str(parent), as_str(folders))
        made = _thread(row, thread, path, report, source)
        if made is not None:
            out.append(made)
    return out


def _decompress(data: bytes) -> bytes:
    with zstandard.ZstdDecompressor().stream_reader(bytes(data)) as reader:
        raw = reader.read(MAX_THREAD + 1)
    if len(raw) > MAX_THREAD:
        raise ValueError("larger than 256 MiB")
    return raw


@dataclass(frozen=True, slots=True)
class _Row:
    """A threads row's own columns (parent_id, folder_paths and created_at are later additions)."""

    tid: str
    updated: float
    created: float
    parent: str
    folders: str


def _thread(row: _Row, thread: dict[str, Any], path: Path, report: ImportReport, source: str) -> ImportedSession | None:
    tid = row.tid
    when = parse_time(thread.get("updated_at")) or row.updated
    model = as_dict(thread.get("model"))
    name = as_str(model.get("model")) or None
    b = SessionBuilder()
    messages = [m for m in thread.get("messages") or [] if m]
    legacy = not isinstance(thread.get("version"), str) or any("role" in as_dict(m) for m in messages)
    for index, message in enumerate(messages):
        sid = f"{tid}:{index}"
        if legacy:
            _legacy(b, sid, as_dict(message), when, name, report)
        elif isinstance(message, dict) and "User" in message:
            user = as_dict(message["User"])
            b.chain(as_str(user.get("id")) or sid, "user", _user_text(user.get("content")), created_at=when)
        elif isinstance(message, dict) and "Agent" in message:
            _agent(b, sid, as_dict(message["Agent"]), when, name)
        elif message == "Resume" or (isinstance(message, dict) and "Resume" in message):
            continue  # the user told the agent to go on: no text of its own
        else:
            report.unknown(f"zed:{next(iter(message), '?') if isinstance(message, dict) else message}")
    if not b.nodes:
        return None
    _date(b, row.created, when)
    worktrees = as_dict(thread.get("initial_project_snapshot")).get("worktree_snapshots") or []
    first = as_dict(worktrees[0]) if worktrees else {}
    return session(
        source,
        tid,
        path,
        b,
        final=True,
        title=as_str(thread.get("title")) or as_str(thread.get("summary")),
        cwd=_first_folder(row.folders) or as_str(first.get("worktree_path")),
        model=name or "",
        git_branch=as_str(as_dict(first.get("git_state")).get("current_branch")),
        kind="subagent" if row.parent else "trunk",
        parent_native_id=row.parent or None,
        extra={"layout": "threads.db"},
    )


def _date(b: SessionBuilder, created: float, updated: float) -> None:
    """Messages carry no time: the first is dated the row's created_at (when it has one), the last
    updated_at, and those between take the time before them."""
    if not created or created >= updated:
        return
    chain = [i for i, n in enumerate(b.nodes) if n.called_by is None]
    last = chain[-1]
    b.nodes = [
        replace(n, created_at=created if i == chain[0] else updated if i >= last else 0.0)
        for i, n in enumerate(b.nodes)
    ]


def _first_folder(paths: str) -> str:
    """folder_paths holds the thread's folders one a line."""
    return paths.replace("\x00", "\n").strip().split("\n", 1)[0].strip() if paths.strip() else ""


def _user_text(content: Any) -> str:
    parts = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and "Text" in item:
            parts.append(as_str(item["Text"]))
        elif isinstance(item, dict) and "Mention" in item:
            mention = as_dict(item["Mention"])
            parts.append(as_str(mention.get("content")) or as_str(mention.get("uri")))
    return "\n".join(p for p in parts if p)


def _result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, dict) and "Text" in content:
        return as_str(content["Text"])
    return as_str(content) or as_text(content) or as_text(result.get("output"))


def _agent(b: SessionBuilder, sid: str, agent: dict[str, Any], when: float, name: str | None) -> None:
    texts, thinking, uses = [], [], []
    for item in agent.get("content") or []:
        if not isinstance(item, dict):
            continue
        if "Text" in item:
            texts.append(as_str(item["Text"]))
        elif "Thinking" in item:
            thinking.append(as_str(as_dict(item["Thinking"]).get("text")))
        elif "ToolUse" in item:
            uses.append(as_dict(item["ToolUse"]))
    owner = b.chain(
        sid, "assistant", "".join(texts), name=name, created_at=when, metadata={"thinking": "".join(thinking)}
    )
    results = as_dict(agent.get("tool_results"))
    for n, use in enumerate(uses):
        use_id = as_str(use.get("id"))
        result = as_dict(results.get(use_id))
        b.tool(
            f"{sid}:tool{n}",
            owner,
            as_str(use.get("name")) or as_str(result.get("tool_name")) or "tool",
            use.get("input") if use.get("input") is not None else use.get("raw_input"),
            _result_text(result),
            created_at=when,
            metadata={"call_id": use_id, "is_error": bool(result.get("is_error")) or None},
        )


def _legacy(
    b: SessionBuilder, sid: str, message: dict[str, Any], when: float, name: str | None, report: ImportReport
) -> None:
    role = as_str(message.get("role"))
    segments = [as_dict(s) for s in message.get("segments") or []]
    text = "".join(as_str(s.get("text")) for s in segments if s.get("type") == "text")
    mid = f"{sid.rsplit(':', 1)[0]}:m{message['id']}" if isinstance(message.get("id"), int) else sid
    if role == "user":
        b.chain(mid, "user", text or as_str(message.get("context")), created_at=when)
        return
    if role != "assistant":
        report.unknown(f"zed:legacy:{role}")
        return
    thinking = "".join(as_str(s.get("text")) for s in segments if s.get("type") == "thinking")
    owner = b.chain(mid, "assistant", text, name=name, created_at=when, metadata={"thinking": thinking})
    results = {as_str(r.get("tool_use_id")): r for r in (as_dict(x) for x in message.get("tool_results") or [])}
    for n, use in enumerate(as_dict(x) for x in message.get("tool_uses") or []):
        result = results.get(as_str(use.get("id")), {})
        b.tool(
            f"{mid}:tool{n}",
            owner,
            as_str(use.get("name")) or "tool",
            use.get("input"),
            _result_text(result),
            created_at=when,
            metadata={"call_id": as_str(use.get("id")), "is_error": bool(result.get("is_error")) or None},
        )


class ZedImporter(WholeImporter):
    name = "zed"
    source = "zed"
    label = "Zed agent"
    locations = (
        "$XDG_DATA_HOME/zed/threads/threads.db",
        "~/.local/share/zed/threads/threads.db",
        "~/Library/Application Support/Zed/threads/threads.db",
    )
    shape = Shape(("threads.db",), tables=(("threads.data_type",),))
    reads = "agent threads (zstd JSON): user messages, agent text, thinking, tool uses with their results"
    looks_for = "threads/threads.db"

    def default_paths(self) -> list[Path]:
        return [d / "threads" for d in zed_data_dirs()]

    def is_db(self, path: Path) -> bool:
        return True

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return sqlite_files(paths, ("threads.db", "threads/threads.db"))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_threads(path, report, self.source)
