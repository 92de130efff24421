"""Coding histories written as data, distilled by the real stages into a real memory.

A session is a list of turns; a turn is a user prompt, tool calls (shell commands with their
output and exit code, file writes, reads) and a reply. `distil_history` runs extract_rules,
link, reconcile and the memory writes (the same stages the pipeline runs, without the session
store), so a test can read the brief core.md renders from what the sessions said.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from opmem_tui.backend.distill.extract import extract_rules
from opmem_tui.backend.distill.link import LINK_TYPES, Linker
from opmem_tui.backend.distill.memory_port import MemoryPort
from opmem_tui.backend.distill.model import CollectedTurn, SessionBatch, SessionInfo
from opmem_tui.backend.distill.reconcile import DEFAULT_SINGLE_VALUED, reconcile
from opmem_tui.backend.memory.core import render_core
from opmem_tui.backend.memory.records import project_scope
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.model import Node

DAY = 86_400.0
T0 = 1_780_000_000.0


@dataclass
class Call:
    """A tool call: `bash` with a command, `write`/`edit` of a path with content, `read` of a path,
    an MCP tool (`mcp__server__tool`) with a query."""

    tool: str
    command: str = ""
    path: str = ""
    content: str = ""
    output: str = ""
    exit_code: int | None = 0


@dataclass
class Turn:
    prompt: str
    calls: Sequence[Call] = ()
    reply: str = "Done."


@dataclass
class Session:
    id: str
    turns: Sequence[Turn]
    day: float = 0.0  # days after T0
    project: str = "demo"
    root: str = "/work/demo"
    nodes: list[Node] = field(default_factory=list)


def _call_node(call: Call, nid: str, seq: int, parent: str, when: float) -> Node:
    meta: dict[str, Any] = {}
    if call.exit_code is not None:
        meta["exit_code"] = call.exit_code
    if call.tool == "bash":
        return Node(nid, seq, "tool", call.output, parent, parent, "Bash", {"command": call.command}, (), when, meta)
    if call.tool == "write":
        args = {"file_path": call.path, "content": call.content}
        return Node(nid, seq, "tool", "File created successfully", parent, parent, "Write", args, (), when, meta)
    if call.tool == "edit":
        args = {"file_path": call.path, "old_string": "x", "new_string": call.content}
        return Node(nid, seq, "tool", "ok", parent, parent, "Edit", args, (), when, meta)
    if call.tool == "read":
        return Node(nid, seq, "tool", call.content, parent, parent, "Read", {"file_path": call.path}, (), when, meta)
    if call.tool.startswith("mcp"):  # an MCP tool by the name the agent calls it (`mcp__server__tool`)
        return Node(nid, seq, "tool", call.output, parent, parent, call.tool, {"query": call.command}, (), when, meta)
    raise ValueError(call.tool)


def batch_of(session: Session) -> SessionBatch:
    info = SessionInfo(
        session_id=session.id,
        title=session.id,
        project_id=session.project,
        project_name=session.project,
        root=session.root,
        source="claude",
        scope=project_scope(session.project),
    )
    turns = []
    seq = 0
    start = T0 + session.day * DAY
    parent: str | None = None
    for number, turn in enumerate(session.turns, 1):
        nodes = []
        when = start + number * 60
        uid = f"{session.id}-u{number}"
        nodes.append(Node(uid, seq, "user", turn.prompt, parent, None, None, None, (), when))
        seq += 1
        aid = f"{session.id}-a{number}"
        nodes.append(Node(aid, seq, "assistant", turn.reply, uid, None, "claude-test", None, (), when + 1))
        seq += 1
        for index, call in enumerate(turn.calls):
            nodes.append(_call_node(call, f"{session.id}-t{number}-{index}", seq, aid, when + 2 + index))
            seq += 1
        parent = aid
        turns.append(CollectedTurn(info, tuple(nodes), number))
    return SessionBatch(info, tuple(turns), seq - 1)


def distil_history(root: Path, sessions: Sequence[Session], *, at: float = T0) -> MemoryStore:
    """Every session through extract, link, reconcile and a durable write, in the order given."""
    memory = MemoryStore(root)
    linker: Linker | None = None
    for session in sessions:
        port = MemoryPort(memory, set())
        if linker is None:
            linker = Linker(port.known_entities(LINK_TYPES))
        extraction = extract_rules(batch_of(session), ingestion_time=at)
        linked = linker.link(extraction, at=at)
        reconciled = reconcile(
            linked,
            current_edges=port.current_edges,
            current_events=port.current_events,
            category_of=port.category_of,
            single_valued=DEFAULT_SINGLE_VALUED,
            at=at,
        )
        port.stage(reconciled)
        port.flush()
        memory.refresh()
    return memory


def brief_of(memory: MemoryStore, project: str = "demo", day: date = date(2026, 6, 1)) -> str:
    return render_core(memory, day, project, project)


def package_json(deps: dict[str, str], dev: dict[str, str] | None = None, **extra: Any) -> str:
    data: dict[str, Any] = {"name": "app", "dependencies": deps}
    if dev:
        data["devDependencies"] = dev
    data.update(extra)
    return json.dumps(data, indent=2)
