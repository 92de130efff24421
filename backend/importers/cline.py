"""Cline and Roo Code (VS Code extensions): one folder per task in the extension's globalStorage.

Where: ``<VS Code user dir>/globalStorage/saoudrizwan.claude-dev/tasks/<taskId>/`` (Cline; its
CLI: ``~/.cline/data`` or ``$CLINE_DIR``) and ``.../rooveterinaryinc.roo-cline/tasks/<taskId>/``
(Roo Code), in VS Code and in each fork (Cursor, Windsurf, VSCodium, ...). The task id is a ms
timestamp.

A task folder holds ``api_conversation_history.json`` (the Anthropic messages array: ``role``,
``content`` of ``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` / ``image`` blocks;
assistant messages may add ``modelInfo``), ``ui_messages.json`` (what the panel showed, with
``ts``; a ``partial`` last message is still streaming), and ``task_metadata.json`` (Cline:
``model_usage``) or ``history_item.json`` (Roo: ``parentTaskId``, ``workspace``, ``mode``).
``state/taskHistory.json`` beside ``tasks/`` indexes the tasks (``cwdOnTaskInitialization``).

User text blocks of ``<environment_details>`` (and similar) are context the extension added:
system nodes. ``<task>``/``<feedback>`` wrappers are unwrapped. Cline 3.5x writes tool results
as user text blocks ``[tool for 'x'] Result: ...`` instead of ``tool_result`` blocks: those fill
the pending calls in order.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from .base import ImportedSession, ImportReport
from .cline_ui import read_ui, request_times
from .cursor import vscode_user_dirs
from .record_values import as_text, parse_time
from .shape import Probe, Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, folder_stamp, load_json, session, split_injected

HISTORY = "api_conversation_history.json"
UI_MESSAGES = "ui_messages.json"
TASK_ID = re.compile(r"(\d{10,})$")
VSCODE_APPS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf", "Trae", "Kiro", "Positron")
WRAPPERS = re.compile(r"<(task|feedback|user_message)>\s*(.*?)\s*</\1>", re.S)
# What the extension writes into a user message besides the user's words (reminders, resumption
# notes, errors it reports to the model, attached file contents): system nodes.
EXTENSION_NOTES = (
    "[TASK RESUMPTION]",
    "# task_progress",
    "# TODO LIST UPDATE REQUIRED",
    "[ERROR]",
    "The user has provided feedback on the results",
    "(The user did not provide a new message",
    "Files attached by the user:",
    "New instructions for task continuation:",
    "New message to respond to",
    "<file_content",
)
RESULT_TEXT = re.compile(r"^\s*\[\w+(?: for .*?)?\] Result:", re.S)  # "[read_file for 'a[1].py'] Result:"


def extension_dirs(extension: str) -> list[Path]:
    """``globalStorage/<extension>`` of VS Code and each fork, Linux and macOS."""
    return [user / "globalStorage" / extension for app in VSCODE_APPS for user in vscode_user_dirs(app)]


def _optional(path: Path, report: ImportReport) -> Any:
    if not path.exists():
        return None
    try:
        return load_json(path)
    except OSError as exc:
        report.warn(path, None, f"cannot read: {exc.strerror or exc}")
    except (ValueError, RecursionError) as exc:
        report.warn(path, None, f"not valid JSON ({exc})")
    return None


def _words(text: str) -> tuple[str, str]:
    """(what the user wrote, what the extension added) in one text block: the inside of a
    ``<task>`` / ``<feedback>`` / ``<user_message>`` wrapper is the user's, notes around it are not."""
    found = [m.group(2) for m in WRAPPERS.finditer(text)]
    if found:
        rest = WRAPPERS.sub("", text).strip()
        return "\n".join(found), rest
    if not text.strip():
        return "", ""
    if text.lstrip().startswith(EXTENSION_NOTES):
        return "", text.strip()
    return text, ""


def _task_index(folder: Path, report: ImportReport) -> dict[str, Any]:
    """This task's entry in ``state/taskHistory.json`` (beside ``tasks/``), if any."""
    index = folder.parent.parent / "state" / "taskHistory.json"
    items = _optional(index, report) if index.exists() else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and str(item.get("id")) == folder.name:
            return item
    return {}


