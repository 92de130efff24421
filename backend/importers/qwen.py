"""Qwen Code: ``$QWEN_HOME`` or ``~/.qwen/projects/<encoded cwd>/chats/<sessionId>.jsonl``
(``chats/archive/`` for archived chats).

One record a line (several may be glued on one line: each whole JSON value is read): ``{uuid,
parentUuid, sessionId, timestamp, type: user|assistant|tool_result|system, subtype, cwd,
gitBranch, model, usageMetadata, systemPayload, toolCallResult, message: {role, parts: [text |
text+thought | functionCall {id, name, args} | functionResponse {id, response}]}}``.

``parentUuid`` makes a tree: a rewind (``system``/``rewind``) makes the next message a new branch
from an earlier one, so branches come out of the tree as they are. A record re-written with the
same ``uuid`` (a reply completed with its tool calls) updates the node it made. ``tool_result``
records fill their calls. The user's own words are ``systemPayload.displayText``; other parts of
a user message (``<qwen:user-prompt-submit-context>`` hook output) are injected context: system
nodes. ``system`` records (telemetry, titles, rewinds, snapshots) are not nodes: their children
hang off their nearest node above; ``custom_title`` names the session. Records naming another
session than the file's are left out (said once).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport, glob_files
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, session

SOURCE = "qwen"
NODE_TYPES = frozenset({"user", "assistant", "tool_result"})


def qwen_home() -> Path:
    env = os.environ.get("QWEN_HOME")
    return Path(env).expanduser() if env else Path.home() / ".qwen"


def _compact(session_id: str) -> str:
    return session_id.replace("-", "").lower()


def records(path: Path, report: ImportReport) -> list[dict[str, Any]]:
    """Every JSON object of the file, glued ones included; a bad line is a warning."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    decoder = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            report.warn(path, number, "line is not UTF-8 text; skipped")
            continue
        at = 0
        while at < len(text):
            try:
                value, end = decoder.raw_decode(text, at)
            except (ValueError, RecursionError):
                if number < len(lines):  # a last line without its newline is still being written
                    report.warn(path, number, "not valid JSON; the rest of the line skipped")
                break
            if isinstance(value, dict):
                value["_line"] = number
                out.append(value)
            else:
                report.warn(path, number, "expected a JSON object; skipped")
            at = end
            while at < len(text) and text[at].isspace():
                at += 1
    return out


class _Tree:
    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path, self.report = path, report
        self.b = SessionBuilder()
        self.node_of: dict[str, str | None] = {}  # record uuid -> the node it is (or stands for)
        self.tools: dict[str, str] = {}  # call id -> tool node
        self.results: dict[str, str] = {}
        self.title, self.title_source = "", "llm"
        self.facts: dict[str, str] = {}
        self.head: str | None = None
        self.index: dict[str, int] = {}

    def parent(self, record: dict[str, Any]) -> str | None:
        above = as_str(record.get("parentUuid"))
        return self.node_of.get(above) if above else None

    def record(self, record: dict[str, Any]) -> None:
        uuid = as_str(record.get("uuid")) or f"{self.path.stem}:{record['_line']}"
        kind = as_str(record.get("type"))
        for key in ("cwd", "gitBranch"):  # as the messages say (a snapshot's may be another folder)
            if kind in NODE_TYPES and as_str(record.get(key)) and not record[key].startswith("["):
                self.facts[key] = record[key]
        parts = [p for p in as_dict(record.get("message")).get("parts") or [] if isinstance(p, dict)]
        payload = as_dict(record.get("systemPayload"))
        when = parse_time(record.get("timestamp"))
        if kind == "system" or kind not in NODE_TYPES:
            if kind == "system" and record.get("subtype") == "custom_title" and as_str(payload.get("customTitle")):
                self.title = payload["customTitle"]
                self.title_source = "user" if payload.get("titleSource") == "manual" else "llm"
            elif kind != "system":
                self.report.unknown(f"qwen:{kind or 'untyped'}")
            self.node_of.setdefault(uuid, self.parent(record))  # transparent: children hang off its parent
            return
        if kind == "tool_result":
            for p in parts:
                response = as_dict(p.get("functionResponse"))
                if response:
                    result = as_dict(record.get("toolCallResult"))
                    body = as_dict(response.get("response"))
                    text = as_str(result.get("resultDisplay")) or as_text(
                        body.get("output") or body.get("error") or body
                    )
                    self.results[as_str(response.get("id"))] = text
            self.node_of.setdefault(uuid, self.parent(record))
            return
        if uuid in self.index and kind == "assistant":
            self.update(uuid, parts, record)
            return
        if kind == "user":
            self.user(uuid, parts, payload, record, when)
        else:
            self.assistant(uuid, parts, record, when)

    def user(
        self, uuid: str, parts: list[dict[str, Any]], payload: dict[str, Any], record: dict[str, Any], when: float
    ) -> None:
        texts = [as_str(p.get("text")) for p in parts if isinstance(p.get("text"), str)]
        said = as_str(payload.get("displayText"))
        added = [t for t in texts if t != said] if said else []
        notice = record.get("subtype") == "notification"
        role = "system" if notice else "user"
        node = self.b.chain(
            uuid,
            role,
            said or "\n".join(texts),
            created_at=when,
            parent=self.parent(record),
            metadata={"subtype": record.get("subtype"), "injected": notice or None},
        )
        if added:
            node = self.b.chain(
                f"{uuid}:context", "system", "\n".join(added), created_at=when, parent=node, metadata={"injected": True}
            )
        self.node_of[uuid] = node
        self.head = node

    def assistant(self, uuid: str, parts: list[dict[str, Any]], record: dict[str, Any], when: float) -> None:
        model = as_str(record.get("model")) or None
        node = self.b.chain(uuid, "assistant", "", name=model, created_at=when, parent=self.parent(record))
        self.index[uuid] = len(self.b.nodes) - 1
        self.node_of[uuid] = node
        self.head = node
        self.update(uuid, parts, record)

    def update(self, uuid: str, parts: list[dict[str, Any]], record: dict[str, Any]) -> None:
        """A reply's record, again: its text, thoughts and calls so far (the newest copy wins)."""
        at = self.index[uuid]
        node = self.b.nodes[at]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
        thoughts = [p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("thought")]
        meta = dict(node.metadata)
        if thoughts:
            meta["thinking"] = "\n".join(thoughts)
        if isinstance(record.get("usageMetadata"), dict):
            meta["tokens"] = record["usageMetadata"]
        model = as_str(record.get("model")) or node.name
        self.b.nodes[at] = replace(node, content="\n".join(texts) or node.content, name=model or None, metadata=meta)
        if model:
            self.b.model = model
        for index, p in enumerate(parts):
            call = as_dict(p.get("functionCall"))
            call_id = as_str(call.get("id"))
            if not call or (call_id and call_id in self.tools):
                continue
            tid = self.b.tool(
                call_id if call_id and not call_id.startswith("[") else f"{uuid}:tool{index}",
                node.id,
                as_str(call.get("name")) or "tool",
                call.get("args"),
                "",
                created_at=node.created_at,
                metadata={"call_id": call_id},
            )
            self.tools[call_id or tid] = tid

    def finish(self, final: bool) -> SessionBuilder:
        b = self.b
        filled = {tid: self.results[cid] for cid, tid in self.tools.items() if cid in self.results}
        b.nodes = [replace(n, content=filled[n.id]) if n.id in filled else n for n in b.nodes]
        if not final:
            waiting = [i for i, n in enumerate(b.nodes) if n.role == "tool" and n.id not in filled]
            if waiting:
                owner = next(i for i, n in enumerate(b.nodes) if n.id == b.nodes[waiting[0]].called_by)
                b.first_open = owner
        return b


