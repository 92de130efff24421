"""OpenCode (sst/opencode): the SQLite ``opencode.db`` of v1.2+ and the older JSON ``storage/`` tree.

Where: ``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``); other release channels
write ``opencode-<channel>.db``; ``OPENCODE_DB`` may name the database.

- SQLite: tables ``session`` (``id``, ``parent_id``, ``directory``, ``title``, ``time_created``
  ...), ``message`` (``id``, ``session_id``, ``time_created``, ``data`` JSON) and ``part`` (``id``,
  ``message_id``, ``data`` JSON). Only these three are read: the ``account`` table (credentials)
  and the rest are never queried.
- JSON: ``storage/session/<projectID>/<sessionID>.json``, ``storage/message/<sessionID>/<messageID>.json``,
  ``storage/part/<messageID>/<partID>.json`` (early versions: flat ``storage/part/<partID>.json``
  naming their ``messageID``).

A user message -> a user node (its text parts; ``synthetic`` text the agent added -> a system
node after it); an assistant message (one per step of the loop) -> an assistant node holding its
text (reasoning in metadata, tokens, cost, finish) with one tool node per ``tool`` part.
``compaction`` parts -> system nodes. Subagents are sessions whose ``parent_id`` names their
parent; the parent's ``task`` tool part that started one names it in ``state.metadata.sessionId``.
While OpenCode writes, an assistant message without ``time.completed`` (or a tool part pending or
running) is held back until it is finished.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .agent_db import open_agent_db, require, snapshot, tables
from .base import ImportedSession, ImportReport
from .record_values import dumps, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_value, load_json, session, sqlite_files

SOURCE = "opencode"
DONE_TOOL = frozenset({"completed", "error", "success", "failed", "cancelled"})
PLACEHOLDER_TITLES = ("New session - ", "Child session - ")


def opencode_home() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "opencode"


def build(
    path: Path,
    info: dict[str, Any],
    messages: list[dict[str, Any]],
    parts: dict[str, list[dict[str, Any]]],
    report: ImportReport,
    *,
    final: bool,
    layout: str,
) -> ImportedSession:
    """One session from its info, its messages in order and each message's parts in order."""
    sid = as_str(info.get("id"))
    b = SessionBuilder()
    children: dict[str, str] = {}
    cwd = as_str(info.get("directory"))
    for msg in messages:
        mid = as_str(msg.get("id"))
        if not mid:
            report.warn(path, None, "a message without an id was skipped")
            continue
        role = msg.get("role")
        time = as_dict(msg.get("time"))
        created = parse_time(time.get("created"))
        mparts = parts.get(mid, [])
        if role == "user":
            _user(b, mid, msg, mparts, created)
        elif role == "assistant":
            _assistant(b, mid, msg, mparts, created, children)
            cwd = cwd or as_str(as_dict(msg.get("path")).get("cwd")) or as_str(msg.get("path"))
        else:
            report.unknown(f"opencode:message:{role}")
    title = as_str(info.get("title"))
    if title.startswith(PLACEHOLDER_TITLES):
        title = ""
    parent = as_str(info.get("parentID") or info.get("parent_id")) or None
    extra: dict[str, Any] = {"layout": layout}
    for key in ("slug", "version", "projectID", "project_id", "share_url", "agent"):
        if info.get(key):
            extra[key] = info[key]
    if info.get("revert"):
        extra["revert"] = info["revert"]
    if children:
        extra["children"] = children
    return session(
        SOURCE,
        sid,
        path,
        b,
        final=final,
        title=title,
        cwd=cwd,
        kind="subagent" if parent else "trunk",
        parent_native_id=parent,
        extra=extra,
    )


def _user(b: SessionBuilder, mid: str, msg: dict[str, Any], parts: list[dict[str, Any]], created: float) -> None:
    said, added, files = [], [], []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            (added if part.get("synthetic") else said).append(part["text"])
        elif kind == "file":
            files.append(as_str(part.get("filename")) or as_str(part.get("url")))
        elif kind in ("subtask", "agent"):
            added.append(f"[{kind}] {as_str(part.get('description')) or as_str(part.get('name')) or dumps(part)}")
        elif kind == "compaction":
            b.chain(
                f"{part.get('id') or mid}:compaction",
                "system",
                "[compaction]",
                created_at=created,
                metadata={"compaction": True, "auto": part.get("auto")},
            )
    summary = as_dict(msg.get("summary"))
    model = as_dict(msg.get("model"))
    meta = {"files": files, "agent": msg.get("agent"), "model": model.get("modelID")}
    if said or not added:
        text = "\n".join(said) or as_str(summary.get("body")) or as_str(summary.get("title"))
        b.chain(mid, "user", text, created_at=created, metadata=meta)
    if added:
        b.chain(
            f"{mid}:injected",
            "system",
            "\n".join(added),
            created_at=created,
            metadata={"injected": True, **({} if said else meta)},
        )


