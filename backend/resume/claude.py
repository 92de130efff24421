"""A session resumed into Claude Code: ``$CLAUDE_CONFIG_DIR/projects/<encoded cwd>/<sessionId>.jsonl``.

Format, as read from public readers of the files Claude Code writes (Claude Code's own source is
not public):
- kenn-io/agentsview ``internal/parser/claude.go`` @ 538600744d1b87614d3746d36a0966c1f2ac1cad
  (record envelope, ``message.content`` blocks, ``tool_use``/``tool_result`` pairing);
- daaain/claude-code-log (PyPI ``claude-code-log``, its pydantic models of the transcript), and
  ../shared/reference/transcript-formats.md §1 (folder naming: every character of the cwd other
  than ``[A-Za-z0-9]`` becomes ``-``).
The JSON Schema derived from them is tests/backend/resume/schemas/claude_record.json.

One record a line: a ``summary`` (the title ``claude --resume`` lists), then each message chained
by ``parentUuid``: a typed prompt is a ``user`` record with string content; a reply is one
``assistant`` record whose content holds its text and its ``tool_use`` blocks; each result is a
``user`` record holding one ``tool_result`` block. Continue it with ``claude --resume <id>`` run
in the session's folder (Claude Code looks for it in that folder's project directory).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .conversation import Conversation
from .files import Written, dumps, env_path, iso, user_home, write_new

FORMAT_VERSION = "2.0.0"  # the transcript shape written (Claude Code 2.0.x records)


def projects_dir(env: Mapping[str, str]) -> Path:
    """As the importer reads it: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``."""
    base = env_path(env, "CLAUDE_CONFIG_DIR") or user_home(env) / ".claude"
    return base / "projects"


def project_folder(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def _id(kind: str, seed: str) -> str:
    return f"{kind}_opmem{hashlib.sha256(seed.encode()).hexdigest()[:20]}"


def records(conv: Conversation, session_id: str, cwd: str) -> Iterator[dict[str, Any]]:
    parent: str | None = None

    def envelope(kind: str, at: float, **fields: Any) -> dict[str, Any]:
        nonlocal parent
        record_id = str(uuid.uuid4())
        record = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session_id,
            "version": FORMAT_VERSION,
            "gitBranch": "",
            "type": kind,
            **fields,
            "uuid": record_id,
            "timestamp": iso(at),
        }
        parent = record_id
        return record

    out: list[dict[str, Any]] = []
    for m in conv.messages:
        if m.role == "user":
            out.append(envelope("user", m.created_at, message={"role": "user", "content": m.text}))
            continue
        content: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
        calls = [(call, _id("toolu", f"{session_id}:{call.call_id}")) for call in m.tools]
        content += [
            {"type": "tool_use", "id": cid, "name": call.name, "input": call.input_object()} for call, cid in calls
        ]
        message = {
            "id": _id("msg", f"{session_id}:{m.node_id}"),
            "type": "message",
            "role": "assistant",
            "model": m.model or conv.model or "unknown",  # "<synthetic>" marks Claude Code's own notices
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        out.append(envelope("assistant", m.created_at, message=message))
        for call, cid in calls:
            block = {"type": "tool_result", "tool_use_id": cid, "content": call.output, "is_error": call.is_error}
            out.append(envelope("user", m.created_at, message={"role": "user", "content": [block]}))
    if out:
        yield {"type": "summary", "summary": conv.title, "leafUuid": out[-1]["uuid"]}
    yield from out


def write(conv: Conversation, cwd: str, env: Mapping[str, str]) -> Written:
    session_id = str(uuid.uuid4())
    folder = projects_dir(env) / project_folder(cwd)
    path = write_new(folder / f"{session_id}.jsonl", (dumps(r) for r in records(conv, session_id, cwd)))
    return Written("claude", session_id, path, ("claude", "--resume", session_id), cwd)
