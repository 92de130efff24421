"""Amp (Sourcegraph): ``$XDG_DATA_HOME/amp/threads/T-<uuid>.json`` (older versions: VS Code
globalStorage ``sourcegraph.amp/threads3/``). Amp is closed source: checked against public readers
of real threads (kenn-io/agentsview internal/parser/amp.go 5386007; letta-ai/trajectory
src/adapters/amp fd2c201, made from real ``amp threads export`` output). CLI releases from late
May 2026 keep threads on Amp's server and leave only stubs here; older threads stay readable.

A thread: ``{v, id, created (ms), title, agentMode, env.initial {workingDirectory, trees
[{displayName, uri, repository {ref}}]}, meta {traces}, messages: [{role (user | assistant |
info), messageId, protocolMessageID, meta {sentAt (ms)}, content, state {type, stopReason},
usage {model, timestamp, inputTokens, ...}}]}``. Assistant blocks: ``text`` / ``thinking`` /
``tool_use {id, name, input, complete}``, each with ``blockState`` and ``startTime``; user blocks:
``text``, ``image``, ``tool_result {toolUseID, run {status, result | error {message}}}`` (or the
Anthropic ``{tool_use_id, content}``). A result is text, or an object whose ``output`` (Bash),
``content`` (Read) or ``diff`` (Edit) is shown. An ``info`` message holds a compaction
``summary``. A user message of ``tool_result`` blocks fills the calls; a reply still streaming (a
message or block not complete, a call whose run is not done) is held back while Amp writes.
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
from .record_values import as_text, dumps, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, load_json, session, split_injected

SOURCE = "amp"
DONE_RUN = frozenset({"done", "error", "cancelled", "rejected-by-user", "completed"})
FAILED_RUN = frozenset({"error", "cancelled", "rejected-by-user"})
OPEN_MESSAGE = frozenset({"streaming", "running"})  # state.type of a reply still being written


def _cwd(thread: dict[str, Any]) -> str:
    initial = as_dict(as_dict(thread.get("env")).get("initial"))
    if as_str(initial.get("workingDirectory")):
        return as_str(initial["workingDirectory"])
    trees = initial.get("trees")
    for tree in trees if isinstance(trees, list) else []:
        uri = as_str(as_dict(tree).get("uri"))
        if uri.startswith("file://"):
            return unquote(urlparse(uri).path)
    return ""


def _branch(thread: dict[str, Any]) -> str:
    """The git ref of the thread's one tree (several trees: no single branch)."""
    trees = as_dict(as_dict(thread.get("env")).get("initial")).get("trees")
    if isinstance(trees, list) and len(trees) == 1:
        return as_str(as_dict(as_dict(trees[0]).get("repository")).get("ref"))
    return ""


def _result_text(result: Any) -> str:
    """A run's result as shown: text, a tool's output / content / diff, else its JSON."""
    if result is None:
        return ""
    if isinstance(result, dict):
        for key in ("output", "content", "diff"):
            if result.get(key) not in (None, ""):
                return _result_text(result[key])
        if isinstance(result.get("success"), bool):
            return "success" if result["success"] else "failed"
        return "" if any(k in result for k in ("output", "content", "diff")) else dumps(result)
    if isinstance(result, list):
        if result and all(isinstance(x, str) for x in result):
            return "\n".join(result)
        if result and as_dict(result[0]).get("type") == "image":
            return "[image]"
        return dumps(result) if result else ""
    return result if isinstance(result, str) else dumps(result)