def _assistant(
    b: SessionBuilder,
    mid: str,
    msg: dict[str, Any],
    parts: list[dict[str, Any]],
    created: float,
    children: dict[str, str],
) -> None:
    time = as_dict(msg.get("time"))
    model = as_str(msg.get("modelID")) or as_str(as_dict(msg.get("model")).get("modelID")) or None
    texts, thinking, patches, steps = [], [], [], 0
    tools: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            thinking.append(part["text"])
        elif kind == "tool":
            tools.append(part)
        elif kind == "patch":
            patches.extend(f for f in part.get("files") or [] if isinstance(f, str))
        elif kind == "step-finish":
            steps += 1
        elif kind == "compaction":
            compactions.append(part)
    error = as_dict(msg.get("error"))
    done = bool(time.get("completed") or msg.get("finish") or error)
    meta = {
        "tokens": msg.get("tokens"),
        "cost": msg.get("cost"),
        "finish": msg.get("finish"),
        "provider": msg.get("providerID"),
        "mode": msg.get("mode"),
        "agent": msg.get("agent"),
        "thinking": "\n".join(thinking),
        "patched_files": patches,
        "error": as_str(error.get("name")),
        "completed_at": parse_time(time.get("completed")) or None,
        "parent_message": msg.get("parentID"),
    }
    owner = b.chain(mid, "assistant", "\n".join(texts), name=model, created_at=created, metadata=meta, done=done)
    for index, part in enumerate(tools):
        state = as_dict(part.get("state"))
        status = as_str(state.get("status"))
        ptime = as_dict(state.get("time"))
        smeta = as_dict(state.get("metadata"))
        output = state.get("output")
        content = output if isinstance(output, str) else (dumps(output) if output is not None else "")
        if status == "error" and not content:
            content = as_str(state.get("error"))
        tid = b.tool(
            as_str(part.get("id")) or f"{mid}:tool{index}",
            owner,
            as_str(part.get("tool")) or "tool",
            state.get("input"),
            content,
            created_at=parse_time(ptime.get("start")) or created,
            metadata={
                "status": status,
                "call_id": part.get("callID"),
                "title": state.get("title"),
                "exit": smeta.get("exit"),
                "is_error": status == "error" or None,
                "ended_at": parse_time(ptime.get("end")) or None,
            },
            done=status in DONE_TOOL,
        )
        child = smeta.get("sessionId") or smeta.get("sessionID")
        if isinstance(child, str) and child:
            children[child] = tid
    for part in compactions:
        b.chain(
            f"{part.get('id') or mid}:compaction",
            "system",
            "[compaction]",
            created_at=created,
            metadata={"compaction": True, "auto": part.get("auto")},
        )


# ---------------------------------------------------------------------------------------------
# the two layouts


