"""Factory droid: ``~/.factory/sessions/<cwd slug>/<uuid>.jsonl`` and ``<uuid>.settings.json``.

Session store files: a first line ``{type: session_start, id, title, sessionTitle, cwd, owner,
version}``, then ``{type: message, id, parentId, timestamp, message: {role, content: [text |
tool_use | tool_result]}}`` (Anthropic blocks: a user message of ``tool_result`` blocks fills the
calls; leading ``<system-reminder>`` blocks are injected context) and ``todo_state`` lines. The
``.settings.json`` beside it names the model and the token usage.

The ``stream-json`` output (``droid exec --output-format stream-json`` saved to a file:
``message`` / ``tool_call`` / ``tool_result`` / ``completion`` records with a ``session_id``)
is read too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport, glob_files
from .cline import _Task
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, load_json, session, split_injected

SOURCE = "droid"


def _settings(path: Path, report: ImportReport) -> dict[str, Any]:
    settings = path.with_name(f"{path.stem}.settings.json")
    if not settings.exists():
        return {}
    try:
        return as_dict(load_json(settings))
    except (OSError, ValueError, RecursionError) as exc:
        report.warn(settings, None, f"not readable JSON ({exc})")
        return {}


def read_store(
    path: Path, records: list[tuple[int, dict[str, Any]]], report: ImportReport, final: bool
) -> ImportedSession:
    head: dict[str, Any] = {}
    task = _Task(path, report)
    for number, record in records:
        kind = record.get("type")
        if kind == "session_start":
            head = head or record
        elif kind == "message":
            msg = as_dict(record.get("message"))
            sid = as_str(record.get("id")) or f"{path.stem}:{number}"
            task.message(number, msg, parse_time(record.get("timestamp")), sid=sid)
        elif kind != "todo_state":
            report.unknown(f"droid:{kind or 'untyped'}")
    b = task.finish(final, streaming=False)
    settings = _settings(path, report)
    model = as_str(settings.get("model"))
    title = as_str(head.get("sessionTitle")) or as_str(head.get("title"))
    extra = {
        "layout": "session-store",
        "droid_version": head.get("version"),
        "owner": head.get("owner"),
        "token_usage": settings.get("tokenUsage"),
    }
    native = as_str(head.get("id")) or path.stem
    return session(
        SOURCE,
        native,
        path,
        b,
        final=final,
        title=title,
        cwd=as_str(head.get("cwd")),
        model=model,
        extra={k: v for k, v in extra.items() if v is not None},
    )


def read_stream(
    path: Path, records: list[tuple[int, dict[str, Any]]], report: ImportReport, final: bool
) -> ImportedSession:
    b = SessionBuilder()
    native = ""
    owner: str | None = None
    tools: dict[str, int] = {}
    ended = False
    facts: dict[str, str] = {}
    for number, record in records:
        native = native or as_str(record.get("session_id")) or as_str(record.get("sessionId"))
        kind = record.get("type")
        sid = f"{path.stem}:{number}"
        when = parse_time(record.get("timestamp"))
        if kind == "message":
            if record.get("role") == "user":
                added, said = split_injected(as_str(record.get("text")))
                b.chain(as_str(record.get("id")) or sid, "user", said, created_at=when)
                if added:
                    b.chain(f"{sid}:context", "system", added, created_at=when, metadata={"injected": True})
                owner = None
            else:
                owner = b.chain(sid, "assistant", as_str(record.get("text")), created_at=when)
        elif kind == "tool_call":
            if owner is None:
                owner = b.chain(f"{sid}:reply", "assistant", "", created_at=when)
            call_id = as_str(record.get("toolCallId")) or as_str(record.get("id"))
            b.tool(
                call_id or sid,
                owner,
                as_str(record.get("toolName")) or "tool",
                record.get("parameters"),
                "",
                created_at=when,
                metadata={"call_id": call_id},
            )
            tools[call_id] = len(b.nodes) - 1
        elif kind == "tool_result":
            at = tools.get(as_str(record.get("toolCallId")) or as_str(record.get("id")))
            if at is not None:
                value = as_dict(record.get("value"))
                text = as_str(value.get("stdout")) if value else as_text(record.get("value"))
                node = b.nodes[at]
                meta = {**node.metadata, "exit": value.get("exitCode"), "is_error": record.get("isError") or None}
                b.nodes[at] = replace(node, content=text, metadata={k: v for k, v in meta.items() if v is not None})
        elif kind == "completion":
            b.chain(as_str(record.get("id")) or sid, "assistant", as_str(record.get("finalText")), created_at=when)
            ended = True
        elif kind == "system":
            facts.update({k: record[k] for k in ("model", "cwd") if isinstance(record.get(k), str)})
        elif kind == "error":
            b.chain(sid, "system", as_str(record.get("message")), created_at=when, metadata={"event": "error"})
        else:
            report.unknown(f"droid:stream:{kind or 'untyped'}")
    if not final and not ended:  # no completion yet: the reply under way waits
        last_user = max((i for i, n in enumerate(b.nodes) if n.role == "user"), default=-1)
        if last_user + 1 < len(b.nodes):
            b.first_open = last_user + 1
    return session(
        SOURCE,
        native or path.stem,
        path,
        b,
        final=final,
        cwd=facts.get("cwd", ""),
        model=facts.get("model", ""),
        extra={"layout": "stream-json"},
    )


def read_file(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    records = list(json_lines(path, report))
    if not records:
        return []
    stream = any(
        ("session_id" in r or "sessionId" in r) and "message" not in r and r.get("type") != "session_start"
        for _, r in records
    )
    return [read_stream(path, records, report, final) if stream else read_store(path, records, report, final)]


class DroidImporter(WholeImporter):
    name = "droid"
    source = SOURCE
    label = "Factory droid"
    locations = ("~/.factory/sessions/<cwd slug>",)
    shape = Shape(
        ("*.jsonl",),
        records=(
            ("type=session_start", "owner"),
            ("type=session_start", "cwd", "version"),
            ("type=message", "role", "text", "session_id"),
            ("type=message", "role", "text", "sessionId"),
        ),
        also=("<uuid>.settings.json",),
    )
    reads = "session_start, messages (text, tool_use, tool_result), todo_state; stream-json output"
    looks_for = "sessions/<cwd slug>/<uuid>.jsonl"

    def default_paths(self) -> list[Path]:
        return [Path.home() / ".factory" / "sessions"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return glob_files(paths, ("*.jsonl", "*/*.jsonl"))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_file(path, report, final=final)
