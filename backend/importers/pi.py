"""Pi (badlogic/pi-mono's coding agent): ``~/.pi/agent/sessions/<cwd slug>/<time>_<id>.jsonl``.

A first line ``{type: session, id, timestamp, cwd, branchedFrom?}`` (Oh My Pi may put a
``{type: title, title}`` line before it), then entries ``{type, id, parentId, timestamp}``: the
entries form a tree (a rewind is a branch). ``message`` entries hold ``message {role: user |
assistant | toolResult, content (text, or [text | thinking | toolCall {id, name, arguments}]),
toolCallId (toolResult), model, timestamp (ms)}``; ``model_change {modelId}``, ``compaction
{summary}`` and ``session_info {name}`` are read too, others bridge to their parent. Checked
against kenn-io/agentsview internal/parser/pi.go and types.go (5386007).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, session


def read_pi(path: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    b = SessionBuilder()
    header: dict[str, Any] = {}
    visible: dict[str, str] = {}  # entry id -> the node standing for it (itself or its nearest shown ancestor)
    calls: dict[str, str] = {}  # toolCall id -> tool node
    results: dict[str, tuple[str, bool]] = {}
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
            continue
        message = as_dict(entry.get("message"))
        role = as_str(message.get("role"))
        when = parse_time(entry.get("timestamp")) or parse_time(message.get("timestamp"))
        visible[eid] = parent
        if kind == "model_change":
            model = as_str(entry.get("modelId")) or model
        elif kind == "session_info":
            title = as_str(entry.get("name")) or title
        elif kind == "compaction":
            visible[eid] = b.chain(
                eid,
                "system",
                as_str(entry.get("summary")),
                created_at=when,
                metadata={"compaction": True},
                parent=parent or False,
            )
        elif kind == "message" and role == "user":
            visible[eid] = b.chain(eid, "user", _text(message.get("content")), created_at=when, parent=parent or False)
        elif kind == "message" and role == "assistant":
            visible[eid] = _assistant(b, eid, message, when, parent, calls, model)
        elif kind == "message" and role == "toolResult":
            results[as_str(message.get("toolCallId"))] = (as_text(message.get("content")), bool(message.get("isError")))
        else:
            report.unknown(f"pi:{kind}:{role}" if role else f"pi:{kind}")
    _fill(b, calls, results)
    if not b.nodes:
        return []
    native = as_str(header.get("id")) or path.stem.rsplit("_", 1)[-1]
    branched = as_str(header.get("branchedFrom"))
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


def _assistant(
    b: SessionBuilder, eid: str, message: dict[str, Any], when: float, parent: str, calls: dict[str, str], model: str
) -> str:
    content = message.get("content")
    blocks = [x for x in content if isinstance(x, dict)] if isinstance(content, list) else []
    thinking = "\n".join(as_str(x.get("thinking")) for x in blocks if x.get("type") == "thinking")
    name = as_str(message.get("model")) or model or None
    owner = b.chain(
        eid,
        "assistant",
        _text(content),
        name=name,
        created_at=when,
        metadata={"thinking": thinking},
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


def _fill(b: SessionBuilder, calls: dict[str, str], results: dict[str, tuple[str, bool]]) -> None:
    by_node = {tid: results[cid] for cid, tid in calls.items() if cid in results}
    b.nodes = [
        replace(
            n, content=by_node[n.id][0], metadata={**n.metadata, **({"is_error": True} if by_node[n.id][1] else {})}
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
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".jsonl":
                found[path] = None
            elif path.is_dir():
                for pattern in ("*.jsonl", "*/*.jsonl"):
                    found.update(dict.fromkeys(sorted(p for p in path.glob(pattern) if p.is_file())))
        return list(found)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_pi(path, report, self.source)


class OhMyPiImporter(PiImporter):
    """Oh My Pi (a fork of Pi) keeps Pi's session files under ``~/.omp/agent/sessions`` (subagents in
    a folder named after their parent's file; checked against kenn-io/agentsview pi.go, 5386007)."""

    name = "omp"
    source = "oh-my-pi"
    label = "Oh My Pi"
    locations = ("$OMP_DIR", "~/.omp/agent/sessions")
    shape = replace(PiImporter.shape, within=(".omp",))

    def default_paths(self) -> list[Path]:
        env = os.environ.get("OMP_DIR")
        return [Path(env).expanduser() if env else Path.home() / ".omp" / "agent" / "sessions"]