class _Task:
    def __init__(self, folder: Path, report: ImportReport) -> None:
        self.folder, self.report = folder, report
        self.b = SessionBuilder()
        self.pending: list[str] = []
        self.by_call: dict[str, str] = {}
        self.results: dict[str, tuple[str, bool]] = {}

    def message(self, index: int, msg: dict[str, Any], when: float, sid: str | None = None) -> None:
        role = msg.get("role")
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": as_str(content)}]
        blocks = [x for x in blocks if isinstance(x, dict)]
        sid = sid or f"{task_id(self.folder)}:{index}"
        if role == "user":
            self.user(sid, blocks, when)
        elif role == "assistant":
            self.assistant(sid, blocks, msg, when)
        else:
            self.report.unknown(f"cline:role:{role}")

    def user(self, sid: str, blocks: list[dict[str, Any]], when: float) -> None:
        said, added, images = [], [], 0
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                self.result(
                    as_str(block.get("tool_use_id")), as_text(block.get("content")), bool(block.get("is_error"))
                )
            elif kind == "text":
                text = as_str(block.get("text"))
                if RESULT_TEXT.match(text):  # a tool's result; with no call waiting (resumed task), a note
                    if self.pending:
                        self.result("", text, False)
                    else:
                        added.append(text)
                    continue
                extra, text = split_injected(text)
                if extra:
                    added.append(extra)
                words, note = _words(text)
                if words:
                    said.append(words)
                if note:
                    added.append(note)
            elif kind == "image":
                images += 1
        if said:
            self.b.chain(sid, "user", "\n".join(said), created_at=when, metadata={"images": images or None})
            self.pending = []
        if added:
            self.b.chain(f"{sid}:context", "system", "\n".join(added), created_at=when, metadata={"injected": True})

    def result(self, call_id: str, text: str, error: bool) -> None:
        target = self.by_call.get(call_id) or next(iter(self.pending), None)
        if target is not None:
            self.results[target] = (text, error)
            if target in self.pending:
                self.pending.remove(target)

    def assistant(self, sid: str, blocks: list[dict[str, Any]], msg: dict[str, Any], when: float) -> None:
        texts, thinking, calls = [], [], []
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                texts.append(as_str(block.get("text")))
            elif kind in ("thinking", "reasoning"):
                thinking.append(as_str(block.get("thinking")) or as_str(block.get("text")))
            elif kind == "tool_use":
                calls.append(block)
        info = as_dict(msg.get("modelInfo"))
        model = as_str(info.get("modelId")) or None
        meta = {"thinking": "\n".join(thinking), "tokens": as_dict(msg.get("metrics")).get("tokens")}
        owner = self.b.chain(sid, "assistant", "\n".join(texts), name=model, created_at=when, metadata=meta)
        for index, call in enumerate(calls):
            name = as_str(call.get("name")) or "tool"
            call_id = as_str(call.get("id"))
            tid = self.b.tool(
                f"{sid}:tool{index}", owner, name, call.get("input"), "", created_at=when, metadata={"call_id": call_id}
            )
            self.pending.append(tid)
            if call_id:
                self.by_call[call_id] = tid

    def finish(self, final: bool, streaming: bool) -> SessionBuilder:
        b = self.b
        if self.results:
            b.nodes = [
                replace(
                    n,
                    content=self.results[n.id][0],
                    metadata={**n.metadata, "is_error": True} if self.results[n.id][1] else n.metadata,
                )
                if n.id in self.results
                else n
                for n in b.nodes
            ]
        if not final and b.nodes:
            last_chain = next(i for i, n in enumerate(b.nodes) if n.id == b.tip)
            waiting = any(n.id in self.pending for n in b.nodes[last_chain:])
            if b.nodes[last_chain].role == "assistant" and (streaming or waiting):
                b.first_open = last_chain  # a reply still streaming, or its tools still running
        return b


def task_id(folder: Path) -> str:
    """The task's id: its folder's name, or the ms timestamp ending it (``exported_task_<id>``)."""
    match = TASK_ID.search(folder.name)
    return match.group(1) if match and match.group(1) != folder.name else folder.name


def _times(history: list[Any], ui: list[dict[str, Any]], started: float) -> list[float]:
    """When each history message was sent: a user message when the request carrying it started, an
    assistant message when the panel last showed its request (ui ``api_req_started`` in order)."""
    requests = request_times(ui)
    out, replies, last = [], 0, started
    for index, msg in enumerate(history):
        role = msg.get("role") if isinstance(msg, dict) else None
        when = parse_time(msg.get("ts")) if isinstance(msg, dict) else 0.0
        if not when and role == "assistant" and replies < len(requests):
            when = requests[replies][1]
        elif not when and index and replies < len(requests):
            when = requests[replies][0]
        if role == "assistant":
            replies += 1
        when = max(when or last, last)
        out.append(when)
        last = when
    return out


