"""Crush (charmbracelet/crush) and the old Go OpenCode: a SQLite database per project.

Where: ``<project>/.crush/crush.db`` (old OpenCode: ``<project>/.opencode/opencode.db``), found
by walking up from the working folder; the project is the folder holding ``.crush/``.

Tables ``sessions`` (``id``, ``parent_session_id``, ``title``, ``created_at`` ...) and
``messages`` (``id``, ``session_id``, ``role`` user|assistant|system|tool, ``parts`` JSON,
``model``, ``created_at``, ``finished_at``); ``files`` (file snapshots) and the rest are never
read. ``parts``: ``[{type, data}]`` with ``text``, ``reasoning``, ``tool_call {id, name, input
(JSON text), finished}``, ``tool_result {tool_call_id, content, metadata, is_error}`` (in
``role = tool`` messages, filling their calls), ``finish {reason, time}``. A sub-agent's session
is created with the id of the ``agent`` tool call that started it and names its parent in
``parent_session_id``. While Crush writes, an assistant message without ``finished_at`` (or a
call without its result) is held back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .agent_db import is_sqlite, open_agent_db, require, snapshot, tables
from .base import ImportedSession, ImportReport
from .record_values import parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_value, session

SOURCE = "crush"
DB_NAMES = (".crush/crush.db", ".opencode/opencode.db")
PLACEHOLDER_TITLES = frozenset({"New Session", "New Agent Session"})  # before Crush names a session


def _messages_into(b: SessionBuilder, rows: list[dict[str, Any]], path: Path, report: ImportReport) -> None:
    results: dict[str, tuple[str, bool]] = {}
    tools: dict[str, str] = {}
    for row in rows:
        parts = json_value(row.get("parts"))
        if not isinstance(parts, list):
            report.warn(path, None, f"message {row['id']}: its parts are not a JSON list")
            continue
        parts = [p for p in parts if isinstance(p, dict)]
        role = row.get("role")
        when = parse_time(row.get("created_at"))
        data = [(p.get("type"), as_dict(p.get("data"))) for p in parts]
        if role == "tool":
            for kind, d in data:
                if kind == "tool_result":
                    results[as_str(d.get("tool_call_id"))] = (as_str(d.get("content")), bool(d.get("is_error")))
            continue
        text = "\n".join(as_str(d.get("text")) for kind, d in data if kind == "text")
        if role in ("user", "system"):
            b.chain(row["id"], role, text, created_at=when)
            continue
        if role != "assistant":
            report.unknown(f"crush:role:{role}")
            continue
        thinking = "\n".join(as_str(d.get("thinking")) for kind, d in data if kind == "reasoning")
        finish = next((d for kind, d in data if kind == "finish"), {})
        finished = row.get("finished_at") or finish.get("time")
        meta = {
            "thinking": thinking,
            "finish": finish.get("reason"),
            "provider": row.get("provider"),
            "summary": bool(row.get("is_summary_message")) or None,
        }
        owner = b.chain(
            row["id"],
            "assistant",
            text,
            name=as_str(row.get("model")) or None,
            created_at=when,
            metadata=meta,
            done=bool(finished),
        )
        for index, (kind, d) in enumerate(data):
            if kind != "tool_call":
                continue
            call_id = as_str(d.get("id"))
            raw = d.get("input")
            args = json_value(raw) if isinstance(raw, str) else raw
            tid = b.tool(
                call_id or f"{row['id']}:tool{index}",
                owner,
                as_str(d.get("name")) or "tool",
                args if args is not None else raw,
                "",
                created_at=when,
                metadata={"call_id": call_id},
                done=d.get("finished") is not False,
            )
            tools[tid] = call_id
    position = {n.id: i for i, n in enumerate(b.nodes)}
    nodes = []
    for n in b.nodes:
        call_id = tools.get(n.id)
        if call_id in results:
            text, error = results[call_id]
            n = replace(n, content=text, metadata={**n.metadata, "is_error": True} if error else n.metadata)
        elif call_id is not None:  # no result yet: the call waits, with the reply that made it
            owner = position[n.called_by or n.id]
            b.first_open = owner if b.first_open is None else min(b.first_open, owner)
        nodes.append(n)
    b.nodes = nodes


def read_db(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    with open_agent_db(path) as conn:
        found = tables(conn)
        require(path, found, {"sessions": ("id", "title"), "messages": ("id", "session_id", "role", "parts")}, "Crush")
        scols = [
            c
            for c in (
                "id",
                "parent_session_id",
                "title",
                "created_at",
                "updated_at",
                "cost",
                "prompt_tokens",
                "completion_tokens",
            )
            if c in found["sessions"]
        ]
        mcols = [
            c
            for c in (
                "id",
                "session_id",
                "role",
                "parts",
                "model",
                "provider",
                "is_summary_message",
                "created_at",
                "finished_at",
            )
            if c in found["messages"]
        ]
        order = "created_at, rowid" if "created_at" in found["messages"] else "rowid"
        with snapshot(conn):
            srows = [dict(zip(scols, r, strict=True)) for r in conn.execute(f"SELECT {', '.join(scols)} FROM sessions")]
            mrows = [
                dict(zip(mcols, r, strict=True))
                for r in conn.execute(f"SELECT {', '.join(mcols)} FROM messages ORDER BY {order}")
            ]
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in mrows:
        by_session.setdefault(str(row["session_id"]), []).append(row)
    project = path.parent.parent
    layout = "crush" if path.parent.name == ".crush" else "opencode-go"
    out = []
    for info in sorted(srows, key=lambda r: (r.get("parent_session_id") is not None, str(r["id"]))):
        b = SessionBuilder()
        sid = str(info["id"])
        _messages_into(b, by_session.get(sid, []), path, report)
        parent = as_str(info.get("parent_session_id")) or None
        extra = {
            "layout": layout,
            "cost": info.get("cost"),
            "prompt_tokens": info.get("prompt_tokens"),
            "completion_tokens": info.get("completion_tokens"),
        }
        out.append(
            session(
                SOURCE,
                sid,
                path,
                b,
                final=final,
                title="" if as_str(info.get("title")) in PLACEHOLDER_TITLES else as_str(info.get("title")),
                cwd=str(project),
                kind="subagent" if parent else "trunk",
                parent_native_id=parent,
                parent_node=sid if parent else None,  # the agent tool call that made it
                extra={k: v for k, v in extra.items() if v is not None},
            )
        )
    return out


class CrushImporter(WholeImporter):
    name = "crush"
    source = SOURCE
    label = "Crush"
    locations = ("<project>/.crush/crush.db", "<project>/.opencode/opencode.db")
    shape = Shape(("crush.db", "opencode.db"), tables=(("sessions", "messages.parts"),))
    reads = "sessions and messages (text, reasoning, tool_call, tool_result, finish parts)"
    looks_for = ".crush/crush.db or .opencode/opencode.db in a project folder"

    def default_paths(self) -> list[Path]:
        """The working folder and the folders above it (Crush keeps its database in the project)."""
        here = Path.cwd()
        return [folder / name for folder in (here, *here.parents) for name in DB_NAMES if (folder / name).is_file()]

    def is_db(self, path: Path) -> bool:
        return path.suffix == ".db"

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            candidates = [path] if path.is_file() else [path / name for name in (*DB_NAMES, "crush.db", "opencode.db")]
            for item in candidates:
                if item.is_file() and is_sqlite(item) and (item.parent.name in (".crush", ".opencode") or item == path):
                    found[item] = None
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_db(path, report, final=final)
