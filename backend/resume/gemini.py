"""A session resumed into Gemini CLI: ``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``.

Format, from google-gemini/gemini-cli @ 5411f113cafae26161b4969b0237b8e1e024e2c2:
- ``packages/core/src/services/chatRecordingTypes.ts`` (``ConversationRecord``, ``MessageRecord``,
  ``ToolCallRecord``);
- ``packages/core/src/services/chatRecordingService.ts`` (the ``.jsonl`` file: a metadata line
  ``{sessionId, projectHash, startTime, lastUpdated, kind}`` then one message a line; the name
  ``session-<ISO minute>-<first 8 of the id>.jsonl``; ``projectHash`` = sha256 of the project root,
  ``packages/core/src/utils/paths.ts``);
- ``packages/core/src/config/projectRegistry.ts`` (``<project>`` is the short id
  ``~/.gemini/projects.json`` maps the folder to, else the folder ``tmp/<slug>`` whose
  ``.project_root`` names it; a new one is the folder's slugified base name);
- ``packages/cli/src/config/config.ts`` and ``packages/cli/src/utils/sessionUtils.ts``
  (``gemini --resume <session uuid>``).

A prompt is a ``user`` message with ``[{text}]`` content; a reply a ``gemini`` message with its
``toolCalls`` (``args``, ``result: [{functionResponse: {id, name, response: {output}}}]``,
``status``). projects.json is read, never written: a folder Gemini has not seen gets a
``tmp/<slug>/.project_root`` marker, which Gemini's registry adopts (findExistingSlugForPath).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .conversation import Conversation
from .files import Written, dumps, env_path, iso, user_home, write_new

PROJECT_ROOT_FILE = ".project_root"


def gemini_dir(env: Mapping[str, str]) -> Path:
    """As the importer reads it: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    return (env_path(env, "GEMINI_CLI_HOME") or user_home(env)) / ".gemini"


def _slugify(text: str) -> str:
    return re.sub(r"^-|-$", "", re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", text.lower()))) or "project"


def _registered(base: Path) -> dict[str, str]:
    try:
        data = json.loads((base / "projects.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    return {k: v for k, v in projects.items() if isinstance(v, str)} if isinstance(projects, dict) else {}


def _owner(folder: Path) -> str | None:
    try:
        return (folder / PROJECT_ROOT_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None


def existing_project_dirs(base: Path, cwd: str) -> list[Path]:
    """The tmp/ folders Gemini already keeps for `cwd` (registered, marked with it, or named by its
    hash, as older versions did); none is made."""
    tmp = base / "tmp"
    found = [tmp / hashlib.sha256(cwd.encode()).hexdigest()]
    registered = _registered(base).get(cwd)
    if registered:
        found.append(tmp / registered)
    if tmp.is_dir():
        found.extend(folder for folder in sorted(tmp.iterdir()) if _owner(folder) == cwd)
    return [folder for folder in dict.fromkeys(found) if folder.is_dir()]


def project_dir(base: Path, cwd: str) -> Path:
    """tmp/<short id> for `cwd`, as Gemini's ProjectRegistry would pick it (a new one marked)."""
    tmp = base / "tmp"
    registered = _registered(base)
    if cwd in registered:
        return tmp / registered[cwd]
    if tmp.is_dir():
        for folder in sorted(tmp.iterdir()):
            if _owner(folder) == cwd:
                return folder
    slug = _slugify(Path(cwd).name)
    taken = set(registered.values())
    for counter in range(1000):
        candidate = slug if counter == 0 else f"{slug}-{counter}"
        if candidate in taken or _owner(tmp / candidate) is not None:
            continue
        folder = tmp / candidate
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PROJECT_ROOT_FILE).write_text(cwd, encoding="utf-8")
        return folder
    return tmp / hashlib.sha256(cwd.encode()).hexdigest()


def lines(conv: Conversation, session_id: str, cwd: str, started: float) -> Iterator[dict[str, Any]]:
    yield {
        "sessionId": session_id,
        "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
        "startTime": iso(started),
        "lastUpdated": iso(started),
        "kind": "main",
        "directories": [cwd],
    }
    for m in conv.messages:
        at = iso(m.created_at or started)
        mid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"opmem:{session_id}:{m.node_id}"))
        if m.role == "user":
            yield {"id": mid, "timestamp": at, "type": "user", "content": [{"text": m.text}]}
            continue
        record: dict[str, Any] = {"id": mid, "timestamp": at, "type": "gemini", "content": m.text}
        if m.model:
            record["model"] = m.model
        if m.tools:
            record["toolCalls"] = [_tool_call(call, session_id, at) for call in m.tools]
        yield record


def _tool_call(call, session_id: str, at: str) -> dict[str, Any]:
    call_id = f"{call.name}-opmem-{hashlib.sha256(f'{session_id}:{call.call_id}'.encode()).hexdigest()[:16]}"
    key = "error" if call.is_error else "output"
    response = {"functionResponse": {"id": call_id, "name": call.name, "response": {key: call.output}}}
    return {
        "id": call_id,
        "name": call.name,
        "args": call.input_object(),
        "result": [response],
        "status": "error" if call.is_error else "success",
        "timestamp": at,
    }


def write(conv: Conversation, cwd: str, env: Mapping[str, str]) -> Written:
    now = time.time()
    session_id = str(uuid.uuid4())
    chats = project_dir(gemini_dir(env), cwd) / "chats"
    minute = iso(now)[:16].replace(":", "-")
    path = write_new(
        chats / f"session-{minute}-{session_id[:8]}.jsonl", (dumps(x) for x in lines(conv, session_id, cwd, now))
    )
    return Written("gemini", session_id, path, ("gemini", "--resume", session_id), cwd)
