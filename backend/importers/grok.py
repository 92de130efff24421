"""Grok Build (xAI's coding agent): ``~/.grok/sessions/<url-encoded cwd>/<session id>/``.

``chat_history.jsonl`` holds one item a line: ``{type: system | user | assistant | reasoning |
tool_result | backend_tool_call, ...}``; a user item's ``content`` is text or ``[{type: text,
text}]`` (one with ``synthetic_reason`` was added by the agent: a system note), an assistant
item has ``content``, ``tool_calls [{id, name, arguments (JSON text)}]`` and ``model_id``, a
``tool_result`` answers ``tool_call_id``, a ``backend_tool_call`` (web search run by the model
provider) is a tool of its own. Items carry no time: ``summary.json`` (``{info {id, cwd},
created_at, updated_at, generated_title, session_summary, current_model_id, head_branch,
parent_session_id, title_is_manual}``) dates the first and the last. Checked against kenn-io/agentsview
internal/parser/grok.go and its testdata generated from xai-org/grok-build 7cfcb20 (5386007), and
against the agent's own source, xai-org/grok-build at 19d42e3:
crates/codegen/xai-grok-shell/src/session/persistence.rs (``Summary``: a ``/rename``d title is
``title_is_manual``) and session/storage/mod.rs. Not read yet: ``updates.jsonl`` beside it, the
complete log (``{timestamp (s), method, params {update}}`` ACP session updates; the chat history
is pruned at compaction, the updates are not).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import (
    SessionBuilder,
    WholeImporter,
    as_dict,
    as_str,
    folder_stamp,
    json_lines,
    load_json,
    session,
    session_folders,
)

HISTORY = "chat_history.jsonl"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(as_str(as_dict(x).get("text")) for x in content if as_dict(x).get("type") == "text")
    return as_str(content) or as_text(content)


def read_session(folder: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    summary = as_dict(load_json(folder / "summary.json")) if (folder / "summary.json").exists() else {}
    items = list(json_lines(folder / HISTORY, report))
    b = SessionBuilder()
    calls: dict[str, str] = {}
    owner: str | None = None
    thinking: list[str] = []
    for index, (number, item) in enumerate(items):
        kind = as_str(item.get("type"))
        sid = f"{folder.name}:{number}"
        when = parse_time(summary.get("created_at")) if index == 0 else 0.0
        if index == len(items) - 1:
            when = parse_time(summary.get("updated_at")) or when
        if kind == "user":
            note = bool(item.get("synthetic_reason"))
            b.chain(sid, "system" if note else "user", _text(item.get("content")), created_at=when)
            owner = None
        elif kind == "system":
            b.chain(sid, "system", _text(item.get("content")), created_at=when)
        elif kind == "reasoning":
            thinking += [as_str(as_dict(s).get("text")) for s in item.get("summary") or []]
        elif kind == "assistant":
            model = as_str(item.get("model_id")) or None
            owner = b.chain(
                sid,
                "assistant",
                _text(item.get("content")),
                name=model,
                created_at=when,
                metadata={"thinking": "\n".join(thinking)},
            )
            thinking = []
            for n, call in enumerate(c for c in item.get("tool_calls") or [] if isinstance(c, dict)):
                args: Any = call.get("arguments")
                try:
                    args = json.loads(args) if isinstance(args, str) else args
                except ValueError:
                    pass
                calls[as_str(call.get("id"))] = b.tool(
                    f"{sid}:tool{n}", owner, as_str(call.get("name")) or "tool", args, "", created_at=when
                )
        elif kind == "tool_result":
            tid = calls.get(as_str(item.get("tool_call_id")))
            if tid is not None:
                text = _text(item.get("content"))
                b.nodes = [replace(n, content=text) if n.id == tid else n for n in b.nodes]
        elif kind == "backend_tool_call":
            spec = as_dict(item.get("kind"))
            if owner is None:
                owner = b.chain(f"{sid}:reply", "assistant", "", created_at=when)
            b.tool(
                sid,
                owner,
                as_str(spec.get("tool_type")) or "tool",
                spec.get("action"),
                as_str(spec.get("status")),
                created_at=when,
            )
        else:
            report.unknown(f"grok:{kind}")
    if not b.nodes:
        return []
    info = as_dict(summary.get("info"))
    title = as_str(summary.get("generated_title")) or as_str(summary.get("session_summary"))
    parent = as_str(summary.get("parent_session_id")) or None
    return [
        session(
            source,
            as_str(info.get("id")) or folder.name,
            folder,
            b,
            final=True,
            title=title,
            title_source="user" if summary.get("title_is_manual") else "llm",
            cwd=as_str(info.get("cwd")),
            model=as_str(summary.get("current_model_id")),
            git_branch=as_str(summary.get("head_branch")),
            kind="fork" if parent else "trunk",
            parent_native_id=parent,
        )
    ]


def grok_sessions() -> Path:
    env = os.environ.get("GROK_HOME")
    return (Path(env).expanduser() if env else Path.home() / ".grok") / "sessions"


class GrokImporter(WholeImporter):
    name = "grok"
    source = "grok"
    label = "Grok Build"
    locations = ("$GROK_HOME/sessions", "~/.grok/sessions/<cwd>/<session id>")
    shape = Shape(
        (HISTORY,), records=(("type", "content", "!sessionId", "!uuid"),), folder=True, also=("summary.json",)
    )
    reads = "user, assistant (with tool_calls), reasoning, tool_result and backend tool items; summary.json's times and title"
    looks_for = "sessions/<cwd>/<id>/chat_history.jsonl"

    def default_paths(self) -> list[Path]:
        return [grok_sessions()]

    def file_stat(self, path: Path) -> Any:
        return folder_stamp(path)

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return session_folders(paths, (HISTORY,), (HISTORY, f"*/{HISTORY}", f"*/*/{HISTORY}"))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_session(path, report, self.source)
