"""Pi (badlogic/pi-mono's coding agent): ``~/.pi/agent/sessions/<cwd slug>/<time>_<id>.jsonl``.

A first line ``{type: session, version?, id, timestamp, cwd, parentSession? (a fork's parent
file; Oh My Pi: branchedFrom)}`` (Oh My Pi may put a ``{type: title, title}`` line before it),
then entries ``{type, id, parentId, timestamp (ISO)}``: the entries form a tree (a rewind is a
branch). Version 1 files (no ``version``) have no ``id``/``parentId``: a line follows the line
before it. ``message`` entries hold ``message {role, content (text, or [text | thinking |
toolCall {id, name, arguments}]), toolCallId (toolResult), model, timestamp (ms)}``: roles user,
assistant, toolResult (joined to its toolCall by id), bashExecution (a ``!command`` the user ran,
written as Pi puts it to the model), custom, branchSummary, compactionSummary.
``model_change {modelId}``, ``compaction {summary}``, ``branch_summary {summary}``,
``custom_message {content}`` and ``session_info {name}`` are read too; others
(thinking_level_change, label, custom) bridge to their parent. Checked against the agent's
source, badlogic/pi-mono at 83378aa: packages/coding-agent/docs/session.md,
src/core/session-manager.ts, src/core/messages.ts, and its real v1 session
test/fixtures/large-session.jsonl (the sample ``tests/fixtures/agents/pi/real-v1``); and against
kenn-io/agentsview internal/parser/pi.go and types.go (5386007).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport, glob_files
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, session


def read_pi(path: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    b = SessionBuilder()
    header: dict[str, Any] = {}
    visible: dict[str, str] = {}  # entry id -> the node standing for it (itself or its nearest shown ancestor)
    calls: dict[str, str] = {}  # toolCall id -> tool node
    results: dict[str, tuple[str, bool, float]] = {}
    title, model = "", ""
    for number, entry in json_lines(path, report):
        kind = as_str(entry.get("type"))
        eid = as_str(entry.get("id")) or f"{path.stem}:{number}"
        parent = visible.get(as_str(entry.get("parentId")), b.tip or "") if entry.get("parentId") else (b.tip or "")
        if kind == "title":
            title = as_str(entry.get("title")) or title
            continue
        if kind == "session" and not header:
            header = entry
            title = as_str(entry.get("title")) or title  # Oh My Pi writes a generated title here
            continue
        message = as_dict(entry.get("message"))
        role = as_str(message.get("role"))
        when = parse_time(entry.get("timestamp")) or parse_time(message.get("timestamp"))
        visible[eid] = parent
        if kind == "model_change":
            model = as_str(entry.get("modelId")) or model
        elif kind == "session_info":
            title = as_str(entry.get("name")) or title
        elif kind in ("compaction", "branch_summary") or role in ("compactionSummary", "branchSummary"):
            flag = "compaction" if "ompaction" in kind + role else "branch_summary"
            summary = as_str(entry.get("summary")) or as_str(message.get("summary"))
            visible[eid] = b.chain(
                eid, "system", summary, created_at=when, metadata={flag: True}, parent=parent or False
            )
        elif kind == "custom_message" or role == "custom":
            source = entry if kind == "custom_message" else message
            visible[eid] = b.chain(
                eid,
                "system",
                _text(source.get("content")),
                created_at=when,
                metadata={"custom_type": as_str(source.get("customType"))},
                parent=parent or False,
            )
        elif kind == "message" and role == "bashExecution":
            visible[eid] = b.chain(eid, "user", _bash(message), created_at=when, parent=parent or False)
        elif kind == "message" and role == "user":
            visible[eid] = b.chain(eid, "user", _text(message.get("content")), created_at=when, parent=parent or False)
        elif kind == "message" and role == "assistant":
            visible[eid] = _assistant(b, eid, message, when, parent, calls, model)
        elif kind == "message" and role == "toolResult":
            results[as_str(message.get("toolCallId"))] = (
                as_text(message.get("content")),
                bool(message.get("isError")),
                when,
            )
        else:
            report.unknown(f"pi:{kind}:{role}" if role else f"pi:{kind}")
    _fill(b, calls, results)
    if not b.nodes:
        return []
    native = as_str(header.get("id")) or path.stem.rsplit("_", 1)[-1]
    branched = as_str(header.get("parentSession")) or as_str(header.get("branchedFrom"))
    parent_native = Path(branched.replace("\\", "/")).stem.rsplit("_", 1)[-1] if branched else None
    return [
        session(
            source,
            native,
            path,
            b,
            final=True,
            title=title,
            cwd=as_str(header.get("cwd")),
            model=model,
            kind="fork" if parent_native else "trunk",
            parent_native_id=parent_native,
        )
    ]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(as_str(x.get("text")) for x in blocks if isinstance(x, dict) and x.get("type") == "text")


def _bash(message: dict[str, Any]) -> str:
    """A ``!command`` the user ran, as Pi puts it to the model (messages.ts bashExecutionToText)."""
    text = f"Ran `{as_str(message.get('command'))}`\n"
    output = as_str(message.get("output"))
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    return text


def _assistant(
    b: SessionBuilder, eid: str, message: dict[str, Any], when: float, parent: str, calls: dict[str, str], model: str
) -> str:
    content = message.get("content")
    blocks = [x for x in content if isinstance(x, dict)] if isinstance(content, list) else []
    thinking = "\n".join(as_str(x.get("thinking")) for x in blocks if x.get("type") == "thinking")
    name = as_str(message.get("model")) or model or None
    stop = {k: as_str(message.get(k)) for k in ("stopReason", "errorMessage") if as_str(message.get(k))}
    owner = b.chain(
        eid,
        "assistant",
        _text(content),
        name=name,
        created_at=when,
        metadata={"thinking": thinking, **stop},
        parent=parent or False,
    )
    for n, call in enumerate(x for x in blocks if x.get("type") == "toolCall"):
        call_id = as_str(call.get("id"))
        tid = b.tool(
            f"{eid}:tool{n}",
            owner,
            as_str(call.get("name")) or "tool",
            call.get("arguments"),
            "",
            created_at=when,
            metadata={"call_id": call_id},
        )
        calls[call_id] = tid
    return owner


def _fill(b: SessionBuilder, calls: dict[str, str], results: dict[str, tuple[str, bool, float]]) -> None:
    """Each tool node gets its result's text and time (the result is written when the tool ends)."""
    by_node = {tid: results[cid] for cid, tid in calls.items() if cid in results}
    b.nodes = [
        replace(
            n,
            content=by_node[n.id][0],
            created_at=by_node[n.id][2] or n.created_at,
            metadata={**n.metadata, **({"is_error": True} if by_node[n.id][1] else {})},
        )
        if n.id in by_node
        else n
        for n in b.nodes
    ]