def _tool_result(block: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(call id, text, run) of a tool_result block, Amp's ``run`` or the Anthropic shape."""
    run = as_dict(block.get("run"))
    call_id = as_str(block.get("toolUseID")) or as_str(block.get("tool_use_id"))
    if not run:
        return call_id, as_text(block.get("content")), {"status": "error" if block.get("is_error") else "done"}
    text = _result_text(run.get("result"))
    status = as_str(run.get("status"))
    if not text and status in FAILED_RUN:
        text = as_str(as_dict(run.get("error")).get("message")) or f"[{status}]"
    return call_id, text, run


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
                meta = {**n.metadata, "status": status, "exit": exit_code, "is_error": status in FAILED_RUN or None}
                n = replace(n, content=text, metadata={k: v for k, v in meta.items() if v not in (None, "")})
            if call_id not in results or (status and status not in DONE_RUN):  # still running: it waits
                owner = position[n.called_by or n.id]
                b.first_open = owner if b.first_open is None else min(b.first_open, owner)
        nodes.append(n)
    b.nodes = nodes


def _summary(blocks: list[dict[str, Any]]) -> str:
    """The compaction summary an ``info`` message holds ("" when it holds none)."""
    for block in blocks:
        summary = as_dict(block.get("summary"))
        if block.get("type") == "summary" and summary.get("type") == "message":
            return as_str(summary.get("summary"))
    return ""


def _complete(msg: dict[str, Any], blocks: list[dict[str, Any]]) -> bool:
    if as_dict(msg.get("state")).get("type") in OPEN_MESSAGE:
        return False
    for block in blocks:
        if block.get("blockState") not in (None, "complete"):
            return False
        if block.get("type") == "tool_use" and block.get("complete") is False:
            return False
    return True


def _user(
    b: SessionBuilder,
    sid: str,
    blocks: list[dict[str, Any]],
    when: float,
    results: dict[str, tuple[str, dict[str, Any]]],
) -> None:
    """A user message: what the user said, the context Amp added (a system node), the tool results it carries."""
    said, added = [], []
    for block in blocks:
        if block.get("type") == "tool_result":
            call_id, text, run = _tool_result(block)
            results[call_id] = (text, run)
        elif block.get("type") == "text":
            extra, text = split_injected(as_str(block.get("text")))
            if extra:
                added.append(extra)
            if text.strip():
                said.append(text)
        elif block.get("type") == "image":
            said.append("[image]")
    if said:
        b.chain(sid, "user", "\n".join(said), created_at=when)
    if added:
        b.chain(f"{sid}:context", "system", "\n".join(added), created_at=when, metadata={"injected": True})


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
        usage = as_dict(msg.get("usage"))
        first_block = next((x.get("startTime") for x in blocks if x.get("startTime")), None)
        when = (
            parse_time(as_dict(msg.get("meta")).get("sentAt"))
            or parse_time(first_block)
            or parse_time(usage.get("timestamp"))
            or (created if index == 0 else 0.0)
        )
        if msg.get("role") == "user":
            _user(b, sid, blocks, when, results)
            continue
        if msg.get("role") == "info":
            summary = _summary(blocks)
            if summary:
                b.chain(sid, "system", summary, created_at=when, metadata={"compaction_summary": True})
            continue
        if msg.get("role") != "assistant":
            report.unknown(f"amp:role:{msg.get('role')}")
            continue
        model = as_str(usage.get("model")) or model
        texts = [as_str(x.get("text")) for x in blocks if x.get("type") == "text"]
        thinking = [as_str(x.get("thinking")) for x in blocks if x.get("type") == "thinking"]
        owner = b.chain(
            sid,
            "assistant",
            "\n".join(texts),
            name=model or None,
            created_at=when,
            done=_complete(msg, blocks),
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
                created_at=parse_time(block.get("startTime")) or when,
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
            git_branch=_branch(thread),
            extra={"layout": "thread", "agent_mode": thread.get("agentMode")},
        )
    ]


class AmpImporter(WholeImporter):
    name = "amp"
    source = SOURCE
    label = "Amp"
    locations = ("$XDG_DATA_HOME/amp/threads", "~/.local/share/amp/threads")
    shape = Shape(("*.json",), records=(("v", "id", "created", "messages"),))
    reads = "thread messages: text, thinking, tool_use, tool_result, compaction summaries"
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
