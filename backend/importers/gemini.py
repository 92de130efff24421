"""Gemini CLI chats: ``~/.gemini/tmp/<project>/chats/session-*.json`` and ``session-*.jsonl``.

Two layouts:

- legacy (<= 0.38) ``session-*.json``: one JSON object ``{sessionId, projectHash, startTime,
  lastUpdated, messages: [...]}``, rewritten whole on every update.
- current (>= 0.39) ``session-*.jsonl``: a header line ``{sessionId, projectHash, startTime,
  kind}``, then message records (upserted by ``id``: a message is re-appended each time its tool
  results or tokens change), ``{"$set": {...}}`` metadata patches (``$set.messages`` replaces
  the model's history, e.g. after compression) and ``{"$rewindTo": id}``, which drops that
  message and everything after it. The dropped messages stay here as an abandoned branch;
  the next message forks from the one before the rewind point.

Message types: ``user`` -> user (an injected ``<session_context>`` -> system), ``gemini`` ->
assistant (its ``toolCalls`` -> tool nodes, ``thoughts``/``tokens`` -> metadata), ``info``,
``error``, ``warning`` -> system. Subagent chats live in ``chats/<parent session id>/``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import ImportedSession, ImportFormatError, ImportReport, LineImporter, is_final
from .drafts import Draft, DraftGraph, LineParser
from .record_values import as_text, count_images, load_object, parse_time
from .shape import Probe, Shape

SOURCE = "gemini"

SYSTEM_TYPES = frozenset({"info", "error", "warning", "system", "compression"})
TERMINAL_STATUS = frozenset({"success", "error", "cancelled"})
_INJECTED_PREFIXES = ("<session_context>", "<system-reminder>", "<memory_context>")


# ---------------------------------------------------------------------------------------------
# the line parser


def parse_line(text: str) -> tuple[str, dict[str, Any]]:
    """One JSONL line -> (kind, record); kind is header | message | set | rewind. Raises only ImportFormatError."""
    obj = load_object(text)
    if "$rewindTo" in obj:
        if not isinstance(obj["$rewindTo"], str):
            raise ImportFormatError("'$rewindTo' must be a message id")
        return "rewind", obj
    if "$set" in obj:
        if not isinstance(obj["$set"], dict):
            raise ImportFormatError("'$set' must be a JSON object")
        return "set", obj
    if "id" in obj:
        check_message(obj)
        return "message", obj
    if isinstance(obj.get("sessionId"), str):
        return "header", obj
    raise ImportFormatError("unrecognised record: no 'id', '$set', '$rewindTo' or 'sessionId'")


def check_message(msg: Any) -> dict[str, Any]:
    if not isinstance(msg, dict):
        raise ImportFormatError("a message must be a JSON object")
    if not isinstance(msg.get("id"), str) or not msg["id"]:
        raise ImportFormatError("message 'id' must be a non-empty string")
    if not isinstance(msg.get("type"), str):
        raise ImportFormatError(f"message {msg['id']!r} has no 'type'")
    tool_calls = msg.get("toolCalls")
    if tool_calls is not None and not isinstance(tool_calls, list):
        raise ImportFormatError(f"message {msg['id']!r}: 'toolCalls' must be a list")
    return msg


# ---------------------------------------------------------------------------------------------
# building the DAG


class GeminiReader:
    """Folds message records into drafts.

    A message becomes a draft when first seen; a re-appended copy (same id) updates it in place
    until it is frozen (settled) by a later message, a rewind or a history replacement.
    """

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report
        self.graph = DraftGraph()
        self.header: dict[str, Any] = {}
        self.meta: dict[str, Any] = {}
        self.effective: list[str] = []  # message ids of the current history, in order
        self.open: dict[str, Draft] = {}  # message id -> its draft, not frozen yet
        self.tools: dict[str, dict[str, Draft]] = {}  # message id -> call key -> tool draft
        self.node_of: dict[str, str] = {}  # message id -> chain source id
        self.rewinds: list[dict[str, Any]] = []
        self.prefix = path.name

    # -- records -------------------------------------------------------------------------

    def feed(self, kind: str, record: dict[str, Any], offset: int, line: int) -> None:
        """Apply one record. Raises only ImportFormatError."""
        if kind == "header":
            if not self.header:
                self.header = record
            self.meta.update(record)
        elif kind == "message":
            self._message(record, offset, line)
        elif kind == "set":
            patch = record["$set"]
            messages = patch.get("messages")
            if messages is not None:
                if not isinstance(messages, list):
                    raise ImportFormatError("'$set.messages' must be a list")
                self._replace_history(messages, offset, line)
            self.meta.update({k: v for k, v in patch.items() if k != "messages"})
        elif kind == "rewind":
            self._rewind(record["$rewindTo"], offset, line)

    def _message(self, msg: dict[str, Any], offset: int, line: int) -> None:
        mid = msg["id"]
        if mid in self.open:
            self._fill(self.open[mid], msg, line)  # upsert: the newest copy wins
            return
        if mid in self.node_of:
            # An update of a frozen message (e.g. masking): keep what was recorded first.
            if mid not in self.effective:
                self.effective.append(mid)  # re-added after a rewind
            return
        self.freeze(offset)
        parent = self.node_of.get(self.effective[-1]) if self.effective else None
        self.open[mid] = self._new(mid, msg, parent, line)
        self.effective.append(mid)

    def _rewind(self, target: str, offset: int, line: int) -> None:
        self.freeze(offset)
        # gemini-cli clears the history when the target is unknown
        index = self.effective.index(target) if target in self.effective else 0
        dropped = self.effective[index:]
        del self.effective[index:]
        if dropped:
            self.rewinds.append({"line": line, "to": target, "dropped": [self.node_of.get(d, d) for d in dropped]})

    def _replace_history(self, messages: list[Any], offset: int, line: int) -> None:
        self.freeze(offset)
        ids: list[str] = []
        for raw in messages:
            msg = check_message(raw)
            mid = msg["id"]
            if mid not in self.node_of:
                parent = self.node_of.get(ids[-1]) if ids else None
                self.open[mid] = self._new(mid, msg, parent, line)
            ids.append(mid)
        self.freeze(offset)
        self.effective = ids

    def freeze(self, offset: int) -> None:
        for mid, draft in self.open.items():
            self.graph.settle(draft, offset)
            for tool in self.tools.get(mid, {}).values():
                self.graph.settle(tool, offset)
        self.open.clear()

    def idle_flush(self, offset: int) -> None:
        """The file has been quiet: freeze the last message unless a tool call of it is still running."""
        for draft in self.open.values():
            calls = self.tools.get(self._mid(draft), {}).values()
            if any(t.metadata.get("status") not in TERMINAL_STATUS for t in calls):
                return
        self.freeze(offset)

    def _mid(self, draft: Draft) -> str:
        return next((m for m, sid in self.node_of.items() if sid == draft.id), "")

    def _new(self, mid: str, msg: dict[str, Any], parent: str | None, line: int) -> Draft:
        sid = self.graph.unique_id(mid, f"{self.prefix}:{line}")
        draft = self.graph.add(Draft(sid, "system", parent_id=parent))
        self.node_of[mid] = sid
        self.tools[mid] = {}
        self._fill(draft, msg, line)
        return draft

    def _fill(self, draft: Draft, msg: dict[str, Any], line: int) -> None:
        kind = msg["type"]
        text = as_text(msg.get("content"))
        meta: dict[str, Any] = {"gemini_type": kind, "line": line}
        display = msg.get("displayContent")
        if display is not None and as_text(display) != text:
            meta["display_content"] = as_text(display)
        images = count_images(msg.get("content"))
        if images:
            meta["images"] = images
        name = None
        if kind == "user":
            role = "system" if text.lstrip().startswith(_INJECTED_PREFIXES) else "user"
            if role == "system":
                meta["injected"] = True
        elif kind == "gemini":
            role = "assistant"
            name = msg.get("model") if isinstance(msg.get("model"), str) else None
            if isinstance(msg.get("tokens"), dict):
                meta["tokens"] = msg["tokens"]
            thoughts = msg.get("thoughts")
            if isinstance(thoughts, list) and thoughts:
                meta["thoughts"] = [_thought_text(t) for t in thoughts]
        else:
            role = "system"
            if kind not in SYSTEM_TYPES and draft.metadata.get("gemini_type") != kind:
                self.report.unknown(f"gemini:message:{kind}")
        draft.role, draft.content, draft.name, draft.metadata = role, text, name, meta
        draft.created_at = parse_time(msg.get("timestamp"))
        if role == "assistant":
            mid = msg["id"]
            for index, call in enumerate(msg.get("toolCalls") or []):
                self._tool(mid, draft, call, index, line)

    def _tool(self, mid: str, owner: Draft, call: Any, index: int, line: int) -> None:
        if not isinstance(call, dict):
            self.report.warn(self.path, line, f"tool call {index} of message {owner.id!r} is not an object")
            return
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        key = call_id or f"#{index}"
        meta: dict[str, Any] = {"line": line}
        for field in ("status", "displayName", "description"):
            if isinstance(call.get(field), str):
                meta[field] = call[field]
        if call_id:
            meta["call_id"] = call_id
        known = self.tools[mid].get(key)
        if known is None:
            sid = self.graph.unique_id(call_id, f"{owner.id}:tool{index}")
            known = self.graph.add(Draft(sid, "tool", parent_id=owner.id, called_by=owner.id))
            self.tools[mid][key] = known
        elif known.settled:
            return
        known.content = _tool_result(call)
        known.name = call.get("name") if isinstance(call.get("name"), str) else "tool"
        known.input = call.get("args")
        known.created_at = parse_time(call.get("timestamp")) or owner.created_at
        known.metadata = meta

    # -- result ----------------------------------------------------------------------------

    def session(
        self, *, end_offset: int, start_offset: int, live: bool, legacy: bool, skip: set[str] | None = None
    ) -> ImportedSession:
        head_mid = self.effective[-1] if self.effective else None
        head = self.node_of.get(head_mid) if head_mid else None
        nodes = self.graph.nodes(end_offset=end_offset, start_offset=start_offset, live=live, skip=skip)
        meta = self.meta
        native = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else self.path.stem
        parent_native, kind = None, "trunk"
        nested = self.path.parent.name != "chats" and self.path.parent.parent.name == "chats"
        if meta.get("kind") == "subagent" or nested:
            kind = "subagent"
            if nested:
                parent_native = self.path.parent.name
        extra: dict[str, Any] = {"end_offset": end_offset, "layout": "json" if legacy else "jsonl"}
        for key in ("projectHash", "startTime", "lastUpdated", "directories"):
            if key in meta:
                extra[key] = meta[key]
        if self.rewinds:
            extra["rewinds"] = self.rewinds
        title = meta.get("summary") if isinstance(meta.get("summary"), str) else ""
        if title:
            extra["title_source"] = "llm"  # gemini-cli generates the summary
        return ImportedSession(
            source=SOURCE,
            native_id=native,
            source_file=str(self.path),
            nodes=nodes,
            kind=kind,
            title=title,
            cwd=_project_dir(self.path, meta),
            model=self.graph.last_model(),
            head=self.graph.visible_head(head),
            parent_native_id=parent_native,
            extra=MappingProxyType(extra),
        )


def _thought_text(thought: Any) -> str:
    if isinstance(thought, dict):
        subject, description = as_text(thought.get("subject")), as_text(thought.get("description"))
        return f"{subject}: {description}" if subject and description else subject or description
    return as_text(thought)


def _tool_result(call: dict[str, Any]) -> str:
    result = call.get("result")
    texts: list[str] = []
    if isinstance(result, list):
        for part in result:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response")
                if isinstance(response, dict):
                    for key in ("output", "error", "content", "llmContent"):
                        if key in response:
                            texts.append(as_text(response[key]))
                            break
                    else:
                        texts.append(as_text(response))
                else:
                    texts.append(as_text(response))
            else:
                texts.append(as_text(part))
    elif result is not None:
        texts.append(as_text(result))
    text = "\n".join(t for t in texts if t)
    if not text and isinstance(call.get("resultDisplay"), str):
        text = call["resultDisplay"]
    return text


def gemini_home() -> Path:
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()).expanduser() / ".gemini"


def _project_dir(path: Path, meta: dict[str, Any]) -> str:
    """Gemini does not store the cwd; recover it from `directories` or ~/.gemini/projects.json."""
    dirs = meta.get("directories")
    if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
        return dirs[0]
    chats = next((p for p in path.parents if p.name == "chats"), None)
    if chats is None:
        return ""
    project_key = chats.parent.name
    home = chats.parent.parent.parent  # <home>/tmp/<project>/chats
    for path_, slug in _projects(home / "projects.json").items():
        if project_key in (slug, hashlib.sha256(path_.encode()).hexdigest()):
            return path_
    return ""


def _projects(index: Path) -> dict[str, str]:
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    projects = data.get("projects", data) if isinstance(data, dict) else {}
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


class GeminiParser(LineParser):
    """Stateful line parser for `opmem watch` over a ``.jsonl`` chat (see drafts.LineParser)."""

    def __init__(self, path: Path | str, report: ImportReport) -> None:
        super().__init__(path, report)
        self.reader = GeminiReader(self.path, report)

    def _feed(self, text: str, offset: int, line: int) -> None:
        kind, record = parse_line(text)
        self.reader.feed(kind, record, offset, line)

    def _idle(self) -> None:
        self.reader.idle_flush(self.offset)

    def holding(self) -> bool:
        return bool(self.reader.open) or self.reader.graph.holding()

    def _sessions(
        self, *, end_offset: int, start_offset: int, live: bool, skip: set[str] | None
    ) -> list[ImportedSession]:
        return [
            self.reader.session(end_offset=end_offset, start_offset=start_offset, live=live, legacy=False, skip=skip)
        ]


class GeminiImporter(LineImporter):
    name = "gemini"
    source = "gemini"
    label = "Gemini CLI"
    rank = 0
    locations = ("$GEMINI_CLI_HOME/.gemini/tmp", "~/.gemini/tmp/<project hash>/chats")
    shape = Shape(("*.jsonl", "*.json"), records=(("sessionId", "projectHash"),))

    def claims(self, probe: Probe) -> Path | None:
        """A chat file; a legacy .json chat migrated to a .jsonl beside it is that one's."""
        path = probe.path
        if path.suffix == ".json" and path.with_suffix(".jsonl").exists():
            return None
        return super().claims(probe)

    reads = "user and gemini messages, thoughts, tool calls with their results, token counts"
    looks_for = "session-*.json or *.jsonl under a chats/ folder"
    empty_file = "no Gemini chat records found"

    def default_paths(self) -> list[Path]:
        return [gemini_home() / "tmp"]

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file():
                if path.suffix in (".json", ".jsonl"):
                    found[path] = None
            elif path.is_dir():
                for file in sorted(path.rglob("*.json*")):
                    if _is_chat(file, path):
                        found[file] = None
        return list(found)

    def follows_lines(self, path: Path) -> bool:
        return path.suffix != ".json"  # a legacy chat is rewritten whole

    def open_parser(self, path: Path, report: ImportReport) -> GeminiParser:
        return GeminiParser(path, report)

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        """One chat file -> one session (see drafts.py for what a live file holds back)."""
        if path.suffix == ".json":
            return _parse_legacy(path, GeminiReader(path, report), report, live=not is_final(path, final))
        return super().parse_file(path, report, final=final)