def read_db(path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
    with open_agent_db(path) as conn:
        found = tables(conn)
        require(
            path,
            found,
            {"session": ("id",), "message": ("id", "session_id", "data"), "part": ("id", "message_id", "data")},
            "OpenCode",
        )
        cols = [
            c
            for c in (
                "id",
                "parent_id",
                "directory",
                "title",
                "slug",
                "version",
                "share_url",
                "revert",
                "project_id",
                "time_created",
                "time_updated",
            )
            if c in found["session"]
        ]
        order_m = "time_created, id" if "time_created" in found["message"] else "rowid"
        with snapshot(conn):
            srows = conn.execute(f"SELECT {', '.join(cols)} FROM session").fetchall()
            mrows = conn.execute(f"SELECT id, session_id, data FROM message ORDER BY {order_m}").fetchall()
            prows = conn.execute("SELECT id, message_id, data FROM part ORDER BY id").fetchall()
    messages: dict[str, list[dict[str, Any]]] = {}
    for mid, sid, data in mrows:
        value = json_value(data)
        if not isinstance(value, dict):
            report.warn(path, None, f"message {mid}: its data is not a JSON object")
            continue
        messages.setdefault(sid, []).append({**value, "id": mid})
    parts: dict[str, list[dict[str, Any]]] = {}
    for pid, mid, data in prows:
        value = json_value(data)
        if isinstance(value, dict):
            parts.setdefault(mid, []).append({**value, "id": pid})
        else:
            report.warn(path, None, f"part {pid}: its data is not a JSON object")
    out = []
    for row in sorted(srows, key=lambda r: (r[1] is not None, str(r[0]))):  # parents first
        info = dict(zip(cols, row, strict=True))
        info["revert"] = json_value(info.get("revert"))
        info["parentID"] = info.pop("parent_id", None)
        out.append(build(path, info, messages.get(info["id"], []), parts, report, final=final, layout="sqlite"))
    return out


class _Storage:
    """One storage/ tree's flat legacy parts (part/<partID>.json naming their messageID), read once per change."""

    def __init__(self) -> None:
        self.flat: dict[Path, tuple[int, dict[str, list[dict[str, Any]]]]] = {}

    def flat_parts(self, root: Path, report: ImportReport) -> dict[str, list[dict[str, Any]]]:
        part_dir = root / "part"
        try:
            stamp = part_dir.stat().st_mtime_ns
        except OSError:
            return {}
        known = self.flat.get(root)
        if known is not None and known[0] == stamp:
            return known[1]
        index: dict[str, list[dict[str, Any]]] = {}
        for file in sorted(part_dir.glob("*.json")):
            part = _load(file, report)
            if part is not None and isinstance(part.get("messageID"), str):
                index.setdefault(part["messageID"], []).append(part)
        self.flat[root] = (stamp, index)
        return index


def _load(file: Path, report: ImportReport) -> dict[str, Any] | None:
    try:
        value = load_json(file)
    except OSError as exc:
        report.warn(file, None, f"cannot read: {exc.strerror or exc}")
        return None
    except (ValueError, RecursionError) as exc:
        report.warn(file, None, f"not valid JSON ({exc})")
        return None
    if not isinstance(value, dict):
        report.warn(file, None, "expected a JSON object")
        return None
    return value


def read_storage(path: Path, report: ImportReport, storage: _Storage, *, final: bool) -> list[ImportedSession]:
    info = load_json(path)
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        report.warn(path, None, "not an OpenCode session: expected an object with an 'id'")
        return []
    root = path.parent.parent.parent  # storage/session/<project>/<id>.json
    sid = info["id"]
    messages: list[tuple[float, str, dict[str, Any]]] = []
    for file in sorted((root / "message" / sid).glob("*.json")):
        msg = _load(file, report)
        if msg is None:
            continue
        msg.setdefault("id", file.stem)
        messages.append((parse_time(as_dict(msg.get("time")).get("created")), file.name, msg))
    messages.sort(key=lambda m: (m[0], m[1]))
    flat = storage.flat_parts(root, report)
    parts: dict[str, list[dict[str, Any]]] = {}
    for _, _, msg in messages:
        mid = msg["id"]
        got = []
        for file in sorted((root / "part" / mid).glob("*.json")):
            part = _load(file, report)
            if part is not None:
                part.setdefault("id", file.stem)
                got.append(part)
        parts[mid] = got + flat.get(mid, [])
    if not (root / "message").is_dir():
        report.warn(path, None, f"no message folder beside it ({root / 'message'})")
    return [build(path, info, [m for *_, m in messages], parts, report, final=final, layout="json")]


class OpenCodeImporter(WholeImporter):
    name = "opencode"
    source = SOURCE
    label = "OpenCode"
    locations = ("$OPENCODE_DB", "$XDG_DATA_HOME/opencode", "~/.local/share/opencode")
    shape = Shape(
        ("opencode*.db", "session/*/*.json"),
        records=(("id", "directory", "time", "version"),),
        tables=(("session", "message", "part"),),
        also=("message/<session id>/*.json", "part/<message id>/*.json"),
    )
    reads = "sessions, their messages and parts (text, reasoning, tool with state, step-finish)"
    # The Go OpenCode (now Crush) kept <project>/.opencode/opencode.db: another importer's format.
    looks_for = "opencode*.db or storage/session/<project>/<id>.json; a project's .opencode/opencode.db is the Go OpenCode's: `opmem import crush`"

    def __init__(self) -> None:
        self.storage = _Storage()

    def default_paths(self) -> list[Path]:
        paths = [opencode_home()]
        env = os.environ.get("OPENCODE_DB")
        if env and Path(env).is_absolute():
            paths.insert(0, Path(env))
        return paths

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        # a project's .opencode/opencode.db is the old Go OpenCode: the crush importer reads it
        dbs = [p for p in sqlite_files(paths, ("opencode*.db",)) if p.parent.name != ".opencode"]
        found: dict[Path, None] = dict.fromkeys(dbs)
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file() and path.suffix == ".json" and path.parent.parent.name == "session":
                found[path] = None
            elif path.is_dir():
                for base in (path, path / "storage"):
                    sessions = base / "session"
                    if sessions.is_dir():
                        for file in sorted(sessions.glob("*/*.json")):
                            found[file] = None
        return list(found)

    def is_db(self, path: Path) -> bool:
        return path.suffix == ".db"

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        if self.is_db(path):
            return read_db(path, report, final=final)
        return read_storage(path, report, self.storage, final=final)