def pi_home() -> Path:
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(env).expanduser() if env else Path.home() / ".pi" / "agent"


class PiImporter(WholeImporter):
    name = "pi"
    source = "pi"
    label = "Pi"
    locations = ("$PI_CODING_AGENT_DIR/sessions", "~/.pi/agent/sessions")
    shape = Shape(("*.jsonl",), records=(("type=session", "id", "timestamp", "cwd", "!payload"),))
    reads = (
        "the entry tree: user, assistant (text, thinking, toolCall) and toolResult messages, compactions, model changes"
    )
    looks_for = "sessions/<cwd>/<time>_<id>.jsonl"

    def default_paths(self) -> list[Path]:
        return [pi_home() / "sessions"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return glob_files(paths, ("*.jsonl", "*/*.jsonl"))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_pi(path, report, self.source)


class OhMyPiImporter(PiImporter):
    """Oh My Pi (a fork of Pi) keeps Pi's session files under ``<agent dir>/sessions``, the agent dir
    being ``$OMP_CODING_AGENT_DIR`` or ``~/.omp/agent`` (subagents in a folder named after their
    parent's file); its header may carry a generated ``title``. Checked against kenn-io/agentsview
    pi.go (5386007) and the agent's source, can1357/oh-my-pi at adad196:
    packages/coding-agent/src/config.ts (``ENV_AGENT_DIR``, ``getSessionsDir``) and
    src/core/session-manager.ts (``SessionHeader``)."""

    name = "omp"
    source = "oh-my-pi"
    label = "Oh My Pi"
    locations = ("$OMP_CODING_AGENT_DIR/sessions", "~/.omp/agent/sessions")
    shape = replace(PiImporter.shape, within=(".omp",))

    def default_paths(self) -> list[Path]:
        env = os.environ.get("OMP_CODING_AGENT_DIR")
        return [(Path(env).expanduser() if env else Path.home() / ".omp" / "agent") / "sessions"]
