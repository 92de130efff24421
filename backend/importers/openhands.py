"""OpenHands CLI (V1, the agent SDK): ``~/.openhands/conversations/<id>/``.

A conversation folder holds ``base_state.json`` (``agent {llm {model}}``, the workspace) and
``events/*.json``, one event a file in order: ``{kind, id, timestamp, source}`` with kind
``MessageEvent`` (``llm_message {role: user | assistant, content [{type: text, text}]}``,
``reasoning_content``), ``ActionEvent`` (a tool call: ``tool_name``, ``tool_call_id``,
``tool_call {name, arguments}``, ``action``, ``thought [{text}]``) and ``ObservationEvent``
(its result: ``tool_call_id``, ``observation {content [{type: text, text}] | command, detail}``;
``AgentErrorEvent {error}`` and ``UserRejectObservation {rejection_reason}`` end a call too).
Event files are ``event-<index, 5+ digits>-<id>.json``, read in index order. Each event may have
a ``parent_id``: the events are a tree (forks and navigation are sibling branches; ``__root__``
is an explicit root; an event without one follows the event before it), and ``base_state.json``'s
``leaf_event_id`` is the active branch's end (the head). ``timestamp`` is
``datetime.now().isoformat()`` (local, no zone: read as UTC); the workspace's ``working_dir`` is
the folder. Checked against the SDK that writes it, OpenHands/software-agent-sdk at 611629e:
openhands-sdk/openhands/sdk/conversation/persistence_const.py, event_store.py
(_effective_parent_id), state.py (leaf_event_id), event/base.py, event/llm_convertible/
observation.py; the CLI's folders in OpenHands/OpenHands-CLI at 6b3838c openhands_cli/locations.py;
and kenn-io/agentsview internal/parser/openhands.go and types.go (5386007).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .agent_db import DbStamp
from .base import ImportedSession, ImportReport
from .record_values import parse_time
from .shape import Probe, Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, folder_stamp, load_json, session, session_folders


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(as_str(as_dict(x).get("text")) for x in value if as_str(as_dict(x).get("text")))
    return as_str(value)


EVENT_NAME = re.compile(r"^event-(\d+)-")  # the SDK pads the index to five digits but does not cap it
ROOT = "__root__"  # parent_id of an explicit root (event/types.py ROOT_PARENT_ID)


def _events(folder: Path) -> list[Path]:
    def index(path: Path) -> tuple[int, str]:
        m = EVENT_NAME.match(path.name)
        return (int(m.group(1)) if m else -1, path.name)

    return sorted((folder / "events").glob("*.json"), key=index)


def read_conversation(folder: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    state = as_dict(load_json(folder / "base_state.json")) if (folder / "base_state.json").exists() else {}
    model = as_str(as_dict(as_dict(state.get("agent")).get("llm")).get("model"))
    b = SessionBuilder()
    calls: dict[str, str] = {}
    stands: dict[str, str] = {}  # event id -> the chain node standing for it (an action: its reply)
    roles: dict[str, str] = {}  # chain node -> its role
    previous = ""
    for path in _events(folder):
        try:
            event = as_dict(load_json(path))
        except (OSError, ValueError) as exc:
            report.warn(path, None, f"not a readable event ({exc}); skipped")
            continue
        kind = as_str(event.get("kind"))
        eid = as_str(event.get("id")) or path.stem
        when = parse_time(event.get("timestamp"))
        # an event's parent_id places it in the tree; events older than the tree follow the one before
        raw_parent = as_str(event.get("parent_id")) or previous
        parent = None if raw_parent == ROOT else stands.get(raw_parent) or None
        stands[eid] = parent or ""
        previous = eid
        if kind == "MessageEvent":
            message = as_dict(event.get("llm_message"))
            role = as_str(message.get("role"))
            if role not in ("user", "assistant"):
                continue
            thinking = as_str(message.get("reasoning_content"))
            made = b.chain(
                eid,
                role,
                _text(message.get("content")),
                name=model or None if role == "assistant" else None,
                created_at=when,
                metadata={"thinking": thinking},
                parent=parent,
            )
            stands[eid], roles[made] = made, role
        elif kind == "ActionEvent":
            call = as_dict(event.get("tool_call"))
            name = as_str(event.get("tool_name")) or as_str(call.get("name")) or "tool"
            args: Any = call.get("arguments")
            try:
                args = json.loads(args) if isinstance(args, str) else args
            except ValueError:
                pass
            owner = parent if parent and roles.get(parent) == "assistant" else None
            if owner is None:
                owner = b.chain(
                    f"{eid}:reply",
                    "assistant",
                    _text(event.get("thought")),
                    name=model or None,
                    created_at=when,
                    parent=parent,
                )
                roles[owner] = "assistant"
            stands[eid] = owner
            calls[as_str(event.get("tool_call_id"))] = b.tool(
                eid, owner, name, args or event.get("action"), "", created_at=when
            )
        elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            observation = as_dict(event.get("observation"))
            text = (
                _text(observation.get("content"))
                or "\n".join(x for x in (as_str(observation.get("command")), as_str(observation.get("detail"))) if x)
                or as_str(event.get("error"))
                or as_str(event.get("rejection_reason"))
            )
            tid = calls.get(as_str(event.get("tool_call_id")))
            if tid is not None:
                failed = {"is_error": True} if kind != "ObservationEvent" else {}
                b.nodes = [
                    replace(n, content=text, metadata={**n.metadata, **failed}) if n.id == tid else n for n in b.nodes
                ]
        else:
            report.unknown(f"openhands:{kind}")
    if not b.nodes:
        return []
    native = as_str(state.get("id")) or folder.name
    cwd = as_str(as_dict(state.get("workspace")).get("working_dir"))
    made = session(source, native, folder, b, final=True, model=model, cwd=cwd)
    leaf = stands.get(as_str(state.get("leaf_event_id")))
    return [replace(made, head=leaf) if leaf else made]  # the branch the conversation is on


def openhands_conversations() -> Path:
    """The CLI's locations.py: $OPENHANDS_CONVERSATIONS_DIR, else <persistence dir>/conversations,
    the persistence dir being $OPENHANDS_PERSISTENCE_DIR or ~/.openhands."""
    env = os.environ.get("OPENHANDS_CONVERSATIONS_DIR")
    if env:
        return Path(env).expanduser()
    root = os.environ.get("OPENHANDS_PERSISTENCE_DIR")
    return (Path(root).expanduser() if root else Path.home() / ".openhands") / "conversations"


class OpenHandsImporter(WholeImporter):
    name = "openhands"
    source = "openhands"
    label = "OpenHands CLI"
    locations = (
        "$OPENHANDS_CONVERSATIONS_DIR",
        "$OPENHANDS_PERSISTENCE_DIR/conversations",
        "~/.openhands/conversations",
    )
    shape = Shape(("base_state.json",), folder=True, also=("events/*.json",))
    reads = "message events (user, assistant, reasoning), action events (tool calls) and their observations"
    looks_for = "conversations/<id>/base_state.json with events/"

    def claims(self, probe: Probe) -> Path | None:
        unit = super().claims(probe)
        return unit if unit is not None and (unit / "events").is_dir() else None

    def default_paths(self) -> list[Path]:
        return [openhands_conversations()]

    def file_stat(self, path: Path) -> Any:
        here, events = folder_stamp(path), folder_stamp(path / "events")
        return DbStamp(here.st_size + events.st_size, max(here.st_mtime_ns, events.st_mtime_ns))

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        markers = ("base_state.json", "*/base_state.json")
        return session_folders(paths, ("base_state.json",), markers, keep=lambda f: (f / "events").is_dir())

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_conversation(path, report, self.source)
