"""Mistral Vibe: ``~/.vibe/logs/session/session_<YYYYmmdd_HHMMSS>_<short id>/`` with ``meta.json``
and ``messages.jsonl``.

``meta.json``: ``SessionMetadata {session_id, parent_session_id, start_time, end_time (ISO, UTC),
git_commit, git_branch, environment {working_directory}, username, title, title_source (auto |
manual)}`` plus ``stats``, ``total_messages`` and ``config`` (its ``active_model`` names the
model). ``messages.jsonl``: the non-system ``LLMMessage``s appended as they come, ``{role: user |
assistant | tool, content, message_id (not on tool messages), injected?, reasoning_content?,
tool_calls [{id, function {name, arguments}}] (assistant), tool_call_id, name (tool)}``, without
times: the first message is dated ``start_time``, the last ``end_time``. An ``injected`` message
(put in by Vibe, not typed) is a system node. Checked against the agent's source,
mistralai/mistral-vibe at ac8f1a0: vibe/core/session/session_logger.py, vibe/core/types.py
(SessionMetadata, LLMMessage), vibe/core/paths/_vibe_home.py; and kenn-io/agentsview
internal/parser/vibe.go and its testdata (5386007).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Probe, Shape
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


def read_session(folder: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    meta = as_dict(load_json(folder / "meta.json")) if (folder / "meta.json").exists() else {}
    messages = folder / "messages.jsonl"
    if not messages.exists():
        return []
    b = SessionBuilder()
    calls: dict[str, str] = {}
    owner: str | None = None
    records = list(json_lines(messages, report))
    for index, (number, record) in enumerate(records):
        role = as_str(record.get("role"))
        sid = as_str(record.get("message_id")) or f"{folder.name}:{number}"
        when = parse_time(meta.get("start_time")) if index == 0 else 0.0
        if index == len(records) - 1:
            when = parse_time(meta.get("end_time")) or when
        text = as_str(record.get("content")) or as_text(record.get("content"))
        if role == "tool":
            tid = calls.get(as_str(record.get("tool_call_id")))
            if tid is not None:
                _fill(b, tid, text, when)
            elif owner is not None:
                b.tool(sid, owner, as_str(record.get("name")) or "tool", None, text, created_at=when)
            continue
        if role not in ("user", "assistant", "system"):
            report.unknown(f"vibe:role:{role}")
            continue
        model = _model(meta) if role == "assistant" else ""
        extra = {"thinking": as_str(record.get("reasoning_content")) or as_text(record.get("reasoning_content"))}
        if record.get("injected"):  # put in the conversation by Vibe (a hook, a reminder), not typed
            role, extra = "system", {**extra, "injected": True}
        made = b.chain(sid, role, text, name=model or None, created_at=when, metadata=extra)
        owner = made if role == "assistant" else None
        for n, call in enumerate(c for c in record.get("tool_calls") or [] if isinstance(c, dict)):
            function = as_dict(call.get("function"))
            args = function.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            calls[as_str(call.get("id"))] = b.tool(
                f"{sid}:tool{n}", made, as_str(function.get("name")) or "tool", args, "", created_at=when
            )
    if not b.nodes:
        return []
    native = as_str(meta.get("session_id")) or folder.name
    parent = as_str(meta.get("parent_session_id")) or None
    return [
        session(
            source,
            native,
            folder,
            b,
            final=True,
            title=as_str(meta.get("title")),
            title_source="user" if meta.get("title_source") == "manual" else "llm",
            model=_model(meta),
            cwd=as_str(as_dict(meta.get("environment")).get("working_directory")),
            git_branch=as_str(meta.get("git_branch")),
            kind="fork" if parent else "trunk",
            parent_native_id=parent,
        )
    ]


def _model(meta: dict[str, Any]) -> str:
    """meta.json has no model of its own: the config it saves names the active one."""
    return as_str(meta.get("model")) or as_str(as_dict(meta.get("config")).get("active_model"))


def _fill(b: SessionBuilder, tool_id: str, text: str, when: float) -> None:
    from dataclasses import replace

    b.nodes = [replace(n, content=text, created_at=n.created_at or when) if n.id == tool_id else n for n in b.nodes]


def vibe_sessions() -> list[Path]:
    """``[session_logging] save_dir`` of ``$VIBE_HOME/config.toml`` when set (SessionLoggingConfig),
    and the default ``$VIBE_HOME/logs/session`` (``~/.vibe``)."""
    env = os.environ.get("VIBE_HOME")
    home = Path(env).expanduser() if env else Path.home() / ".vibe"
    found = [home / "logs" / "session"]
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return found
    saved = as_str(as_dict(config.get("session_logging")).get("save_dir"))
    return list(dict.fromkeys([Path(saved).expanduser(), *found])) if saved else found


class VibeImporter(WholeImporter):
    name = "vibe"
    source = "mistral-vibe"
    label = "Mistral Vibe"
    locations = ("$VIBE_HOME/logs/session", "~/.vibe/logs/session", "[session_logging] save_dir of its config.toml")
    shape = Shape(
        ("messages.jsonl", "meta.json"),
        records=(("role", "content", "message_id"), ("session_id", "start_time", "environment")),
        folder=True,
    )
    reads = "user, assistant (with tool_calls), tool and system messages; meta.json's times, model, branch and folder"
    looks_for = "logs/session/<session>/messages.jsonl"

    def claims(self, probe: Probe) -> Path | None:
        unit = super().claims(probe)
        return unit if unit is not None and (unit / "messages.jsonl").is_file() else None

    def default_paths(self) -> list[Path]:
        return vibe_sessions()

    def file_stat(self, path: Path) -> Any:
        return folder_stamp(path)

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return session_folders(paths, ("messages.jsonl", "meta.json"), ("messages.jsonl", "*/messages.jsonl"))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_session(path, report, self.source)
