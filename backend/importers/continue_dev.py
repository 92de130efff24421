"""Continue.dev: ``$CONTINUE_GLOBAL_DIR`` (default ``~/.continue``) ``/sessions/``.

``sessions.json`` is the index (``[{sessionId, title, dateCreated (ms, as text),
workspaceDirectory}]``); ``<sessionId>.json`` holds ``{sessionId, title, workspaceDirectory,
history: [{message: {role, content}, contextItems, editorState, toolCallState(s)}], mode,
chatModelTitle}``. ``content`` is text or a list of ``text`` / ``imageUrl`` parts. Newer
versions (read defensively: no real file was seen) give assistant messages ``toolCalls [{id,
function {name, arguments}}]``, answered by ``tool`` messages (``toolCallId``) or by the item's
``toolCallState {toolCallId, status, output [context items]}``; ``thinking`` messages hold
reasoning. ``contextItems`` the user attached are kept as the user node's metadata (names only).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_value, load_json, session

SOURCE = "continue"


def continue_home() -> Path:
    env = os.environ.get("CONTINUE_GLOBAL_DIR")
    return Path(env).expanduser() if env else Path.home() / ".continue"


def _index(folder: Path, report: ImportReport) -> dict[str, dict[str, Any]]:
    path = folder / "sessions.json"
    if not path.exists():
        return {}
    try:
        items = load_json(path)
    except (OSError, ValueError, RecursionError) as exc:
        report.warn(path, None, f"not readable JSON ({exc})")
        return {}
    return {str(i.get("sessionId")): i for i in items if isinstance(i, dict)} if isinstance(items, list) else {}


def _when(value: Any) -> float:
    """``dateCreated``: ms as text ("1767300000000"), or ISO text."""
    if isinstance(value, str) and value.strip().isdigit():
        return parse_time(int(value))
    return parse_time(value)


def _tool_states(item: dict[str, Any]) -> list[dict[str, Any]]:
    states = item.get("toolCallStates")
    if isinstance(states, list):
        return [s for s in states if isinstance(s, dict)]
    return [item["toolCallState"]] if isinstance(item.get("toolCallState"), dict) else []


def read_session(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        report.warn(path, None, "not a Continue session: expected an object with a 'history' list")
        return []
    native = as_str(data.get("sessionId")) or path.stem
    listed = _index(path.parent, report).get(native, {})
    created = _when(listed.get("dateCreated")) or _when(data.get("dateCreated"))
    b = SessionBuilder()
    tools: dict[str, str] = {}
    results: dict[str, str] = {}
    thinking: list[str] = []
    model = as_str(data.get("chatModelTitle"))
    for index, item in enumerate(data["history"]):
        if not isinstance(item, dict):
            report.warn(path, None, f"history item {index + 1} is not an object; skipped")
            continue
        msg = as_dict(item.get("message"))
        role = msg.get("role")
        sid = as_str(msg.get("id")) or f"{native}:{index}"
        text = as_text(msg.get("content"))
        when = created if index == 0 else 0.0
        if role == "user":
            names = [as_str(c.get("name")) for c in item.get("contextItems") or [] if isinstance(c, dict)]
            b.chain(sid, "user", text, created_at=when, metadata={"context_items": names})
        elif role == "thinking":
            thinking.append(text)
        elif role == "assistant":
            owner = b.chain(
                sid, "assistant", text, name=model or None, created_at=when, metadata={"thinking": "\n".join(thinking)}
            )
            thinking = []
            for number, call in enumerate(msg.get("toolCalls") or []):
                function = as_dict(as_dict(call).get("function"))
                call_id = as_str(as_dict(call).get("id"))
                args = json_value(function.get("arguments")) if isinstance(function.get("arguments"), str) else None
                tid = b.tool(
                    call_id or f"{sid}:tool{number}",
                    owner,
                    as_str(function.get("name")) or "tool",
                    args if args is not None else function.get("arguments"),
                    "",
                    created_at=when,
                    metadata={"call_id": call_id},
                )
                tools[call_id or tid] = tid
            for state in _tool_states(item):
                output = state.get("output")
                if output is not None:
                    results[as_str(state.get("toolCallId"))] = as_text(
                        [as_str(as_dict(o).get("content")) for o in output] if isinstance(output, list) else output
                    )
        elif role == "tool":
            results[as_str(msg.get("toolCallId"))] = text
        elif role == "system":
            b.chain(sid, "system", text, created_at=when)
        else:
            report.unknown(f"continue:role:{role}")
    filled = {tid: results[cid] for cid, tid in tools.items() if cid in results}
    b.nodes = [replace(n, content=filled[n.id]) if n.id in filled else n for n in b.nodes]
    title = as_str(data.get("title")) or as_str(listed.get("title"))
    if title == "New Session":
        title = ""
    cwd = as_str(data.get("workspaceDirectory")) or as_str(listed.get("workspaceDirectory"))
    if cwd.startswith("file://"):
        cwd = unquote(urlparse(cwd).path)
    return [
        session(
            SOURCE,
            native,
            path,
            b,
            final=final,
            title=title,
            cwd=cwd,
            model=model,
            extra={"layout": "sessions", "mode": data.get("mode")},
        )
    ]


class ContinueImporter(WholeImporter):
    name = "continue"
    source = SOURCE
    looks_for = "sessions/<sessionId>.json"

    def default_paths(self) -> list[Path]:
        return [continue_home() / "sessions"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".json" and path.name != "sessions.json":
                found[path] = None
            elif path.is_dir():
                for base in (path, path / "sessions"):
                    for item in sorted(base.glob("*.json")):
                        if item.name != "sessions.json" and item.is_file():
                            found[item] = None
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_session(path, report, final=final)
