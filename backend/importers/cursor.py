"""Cursor: the IDE's ``state.vscdb`` conversations and the cursor-agent CLI's transcripts.

- Global ``User/globalStorage/state.vscdb``, table ``cursorDiskKV``: ``composerData:<id>`` (a
  conversation: name, times, model, ``fullConversationHeadersOnly`` or an inline
  ``conversation``) and ``bubbleId:<composerId>:<bubbleId>`` (one message: ``type`` 1 user / 2
  assistant, ``text``, ``thinking``, ``toolFormerData`` for a tool call, ``tokenCount``).
- Per workspace ``User/workspaceStorage/<hash>/state.vscdb``, table ``ItemTable``:
  ``composer.composerData`` (``allComposers``; older versions hold each ``conversation`` inline)
  and the legacy chat ``workbench.panel.aichat.view.aichat.chatdata`` (``tabs[].bubbles[]``,
  ``type`` user|ai). The workspace folder is named in ``workspace.json`` beside it.
- cursor-agent: ``~/.cursor/projects/<encoded path>/agent-transcripts/<id>.jsonl`` (or
  ``<id>/<id>.jsonl``), one ``{role, message: {content: [text | thinking | tool_use ...]}}`` a
  line; a user line of only ``tool_result`` blocks holds the results; children in ``subagents/``.

Only the conversation keys are ever queried: ``cursorAuth/*`` (credentials) and every other key
stay unread. The databases are read as agent_db says (read-only, or a private copy).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..model import OpmemError
from .agent_db import is_sqlite, open_agent_db, snapshot, tables
from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Probe, Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, injected, json_lines, json_value, session

SOURCE = "cursor"
CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"
COMPOSER_KEY = "composer.composerData"
USER_QUERY = ("<user_query>", "</user_query>")
REREAD_SECONDS = 10.0


def vscode_user_dirs(app: str) -> list[Path]:
    """The ``User`` folders of a VS Code-family app ("Code", "Cursor", ...) on Linux and macOS."""
    home = Path.home()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    dirs = [config / app / "User", home / "Library" / "Application Support" / app / "User"]
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        dirs.append(Path(os.environ["APPDATA"]) / app / "User")
    return dirs


def _folder(uri: str) -> str:
    if uri.startswith("file://"):
        return unquote(urlparse(uri).path)
    return uri


def _workspace_dir(db: Path) -> str:
    try:
        data = json.loads((db.parent / "workspace.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return ""
    return _folder(as_str(as_dict(data).get("folder") or as_dict(data).get("workspace")))


# ---------------------------------------------------------------------------------------------
# the IDE's databases


def _bubbles_into(b: SessionBuilder, cid: str, bubbles: list[dict[str, Any]], created: float, live: bool) -> None:
    """Composer bubbles -> nodes (type 1 user, 2 assistant; toolFormerData -> a tool node)."""
    owner: str | None = None
    for index, bubble in enumerate(bubbles):
        bid = as_str(bubble.get("bubbleId")) or f"{cid}:{index}"
        kind = bubble.get("type")
        text = as_str(bubble.get("text")) or as_str(bubble.get("rawText"))
        when = parse_time(bubble.get("createdAt")) or created
        last = index == len(bubbles) - 1
        if kind in (1, "user"):
            if not text.strip():
                continue  # the input box's draft, not a message
            role = "system" if injected(text) else "user"
            b.chain(bid, role, text, created_at=when, metadata={"injected": role == "system" or None})
            owner = None
            continue
        thinking = as_dict(bubble.get("thinking")).get("text") or None
        tokens = bubble.get("tokenCount") or None
        tool = as_dict(bubble.get("toolFormerData"))
        model = as_str(as_dict(bubble.get("modelInfo")).get("modelName")) or as_str(bubble.get("modelType")) or None
        if text or thinking or not tool or owner is None:
            meta = {"thinking": thinking, "tokens": tokens, "cursor_type": kind}
            owner = b.chain(
                bid,
                "assistant",
                text,
                name=model,
                created_at=when,
                metadata=meta,
                done=not (live and last and not tool),
            )
        if tool:
            args = json_value(tool.get("rawArgs")) if tool.get("params") is None else json_value(tool.get("params"))
            result = tool.get("result")
            value = json_value(result)
            content = as_text(value) if value is not None and not isinstance(value, str) else as_str(result)
            status = as_str(tool.get("status"))
            b.tool(
                f"{bid}:tool",
                owner,
                as_str(tool.get("name")) or as_str(tool.get("tool")) or "tool",
                args if args is not None else tool.get("rawArgs"),
                content,
                created_at=when,
                metadata={
                    "status": status,
                    "call_id": tool.get("toolCallId"),
                    "decision": as_dict(tool.get("userDecision")).get("decision"),
                },
                done=not (live and status in ("loading", "pending", "running")),
            )


def _composer(
    path: Path, data: dict[str, Any], bubbles: list[dict[str, Any]], cwd: str, *, final: bool
) -> ImportedSession:
    cid = as_str(data.get("composerId"))
    b = SessionBuilder()
    created = parse_time(data.get("createdAt"))
    live = not final and data.get("status") == "generating"
    _bubbles_into(b, cid, bubbles, created, live)
    model = as_str(as_dict(data.get("modelConfig")).get("modelName"))
    extra = {
        "layout": "composer",
        "mode": data.get("unifiedMode"),
        "status": data.get("status"),
        "created_at": created or None,
        "updated_at": parse_time(data.get("lastUpdatedAt")) or None,
    }
    return session(
        SOURCE,
        cid,
        path,
        b,
        final=final,
        title=as_str(data.get("name")),
        cwd=cwd,
        model=model,
        extra={k: v for k, v in extra.items() if v is not None},
    )


def _legacy_tab(path: Path, tab: dict[str, Any], cwd: str, *, final: bool) -> ImportedSession | None:
    tid = as_str(tab.get("tabId"))
    bubbles = [x for x in tab.get("bubbles") or [] if isinstance(x, dict)]
    if not tid or not bubbles:
        return None
    b = SessionBuilder()
    created = parse_time(tab.get("lastSendTime"))
    for index, bubble in enumerate(bubbles):
        bid = as_str(bubble.get("id")) or f"{tid}:{index}"
        text = as_str(bubble.get("text")) or as_str(bubble.get("rawText"))
        if bubble.get("type") == "user":
            if not text.strip():
                continue  # the input box's draft, not a message
            b.chain(bid, "user", text, created_at=created)
        else:
            b.chain(
                bid,
                "assistant",
                text,
                name=as_str(bubble.get("modelType")) or None,
                created_at=created,
                metadata={"request_id": bubble.get("requestId")},
            )
    return session(
        SOURCE,
        f"chat-{tid}",
        path,
        b,
        final=final,
        title=as_str(tab.get("chatTitle")),
        cwd=cwd,
        title_source="user" if tab.get("hasNamedTab") else "llm",
        extra={"layout": "legacy-chat"},
    )


def _query(path: Path, report: ImportReport) -> tuple[dict[str, Any], list[Any], list[Any]] | None:
    """The conversation keys only (never cursorAuth/* or any other key): items, composers, bubbles."""
    with open_agent_db(path) as conn:
        found = tables(conn)
        if "ItemTable" not in found and "cursorDiskKV" not in found:
            report.warn(path, None, "not a Cursor state database (no ItemTable or cursorDiskKV table)")
            return None
        items: dict[str, Any] = {}
        composers: list[Any] = []
        bubble_rows: list[Any] = []
        with snapshot(conn):
            if "ItemTable" in found:
                rows = conn.execute("SELECT key, value FROM ItemTable WHERE key IN (?, ?)", (COMPOSER_KEY, CHAT_KEY))
                items = dict(rows.fetchall())
            if "cursorDiskKV" in found:
                composers = conn.execute(
                    "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
                ).fetchall()
                bubble_rows = conn.execute(
                    "SELECT key, value FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'"
                ).fetchall()
    return items, composers, bubble_rows


def _bubble_index(rows: list[Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """composerId -> bubbleId -> bubble, from the ``bubbleId:<composerId>:<bubbleId>`` rows."""
    bubbles: dict[str, dict[str, dict[str, Any]]] = {}
    for key, value in rows:
        _, _, rest = str(key).partition(":")
        cid, _, bid = rest.partition(":")
        data = json_value(value)
        if isinstance(data, dict):
            data.setdefault("bubbleId", bid)
            bubbles.setdefault(cid, {})[bid] = data
    return bubbles


def _ordered(path: Path, data: dict[str, Any], mine: dict[str, dict[str, Any]], report: ImportReport) -> list[Any]:
    """A composer's bubbles in order: its headers (current), else an inline conversation (older)."""
    headers = data.get("fullConversationHeadersOnly")
    if isinstance(headers, list):
        ids = [h.get("bubbleId") for h in headers if isinstance(h, dict)]
        missing = sum(1 for bid in ids if bid not in mine)
        if missing:
            report.warn(path, None, f"composer {data['composerId']}: {missing} bubble(s) of its headers are missing")
        return [mine[bid] for bid in ids if bid in mine]
    if isinstance(data.get("conversation"), list):
        return [x for x in data["conversation"] if isinstance(x, dict)]
    if isinstance(data.get("conversationMap"), dict):
        return [x for x in data["conversationMap"].values() if isinstance(x, dict)]
    return list(mine.values())


def composer_folders(path: Path, report: ImportReport) -> dict[str, str]:
    """composerId -> its workspace folder, from a workspace state.vscdb's composer list."""
    folder = _workspace_dir(path)
    if not folder:
        return {}
    got = _query(path, report)
    if got is None:
        return {}
    listed = as_dict(json_value(got[0].get(COMPOSER_KEY))).get("allComposers")
    return {
        c["composerId"]: folder for c in listed or [] if isinstance(c, dict) and isinstance(c.get("composerId"), str)
    }


def read_vscdb(
    path: Path, report: ImportReport, *, final: bool, folders: dict[str, str] | None = None
) -> list[ImportedSession]:
    """folders: composerId -> workspace folder (a global database's composers name none themselves)."""
    cwd = _workspace_dir(path)
    folders = folders or {}
    got = _query(path, report)
    if got is None:
        return []
    items, composers, bubble_rows = got
    bubbles = _bubble_index(bubble_rows)
    out: list[ImportedSession] = []
    for key, value in composers:
        data = json_value(value)
        if not isinstance(data, dict):
            report.warn(path, None, f"{key}: not a JSON object")
            continue
        data.setdefault("composerId", str(key).partition(":")[2])
        ordered = _ordered(path, data, bubbles.get(data["composerId"], {}), report)
        out.append(_composer(path, data, ordered, folders.get(data["composerId"], cwd), final=final))
    listed = as_dict(json_value(items.get(COMPOSER_KEY))).get("allComposers")
    known = {s.native_id for s in out}
    for data in listed if isinstance(listed, list) else []:
        inline = isinstance(data, dict) and isinstance(data.get("conversation"), list)
        if inline and data.get("composerId") and data["composerId"] not in known:
            out.append(_composer(path, data, _ordered(path, data, {}, report), cwd, final=final))
    for tab in as_dict(json_value(items.get(CHAT_KEY))).get("tabs") or []:
        legacy = _legacy_tab(path, tab, cwd, final=final) if isinstance(tab, dict) else None
        if legacy is not None:
            out.append(legacy)
    return [s for s in out if s.nodes or s.title]


# ---------------------------------------------------------------------------------------------
# cursor-agent transcripts


def _unwrap(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith(USER_QUERY[0]) and stripped.endswith(USER_QUERY[1]):
        return stripped[len(USER_QUERY[0]) : -len(USER_QUERY[1])].strip()
    return text


class _Transcript:
    """Folds the lines of a cursor-agent transcript into nodes; tool results fill their calls."""

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path, self.report = path, report
        self.b = SessionBuilder()
        self.pending: list[str] = []  # tool nodes waiting for their results, in order
        self.by_call: dict[str, str] = {}
        self.results: dict[str, str] = {}
        self.ended_at = -1  # how many nodes there were at the last turn_ended
        self.model = ""

    def line(self, record: dict[str, Any], number: int) -> None:
        if record.get("type") == "turn_ended":
            self.ended_at = len(self.b.nodes)
            return
        role = record.get("role")
        content = as_dict(record.get("message")).get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": as_text(content)}]
        blocks = [x for x in blocks if isinstance(x, dict)]
        sid = f"{self.path.stem}:{number}"
        if role == "user":
            self.user(sid, blocks, record)
        elif role == "assistant":
            self.assistant(sid, blocks, record)
        else:
            self.report.unknown(f"cursor:line:{role or record.get('type')}")

    def user(self, sid: str, blocks: list[dict[str, Any]], record: dict[str, Any]) -> None:
        texts = []
        for block in blocks:
            if block.get("type") in ("tool_result", "tool-result"):
                target = self.by_call.get(as_str(block.get("tool_use_id"))) or next(iter(self.pending), None)
                if target is not None:
                    self.results[target] = as_text(block.get("content"))
                    if target in self.pending:
                        self.pending.remove(target)
            elif block.get("type") == "text":
                texts.append(_unwrap(as_str(block.get("text"))))
        if texts:
            text = "\n".join(texts)
            self.b.chain(sid, "system" if injected(text) else "user", text, metadata=as_dict(record.get("metadata")))
            self.pending = []

    def assistant(self, sid: str, blocks: list[dict[str, Any]], record: dict[str, Any]) -> None:
        texts, thinking, calls = [], [], []
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                texts.append(as_str(block.get("text")))
            elif kind == "thinking":
                thinking.append(as_str(block.get("thinking")) or as_str(block.get("text")))
            elif kind in ("tool_use", "tool_call"):
                calls.append(block)
            elif isinstance(block.get("text"), str):
                texts.append(block["text"])
                self.report.unknown(f"cursor:block:{kind}")
        model = as_str(record.get("model")) or None
        self.model = model or self.model
        text = "\n".join(t for t in texts if t)
        owner = self.b.chain(sid, "assistant", text, name=model, metadata={"thinking": "\n".join(thinking)})
        for index, call in enumerate(calls):
            name = as_str(call.get("name")) or "tool"
            tid = self.b.tool(
                f"{sid}:tool{index}", owner, name, call.get("input"), "", metadata={"call_id": call.get("id")}
            )
            self.pending.append(tid)
            if isinstance(call.get("id"), str):
                self.by_call[call["id"]] = tid

    def finish(self, final: bool) -> SessionBuilder:
        b = self.b
        if self.results:  # results come after their calls: fill them in
            b.nodes = [replace(n, content=self.results[n.id]) if n.id in self.results else n for n in b.nodes]
        if not final and 0 <= self.ended_at < len(b.nodes):
            b.first_open = self.ended_at  # the turn under way waits for its turn_ended
        elif not final and self.ended_at < 0 and b.nodes and b.nodes[-1].role != "user":
            b.first_open = next(i for i, n in enumerate(b.nodes) if n.id == b.tip)
        return b


def _parent_of(path: Path) -> str | None:
    """A transcript in ``<id>/subagents/``: the id of the transcript that spawned it."""
    folder = path.parent.parent
    if (folder / f"{folder.name}.jsonl").exists() or (folder.parent / f"{folder.name}.jsonl").exists():
        return folder.name
    siblings = sorted(folder.glob("*.jsonl"))
    return siblings[0].stem if len(siblings) == 1 else None


def read_transcript(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    reader = _Transcript(path, report)
    for number, record in json_lines(path, report):
        reader.line(record, number)
    b = reader.finish(final)
    sub = path.parent.name == "subagents"
    return [
        session(
            SOURCE,
            path.stem,
            path,
            b,
            final=final,
            cwd=_project_dir(path),
            kind="subagent" if sub else "trunk",
            parent_native_id=_parent_of(path) if sub else None,
            model=reader.model,
            extra={"layout": "agent-transcript"},
        )
    ]


def _project_dir(path: Path) -> str:
    """~/.cursor/projects/<encoded path>/agent-transcripts/...: the encoded path, when it decodes to a folder."""
    for parent in path.parents:
        if parent.name == "agent-transcripts":
            encoded = parent.parent.name
            guess = "/" + encoded.replace("-", "/")
            return guess if Path(guess).is_dir() else ""
    return ""


CURSOR_KEYS = ("composer.composerData", "workbench.panel.aichat.view.aichat.chatdata")


def holds_cursor_keys(path: Path) -> bool:
    try:
        with open_agent_db(path) as conn:
            marks = ", ".join("?" * len(CURSOR_KEYS))
            return (
                conn.execute(f"SELECT 1 FROM ItemTable WHERE key IN ({marks}) LIMIT 1", CURSOR_KEYS).fetchone()
                is not None
            )
    except (sqlite3.Error, OpmemError, OSError):
        return False


class CursorImporter(WholeImporter):
    name = "cursor"
    source = SOURCE
    label = "Cursor"
    locations = (
        "<Cursor user dir>/globalStorage/state.vscdb",
        "<Cursor user dir>/workspaceStorage/*/state.vscdb",
        "~/.cursor/projects/<path>/agent-transcripts",
    )
    shape = Shape(
        ("state.vscdb", "*.jsonl"),
        records=(("role", "message", "!type", "!sessionId", "!session"),),
        tables=(("cursorDiskKV",), ("ItemTable",)),
    )

    def claims(self, probe: Probe) -> Path | None:
        """A transcript, or a state.vscdb holding Cursor's conversations (any VS Code's has an ItemTable)."""
        unit = super().claims(probe)
        if unit is None or probe.path.suffix != ".vscdb" or probe.has_table("cursorDiskKV"):
            return unit
        return unit if holds_cursor_keys(probe.path) else None

    reads = "composers and their bubbles (text, thinking, tool calls), legacy chat tabs, agent transcripts"
    looks_for = "state.vscdb databases or agent-transcripts/*.jsonl"

    def default_paths(self) -> list[Path]:
        return [*vscode_user_dirs("Cursor"), Path.home() / ".cursor" / "projects"]

    def is_db(self, path: Path) -> bool:
        return path.suffix == ".vscdb"

    def reread_interval(self, path: Path) -> float:
        """Cursor rewrites its state.vscdb on every UI change, and each read copies it (a
        rollback-journal database is never read in place): at most every REREAD_SECONDS."""
        return REREAD_SECONDS if self.is_db(path) else 0.0

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file():
                if (path.suffix == ".vscdb" and is_sqlite(path)) or path.suffix == ".jsonl":
                    found[path] = None
            elif path.is_dir():
                for pattern in (
                    "state.vscdb",
                    "globalStorage/state.vscdb",
                    "workspaceStorage/*/state.vscdb",
                    "User/globalStorage/state.vscdb",
                    "User/workspaceStorage/*/state.vscdb",
                ):
                    for item in sorted(path.glob(pattern)):
                        if is_sqlite(item):
                            found[item] = None
                for item in sorted(path.rglob("*.jsonl")):
                    if "agent-transcripts" in item.parts[len(path.parts) - 1 :]:
                        found[item] = None
        return self.ordered(list(found))

    def ordered(self, files: list[Path]) -> list[Path]:
        return sorted(files, key=lambda p: p.parent.name == "subagents")  # parents before their subagents

    def __init__(self) -> None:
        self._folders: dict[Path, tuple[Any, dict[str, str]]] = {}  # workspace db -> (its stamp, its composers)

    def workspace_folders(self, global_db: Path) -> dict[str, str]:
        """composerId -> folder from every workspace database beside ``globalStorage`` (read once per change)."""
        storage = global_db.parent.parent / "workspaceStorage"
        if global_db.parent.name != "globalStorage" or not storage.is_dir():
            return {}
        out: dict[str, str] = {}
        for db in sorted(storage.glob("*/state.vscdb")):
            try:
                stamp = self.file_stat(db)
            except OSError:
                continue
            known = self._folders.get(db)
            if known is None or known[0] != stamp:
                known = (stamp, composer_folders(db, ImportReport()))  # its own problems are said when it is imported
                self._folders[db] = known
            out.update(known[1])
        return out

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        if path.suffix == ".jsonl":
            return read_transcript(path, report, final=final)
        return read_vscdb(path, report, final=final, folders=self.workspace_folders(path))


__all__ = ["CursorImporter", "vscode_user_dirs"]
