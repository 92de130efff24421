"""A session resumed into Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl``.

Format, from openai/codex:
- ``codex-rs/rollout/src/recorder.rs`` @ b505ee8069666188dd67112126d6ff4dd2eb2676 (file naming, one
  ``{timestamp, type, payload}`` line per ``RolloutItem``: ``session_meta`` first, then
  ``response_item`` / ``event_msg`` / ``turn_context``);
- ``codex-rs/rollout/src/session_index.rs`` @ 4891934519fb8dd07f04c6ec2de8f488146db08c
  (``session_index.jsonl``: append-only ``{id, thread_name, updated_at}``, newest wins);
- a real rollout of Codex 0.58 (../shared/fixtures/transcripts/codex/acidicsoil-rollout-*.jsonl).
The JSON Schema derived from them is tests/backend/resume/schemas/codex_line.json.

A typed prompt is a ``response_item`` user message plus its ``event_msg/user_message`` and the
turn's ``turn_context``; a reply is an assistant ``message`` (and its ``agent_message`` event);
each tool call is a ``function_call`` (arguments as JSON text) and its ``function_call_output``,
joined by ``call_id``. Codex finds a rollout by the thread id in its file name: ``codex resume
<id>``. The one line added to session_index.jsonl names the thread.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .conversation import Conversation
from .files import Written, append_line, dumps, env_path, iso, user_home, write_new

FORMAT_VERSION = "0.58.0"  # the rollout shape written (codex_cli_rs 0.58 lines)


def codex_home(env: Mapping[str, str]) -> Path:
    return env_path(env, "CODEX_HOME") or user_home(env) / ".codex"


def uuid7(ms: int | None = None) -> str:
    """A UUIDv7 (time-ordered), as Codex names threads; Python 3.11 has none built in."""
    ms = int(time.time() * 1000) if ms is None else ms
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | int.from_bytes(os.urandom(10), "big") & ((1 << 76) - 1)
    value = (value & ~(0b11 << 62)) | (0b10 << 62)  # the RFC 4122 variant
    return str(uuid.UUID(int=value))


def _line(at: float, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": iso(at), "type": kind, "payload": payload}


def lines(conv: Conversation, thread_id: str, cwd: str, started: float) -> Iterator[dict[str, Any]]:
    yield _line(
        started,
        "session_meta",
        {
            "id": thread_id,
            "timestamp": iso(started),
            "cwd": cwd,
            "originator": "opmem",
            "cli_version": FORMAT_VERSION,
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
        },
    )
    for m in conv.messages:
        at = m.created_at or started
        if m.role == "user":
            item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": m.text}]}
            yield _line(at, "response_item", item)
            yield _line(at, "event_msg", {"type": "user_message", "message": m.text, "images": []})
            context = {"cwd": cwd, "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"}}
            yield _line(at, "turn_context", {**context, "model": conv.model or m.model or "", "summary": "auto"})
            continue
        if m.text:
            item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": m.text}]}
            yield _line(at, "event_msg", {"type": "agent_message", "message": m.text})
            yield _line(at, "response_item", item)
        # one model response: its calls, then their outputs (an output closes the response)
        ids = ["call_opmem" + hashlib.sha256(f"{thread_id}:{c.call_id}".encode()).hexdigest()[:20] for c in m.tools]
        for call, call_id in zip(m.tools, ids, strict=True):
            args = dumps(call.input_object())
            yield _line(
                at, "response_item", {"type": "function_call", "name": call.name, "arguments": args, "call_id": call_id}
            )
        for call, call_id in zip(m.tools, ids, strict=True):
            yield _line(
                at, "response_item", {"type": "function_call_output", "call_id": call_id, "output": call.output}
            )


def write(conv: Conversation, cwd: str, env: Mapping[str, str]) -> Written:
    now = time.time()
    thread_id = uuid7(int(now * 1000))
    local = time.localtime(now)  # Codex names the folders and the file in local time
    folder = codex_home(env) / "sessions" / time.strftime("%Y/%m/%d", local)
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', local)}-{thread_id}.jsonl"
    path = write_new(folder / name, (dumps(line) for line in lines(conv, thread_id, cwd, now)))
    entry = {"id": thread_id, "thread_name": conv.title, "updated_at": iso(now).replace(".000Z", "Z")}
    append_line(codex_home(env) / "session_index.jsonl", dumps(entry))
    return Written("codex", thread_id, path, ("codex", "resume", thread_id), cwd)
