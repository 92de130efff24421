"""GitHub Copilot Chat in VS Code (and its forks): ``chatSessions/<sessionId>.json`` or ``.jsonl``.

Where: ``<VS Code user dir>/workspaceStorage/<hash>/chatSessions/`` (one folder per workspace,
named in ``workspace.json`` beside it; ``no-workspace`` before emptyWindowChatSessions existed),
``globalStorage/emptyWindowChatSessions/`` and ``globalStorage/savedChatSessions/``.

A ``.json`` session: ``{version, sessionId, creationDate, lastMessageDate (ms), customTitle,
requests: [{requestId, message {text, parts}, response: [items], modelId, timestamp (ms),
result {metadata {promptTokens, outputTokens, resolvedModel}}}]}``. A response item with no
``kind`` (or ``markdownContent``) holds text in ``value``; ``toolInvocationSerialized`` is a tool
call (``toolId``, ``toolCallId``, ``invocationMessage``, ``pastTenseMessage``,
``toolSpecificData``); ``prepareToolInvocation``, ``undoStop``, ``codeblockUri``,
``textEditGroup`` show nothing; ``thinking`` (``value``: a string or a list of them) is the
reply's thinking. An older file's response is a string or a list holding plain strings
(markdown). Newer VS Code writes ``.jsonl`` operations on that object:
``{kind: 0 (initial, v = the whole session) | 1 (set v at the key path k) | 2 (push the items v
onto the list at k, from index i) | 3 (delete k)}``. Checked against kenn-io/agentsview
internal/parser/vscode_copilot.go and vscode_copilot_provider.go (5386007), and against VS Code's
own source (microsoft/vscode, the chat contribution that writes these files):
src/vs/workbench/contrib/chat/common/chatSessionStore.ts at 0392c00 (the folders, readSession's
string responses) and chatService.ts's IChatThinkingPart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .cline import VSCODE_APPS
from .cursor import vscode_user_dirs
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, load_json, session

QUIET_ITEMS = frozenset({"prepareToolInvocation", "undoStop", "codeblockUri", "textEditGroup", "progressTask"})


def replay(path: Path, report: ImportReport) -> Any:
    """The session object a ``.jsonl`` operation log ends with."""
    state: Any = None
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            op = json.loads(raw)
        except (ValueError, RecursionError):
            report.warn(path, number, "not valid JSON; line skipped")
            continue
        kind, keys, value = as_dict(op).get("kind"), as_dict(op).get("k") or [], as_dict(op).get("v")
        if kind == 0:
            state = value
        elif state is not None and keys and isinstance(keys, list):
            parent = _walk(state, keys[:-1])
            last = keys[-1]
            if kind == 1:
                _set(parent, last, value)
            elif kind == 2 and isinstance(value, list):
                target = _child(parent, last)
                if isinstance(target, list):
                    start = op.get("i")
                    if isinstance(start, int):
                        start = max(0, min(start, len(target)))
                        target[start : start + len(value)] = value
                    else:
                        target.extend(value)
            elif kind == 3:
                _delete(parent, last)
    return state


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        return node.get(str(key))
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    return None


def _walk(node: Any, keys: list[Any]) -> Any:
    for key in keys:
        node = _child(node, key)
    return node


def _set(parent: Any, key: Any, value: Any) -> None:
    if isinstance(parent, dict):
        parent[str(key)] = value
    elif isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        parent[key] = value


def _delete(parent: Any, key: Any) -> None:
    if isinstance(parent, dict):
        parent.pop(str(key), None)


def read_chat(path: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    data = replay(path, report) if path.suffix == ".jsonl" else load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list):
        report.warn(path, None, "not a Copilot chat session: expected an object with a 'requests' list")
        return []
    b = SessionBuilder()
    started = parse_time(data.get("creationDate"))
    for index, request in enumerate(r for r in data["requests"] if isinstance(r, dict)):
        rid = as_str(request.get("requestId")) or f"request{index}"
        when = parse_time(request.get("timestamp")) or (started if index == 0 else 0.0)
        text = as_str(as_dict(request.get("message")).get("text")).strip()
        if text:
            b.chain(rid, "user", text, created_at=when)
        texts, calls, thinking = [], [], []
        for item in _response_items(request.get("response")):
            kind = as_str(item.get("kind"))
            if kind == "thinking":
                value = item.get("value")
                thinking.append("".join(value) if isinstance(value, list) else as_str(value))
            elif kind == "toolInvocationSerialized":
                calls.append(item)
            elif kind == "inlineReference":
                ref = as_dict(item.get("inlineReference"))
                texts.append(as_str(ref.get("path")) or as_str(ref.get("fsPath")) or as_str(ref.get("name")))
            elif kind not in QUIET_ITEMS:
                texts.append(_value(item.get("value")))
        metadata = as_dict(as_dict(request.get("result")).get("metadata"))
        model = as_str(metadata.get("resolvedModel")) or as_str(request.get("modelId")).removeprefix("copilot/")
        reply = "".join(texts).strip()
        if not reply and not calls:
            continue
        owner = b.chain(
            f"{rid}:response",
            "assistant",
            reply,
            name=model or None,
            created_at=when,
            metadata={"thinking": "".join(thinking)},
        )
        for n, call in enumerate(calls):
            shown = _value(call.get("pastTenseMessage")) or _value(call.get("invocationMessage"))
            given = call.get("toolSpecificData") or _value(call.get("invocationMessage")) or None
            b.tool(
                f"{rid}:tool{n}",
                owner,
                as_str(call.get("toolId")) or "tool",
                given,
                shown,
                created_at=when,
                metadata={"call_id": as_str(call.get("toolCallId"))},
            )
    if not b.nodes:
        return []
    native = as_str(data.get("sessionId")) or path.stem
    title = as_str(data.get("customTitle"))
    return [
        session(
            source, native, path, b, final=True, title=title, title_source="user", extra={"layout": path.suffix[1:]}
        )
    ]


def _response_items(response: Any) -> list[dict[str, Any]]:
    """A request's response parts; an older file's plain strings (or one string) are markdown parts
    (chatSessionStore.ts readSession revives them as MarkdownString)."""
    items = response if isinstance(response, list) else [response] if isinstance(response, str) else []
    return [{"value": x} if isinstance(x, str) else x for x in items if isinstance(x, (str, dict))]


def _value(value: Any) -> str:
    """Text of a markdown value: a string, or ``{value}``."""
    if isinstance(value, dict):
        return as_str(value.get("value"))
    return value if isinstance(value, str) else as_text(value) if value else ""


class CopilotChatImporter(WholeImporter):
    name = "copilot-chat"
    source = "vscode-copilot"
    label = "VS Code Copilot Chat"
    locations = (
        "<VS Code user dir>/workspaceStorage/<hash>/chatSessions",
        "<VS Code user dir>/globalStorage/emptyWindowChatSessions",
        "<VS Code user dir>/globalStorage/savedChatSessions",
    )
    shape = Shape(
        ("*.json", "*.jsonl"),
        records=(("version", "sessionId", "requests"), ("kind=0", "v", "!type")),
    )
    reads = "requests: the prompt, the response's text and tool invocations, the model; .jsonl operation logs replayed"
    looks_for = "chatSessions/<id>.json or .jsonl"

    def default_paths(self) -> list[Path]:
        users = [user for app in VSCODE_APPS for user in vscode_user_dirs(app)]
        folders = ("emptyWindowChatSessions", "savedChatSessions")
        return [p for u in users for p in (u / "workspaceStorage", *(u / "globalStorage" / f for f in folders))]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix in (".json", ".jsonl"):
                found[path] = None
            elif path.is_dir():
                own = (
                    ("*.json*",)
                    if path.name in ("emptyWindowChatSessions", "savedChatSessions", "chatSessions")
                    else ()
                )
                for pattern in (
                    *own,
                    "chatSessions/*.json*",
                    "*/chatSessions/*.json*",
                    "workspaceStorage/*/chatSessions/*.json*",
                    "globalStorage/emptyWindowChatSessions/*.json*",
                    "globalStorage/savedChatSessions/*.json*",
                ):
                    found.update(
                        dict.fromkeys(sorted(p for p in path.glob(pattern) if p.suffix in (".json", ".jsonl")))
                    )
        jsons = {p.with_suffix("") for p in found if p.suffix == ".jsonl"}
        return [p for p in found if not (p.suffix == ".json" and p.with_suffix("") in jsons)]  # the .jsonl is newer

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_chat(path, report, self.source)