def read_task(folder: Path, source: str, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    history_path = folder / HISTORY
    ui = _optional(folder / UI_MESSAGES, report)
    ui = [m for m in ui if isinstance(m, dict)] if isinstance(ui, list) else []
    history = _optional(history_path, report)  # a problem names the file, not only its folder
    if history is None and (history_path.exists() or not ui):
        return []  # an unreadable history is a warning, not a cue to read the panel instead
    if history is not None and not isinstance(history, list):
        report.warn(history_path, None, "not a conversation history: expected a JSON list of messages")
        return []
    meta = as_dict(_optional(folder / "task_metadata.json", report))
    item = as_dict(_optional(folder / "history_item.json", report)) or _task_index(folder, report)
    native = task_id(folder)
    started = parse_time(ui[0].get("ts")) if ui else 0.0
    started = started or parse_time(item.get("ts")) or parse_time(int(native) if native.isdigit() else 0)
    streaming = bool(ui and ui[-1].get("partial"))
    if history is None:  # a partial task: its panel messages hold the conversation and its tool calls
        b = read_ui(native, ui)
        if not final and streaming:
            b.first_open = b.first_open if b.first_open is not None else max(len(b.nodes) - 1, 0)
    else:
        task = _Task(folder, report)
        for index, (msg, when) in enumerate(zip(history, _times(history, ui, started), strict=True)):
            if isinstance(msg, dict):
                task.message(index, msg, when)
            else:
                report.warn(history_path, None, f"message {index + 1} is not an object; skipped")
        b = task.finish(final, streaming)
    usage = meta.get("model_usage")
    model = as_str(item.get("modelId") or item.get("apiModelId"))
    if isinstance(usage, list) and usage and isinstance(usage[-1], dict):
        model = model or as_str(usage[-1].get("model_id"))
    cwd = as_str(item.get("cwdOnTaskInitialization") or item.get("workspace"))
    parent = as_str(item.get("parentTaskId")) or None
    layout = "task-folder" if history is not None else "ui-messages"
    extra = {"layout": layout, "mode": item.get("mode"), "cost": item.get("totalCost")}
    return [
        session(
            source,
            native,
            folder,
            b,
            final=final,
            cwd=cwd,
            model=model,
            kind="subagent" if parent else "trunk",
            parent_native_id=parent,
            extra={k: v for k, v in extra.items() if v is not None},
        )
    ]


class _TaskFolders(WholeImporter):
    extension: str
    looks_for = "tasks/<id>/api_conversation_history.json or ui_messages.json"
    shape = Shape((HISTORY, UI_MESSAGES), folder=True, also=("task_metadata.json", "history_item.json"))
    reads = "api_conversation_history (text, thinking, tool_use, tool_result), ui_messages (times; all when alone)"
    other_marker: ClassVar[str] = ""  # a file only another extension writes: a task holding it is not ours

    def claims(self, probe: Probe) -> Path | None:
        """A task folder; one holding neither extension's own file fits Cline and Roo (named as both)."""
        unit = super().claims(probe)
        return None if unit is None or (self.other_marker and (unit / self.other_marker).exists()) else unit

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.name == HISTORY:
                found[path.parent] = None
            elif path.is_dir():
                if (path / HISTORY).is_file():
                    found[path] = None
                for item in sorted(path.rglob(HISTORY)):  # tasks/<id>/ at any depth (a user dir, a fork's)
                    if item.parent.parent.name == "tasks" and item.is_file():
                        found[item.parent] = None
        return list(found)

    def file_stat(self, path: Path) -> Any:
        return folder_stamp(path)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_task(path, self.source, report, final=final)


class ClineImporter(_TaskFolders):
    name = "cline"
    source = "cline"
    label = "Cline"
    locations = ("<VS Code user dir>/globalStorage/saoudrizwan.claude-dev/tasks", "$CLINE_DIR", "~/.cline/data")
    extension = "saoudrizwan.claude-dev"
    other_marker = "history_item.json"

    def default_paths(self) -> list[Path]:
        cli = Path(os.environ["CLINE_DIR"]) if os.environ.get("CLINE_DIR") else Path.home() / ".cline" / "data"
        return [*extension_dirs(self.extension), cli]


class RooImporter(_TaskFolders):
    name = "roo"
    source = "roo-code"
    label = "Roo Code"
    aliases = ("roo-code",)
    locations = ("<VS Code user dir>/globalStorage/rooveterinaryinc.roo-cline/tasks",)
    extension = "rooveterinaryinc.roo-cline"
    other_marker = "task_metadata.json"

    def default_paths(self) -> list[Path]:
        return extension_dirs(self.extension)


class KiloLegacyImporter(_TaskFolders):
    """Kilo Code's VS Code extension before it moved onto OpenCode's core (2026-03): Cline's task
    folders (checked against kenn-io/agentsview internal/parser/kilo_legacy.go, 5386007)."""

    name = "kilo-legacy"
    source = "kilo-code"
    label = "Kilo Code (extension, before 2026-03)"
    extension = "kilocode.kilo-code"
    locations = ("<VS Code user dir>/globalStorage/kilocode.kilo-code/tasks",)
    shape = replace(_TaskFolders.shape, within=("kilocode.kilo-code",))

    def default_paths(self) -> list[Path]:
        return extension_dirs(self.extension)