SESSION_NAME = re.compile(r"[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}")


def claude_shaped(items: list[dict[str, Any]]) -> bool:
    """Messages with ``content`` and never ``parts``: a Claude Code transcript (same record family,
    another message shape), which read as Qwen would make every tool result a prompt."""
    messages = [as_dict(r.get("message")) for r in items if as_str(r.get("type")) in NODE_TYPES]
    return any("content" in m for m in messages) and not any("parts" in m for m in messages)


def read_chat(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    items = records(path, report)
    if claude_shaped(items):
        report.warn(path, None, "not a Qwen Code chat: its messages hold `content`, not `parts` (a Claude Code "
                    "transcript? `opmem import claude`); skipped")  # fmt: skip
        return []
    tree = _Tree(path, report)
    foreign = 0
    named = [s for s in (as_str(r.get("sessionId")) for r in items) if s and not s.startswith("[")]
    # the file's own session is the one its name says (Qwen names it so); a file renamed to
    # something that is no session id (a copy, a backup): the one its first record names
    own = path.stem if not named or SESSION_NAME.fullmatch(path.stem) else named[0]
    for record in items:
        sid = as_str(record.get("sessionId"))
        if sid and not sid.startswith("[") and _compact(sid) != _compact(own):
            foreign += 1
            continue
        tree.record(record)
    if foreign:
        report.warn(path, None, f"{foreign} record(s) name another session than the file's; left out")
    b = tree.finish(final)
    nodes, _ = b.finished(final)
    kept = {n.id for n in nodes}
    head = tree.head if tree.head in kept else None
    out = session(
        SOURCE,
        own,
        path,
        b,
        final=final,
        title=tree.title,
        title_source=tree.title_source,
        cwd=tree.facts.get("cwd", ""),
        git_branch=tree.facts.get("gitBranch", ""),
        extra={"layout": "chats", "archived": path.parent.name == "archive" or None},
    )
    if head is not None:
        out = replace(out, head=head, extra={k: v for k, v in out.extra.items() if v is not None})
    return [out]


class QwenImporter(WholeImporter):
    name = "qwen"
    source = SOURCE
    label = "Qwen Code"
    locations = ("$QWEN_HOME/projects", "~/.qwen/projects/<project>/chats")
    shape = Shape(("*.jsonl",), records=(("sessionId", "parentUuid", "type", "!isSidechain"),))
    reads = "user, assistant (parts: text, thought, functionCall), tool_result and system records"
    looks_for = "projects/<project>/chats/<sessionId>.jsonl"

    def default_paths(self) -> list[Path]:
        return [qwen_home() / "projects"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return glob_files(
            paths,
            (
                "*.jsonl",
                "chats/*.jsonl",
                "chats/archive/*.jsonl",
                "*/chats/*.jsonl",
                "*/chats/archive/*.jsonl",
            ),
        )

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_chat(path, report, final=final)
