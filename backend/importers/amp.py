"""Amp (Sourcegraph): ``$XDG_DATA_HOME/amp/threads/T-<uuid>.json`` (older versions: VS Code
globalStorage ``sourcegraph.amp/threads3/``). Read defensively: no real file was seen.

A thread: ``{v, id, created (ms), title, agentMode, env.initial.trees[{displayName, uri}],
messages: [{role, messageId, content: [text | thinking | tool_use {id, name, input} |
tool_result {toolUseID, run {status, result {output, exitCode}}}], state, usage {model,
inputTokens, outputTokens, ...}}]}``. A user message of ``tool_result`` blocks fills the calls;
an assistant message whose ``state.type`` is ``streaming`` (or a call whose run is not done) is
held back while Amp writes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .base import ImportedSession, ImportReport
from .cline import VSCODE_APPS
from .cursor import vscode_user_dirs
from .record_values import as_text, parse_time
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, load_json, session, split_injected

SOURCE = "amp"
DONE_RUN = frozenset({"done", "error", "cancelled", "rejected-by-user", "completed"})


def _cwd(thread: dict[str, Any]) -> str:
    trees = as_dict(as_dict(thread.get("env")).get("initial")).get("trees")
    for tree in trees if isinstance(trees, list) else []:
        uri = as_str(as_dict(tree).get("uri"))
        if uri.startswith("file://"):
            return unquote(urlparse(uri).path)
    return ""


def _fill(b: SessionBuilder, calls: dict[str, str], results: dict[str, tuple[str, dict[str, Any]]]) -> None:
    """Each call's result into its tool node; a call with no result yet (or still running) waits with its reply."""
    position = {n.id: i for i, n in enumerate(b.nodes)}
    nodes = []
    for n in b.nodes:
        call_id = calls.get(n.id)
        if call_id is not None:
            text, run = results.get(call_id, ("", {}))
            status = as_str(run.get("status"))
            if call_id in results:
                exit_code = as_dict(run.get("result")).get("exitCode")
                meta = {**n.metadata, "status": status, "exit": exit_code, "is_error": status == "error" or None}
                n = replace(n, content=text, metadata={k: v for k, v in meta.items() if v not in (None, "")})
            if call_id not in results or (status and status not in DONE_RUN):  # still running: it waits
                owner = position[n.called_by or n.id]
                b.first_open = owner if b.first_open is None else min(b.first_open, owner)
        nodes.append(n)
    b.nodes = nodes


def read_thread(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    thread = load_json(path)
    if not isinstance(thread, dict) or not isinstance(thread.get("messages"), list):
        report.warn(path, None, "not an Amp thread: expected an object with a 'messages' list")
        return []
    native = as_str(thread.get("id")) or path.stem
    created = parse_time(thread.get("created"))
    b = SessionBuilder()
    calls: dict[str, str] = {}
    results: dict[str, tuple[str, dict[str, Any]]] = {}
    model = ""
    for index, msg in enumerate(thread["messages"]):
        if not isinstance(msg, dict):
            report.warn(path, None, f"message {index + 1} is not an object; skipped")
            continue
        sid = f"{native}:{msg.get('messageId', index)}"
        blocks = [x for x in msg.get("content") or [] if isinstance(x, dict)]
        when = parse_time(as_dict(msg.get("meta")).get("sentAt")) or (created if index == 0 else 0.0)
        if msg.get("role") == "user":
            said, added = [], []
            for block in blocks:
                if block.get("type") == "tool_result":
                    run = as_dict(block.get("run"))
                    output = as_dict(run.get("result")).get("output", run.get("result"))
                    results[as_str(block.get("toolUseID"))] = (as_text(output), run)
                elif block.get("type") == "text":
                    extra, text = split_injected(as_str(block.get("text")))
                    if extra:
                        added.append(extra)
                    if text.strip():
                        said.append(text)
            if said:
                b.chain(sid, "user", "\n".join(said), created_at=when)
            if added:
                b.chain(f"{sid}:context", "system", "\n".join(added), created_at=when, metadata={"injected": True})
            continue
        if msg.get("role") != "assistant":
            report.unknown(f"amp:role:{msg.get('role')}")
            continue
        usage = as_dict(msg.get("usage"))
        model = as_str(usage.get("model")) or model
        texts = [as_str(x.get("text")) for x in blocks if x.get("type") == "text"]
        thinking = [as_str(x.get("thinking")) for x in blocks if x.get("type") == "thinking"]
        streaming = as_dict(msg.get("state")).get("type") == "streaming"
        owner = b.chain(
            sid,
            "assistant",
            "\n".join(texts),
            name=model or None,
            created_at=when,
            done=not streaming,
            metadata={"thinking": "\n".join(thinking), "tokens": usage or None},
        )
        for number, block in enumerate(x for x in blocks if x.get("type") == "tool_use"):
            call_id = as_str(block.get("id"))
            tid = b.tool(
                call_id or f"{sid}:tool{number}",
                owner,
                as_str(block.get("name")) or "tool",
                block.get("input"),
                "",
                created_at=when,
                metadata={"call_id": call_id},
            )
            calls[tid] = call_id
    _fill(b, calls, results)
    return [
        session(
            SOURCE,
            native,
            path,
            b,
            final=final,
            title=as_str(thread.get("title")),
            cwd=_cwd(thread),
            model=model,
            extra={"layout": "thread", "agent_mode": thread.get("agentMode")},
        )
    ]


class AmpImporter(WholeImporter):
    name = "amp"
    source = SOURCE
    looks_for = "threads/T-<id>.json"

    def default_paths(self) -> list[Path]:
        data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        old = [
            u / "globalStorage" / "sourcegraph.amp" / "threads3" for app in VSCODE_APPS for u in vscode_user_dirs(app)
        ]
        return [Path(data).expanduser() / "amp" / "threads", *old]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".json":
                found[path] = None
            elif path.is_dir():
                for base in (path, path / "threads"):
                    found.update(dict.fromkeys(sorted(p for p in base.glob("T-*.json") if p.is_file())))
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_thread(path, report, final=final)