def _is_chat(file: Path, root: Path) -> bool:
    if file.suffix not in (".json", ".jsonl") or "chats" not in file.parts[len(root.parts) - 1 :] or not file.is_file():
        return False
    if file.suffix == ".json" and not file.name.startswith("session-"):
        return False
    # A resumed legacy chat is migrated to <name>.jsonl, which then holds everything.
    return not (file.suffix == ".json" and file.with_suffix(".jsonl").exists())


def _parse_legacy(path: Path, reader: GeminiReader, report: ImportReport, live: bool) -> list[ImportedSession]:
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except OSError as exc:
        report.warn(path, None, f"cannot read: {exc.strerror or exc}")
        return []
    except (ValueError, RecursionError) as exc:
        report.warn(path, None, f"not a JSON chat file ({exc})")
        return []
    if not isinstance(data, dict) or not isinstance(data.get("messages", []), list):
        report.warn(path, None, "not a Gemini chat: expected an object with a 'messages' list")
        return []
    reader.meta.update({k: v for k, v in data.items() if k != "messages"})
    for index, msg in enumerate(data.get("messages") or []):
        try:
            reader.feed("message", check_message(msg), 0, index + 1)
        except ImportFormatError as exc:
            report.warn(path, None, f"message {index + 1}: {exc}")
    if not live:
        reader.freeze(len(raw))
    return [reader.session(end_offset=len(raw), start_offset=0, live=live, legacy=True)]
