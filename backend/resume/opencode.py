"""A session resumed into OpenCode: rows added to ``opencode.db`` (v1.2+), else the JSON storage tree.

Format, from anomalyco/opencode (formerly sst/opencode):
- ``packages/opencode/src/session/session.sql.ts`` @ 063e8306d9895af9bdd175306cfa4fa3291fd83a
  (tables ``session``, ``message``, ``part``: a message's ``data`` is its info less ``id`` and
  ``sessionID``, a part's ``data`` the part less ``id``, ``sessionID``, ``messageID``);
- ``packages/opencode/src/session/message-v2.ts`` (user/assistant info; ``text`` and ``tool`` parts, a
  tool part's ``state {status, input, output | error, title, metadata, time}``);
- the CLI's ``--session`` / ``-s`` option, "session id to continue" (``packages/opencode/src/cli/cmd/tui``).
- ../shared/reference/agent-formats.md §OpenCode (where: ``$XDG_DATA_HOME/opencode``, ``OPENCODE_DB``).

With a database, one transaction inserts the session, its messages and parts (into the project
whose worktree is the folder, else the ``global`` project, added only when absent); nothing else
is touched. Without one (OpenCode before 1.2, or never run), the files go under ``storage/``,
which OpenCode 1.2 migrates into its database on first start.
"""

from __future__ import annotations

import secrets
import sqlite3
import string
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .conversation import Conversation, Message, ResumeError
from .files import Written, dumps, env_path, user_home, write_new

FORMAT_VERSION = "1.2.4"  # the session shape written (OpenCode 1.2 rows)
_BASE62 = string.digits + string.ascii_letters


def data_dir(env: Mapping[str, str]) -> Path:
    return (env_path(env, "XDG_DATA_HOME") or user_home(env) / ".local" / "share") / "opencode"


def database(env: Mapping[str, str]) -> Path | None:
    given = env_path(env, "OPENCODE_DB")
    if given is not None and given.is_absolute():
        return given if given.is_file() else None
    path = data_dir(env) / "opencode.db"
    return path if path.is_file() else None


class _Ids:
    """OpenCode's ascending ids: prefix, 12 hex digits of ms * 0x1000 + counter, 14 random base62."""

    def __init__(self, start_ms: int) -> None:
        self.ms = start_ms
        self.counter = 0

    def next(self, prefix: str) -> str:
        self.counter += 1
        value = (self.ms * 0x1000 + self.counter) & 0xFFFFFFFFFFFF
        return f"{prefix}_{value:012x}" + "".join(secrets.choice(_BASE62) for _ in range(14))


def _rows(conv: Conversation, sid: str, cwd: str, ids: _Ids, now_ms: int):
    """(message id, created ms, data, [(part id, part data)]) for each message."""
    out = []
    parent = ""
    provider, model = "opmem", conv.model or "unknown"
    for m in conv.messages:
        at = int((m.created_at or now_ms / 1000) * 1000)
        mid = ids.next("msg")
        if m.role == "user":
            parent = mid
            data = {
                "role": "user",
                "time": {"created": at},
                "agent": "build",
                "model": {"providerID": provider, "modelID": model},
            }
            out.append((mid, at, data, [(ids.next("prt"), {"type": "text", "text": m.text})]))
            continue
        data = _assistant(m, at, parent, cwd, provider)
        parts = [(ids.next("prt"), {"type": "text", "text": m.text})] if m.text else []
        parts += [(ids.next("prt"), _tool_part(call, at, sid)) for call in m.tools]
        out.append((mid, at, data, parts))
    return out


def _assistant(m: Message, at: int, parent: str, cwd: str, provider: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "time": {"created": at, "completed": at},
        "parentID": parent,
        "modelID": m.model or "unknown",
        "providerID": provider,
        "mode": "build",
        "agent": "build",
        "path": {"cwd": cwd, "root": cwd},
        "cost": 0,
        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        "finish": "tool-calls" if m.tools else "stop",
    }


def _tool_part(call, at: int, sid: str) -> dict[str, Any]:
    state: dict[str, Any] = {"status": "error" if call.is_error else "completed", "input": call.input_object()}
    if call.is_error:
        state["error"] = call.output
    else:
        state.update(output=call.output, title=call.name, metadata={})
    state["time"] = {"start": at, "end": at}
    return {"type": "tool", "callID": "call_opmem_" + call.call_id[-16:], "tool": call.name, "state": state}


def _insert(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> None:
    """One row, with only the columns the table has; a required column opmem has no value for gets its type's zero."""
    columns = conn.execute(f"PRAGMA table_info({table})").fetchall()
    if not columns:
        raise ResumeError(f"opencode database has no {table!r} table: an OpenCode version opmem does not know")
    row: dict[str, Any] = {}
    for _, name, kind, notnull, default, _pk in columns:
        if name in values:
            row[name] = values[name]
        elif notnull and default is None:
            row[name] = 0 if any(t in (kind or "").upper() for t in ("INT", "REAL", "NUM")) else ""
    names = ", ".join(row)
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})", list(row.values()))


def _project(conn: sqlite3.Connection, cwd: str, now_ms: int) -> str:
    found = conn.execute("SELECT id FROM project WHERE worktree = ? LIMIT 1", (cwd,)).fetchone()
    if found:
        return found[0]
    if not conn.execute("SELECT 1 FROM project WHERE id = 'global'").fetchone():
        _insert(conn, "project", {"id": "global", "worktree": "/", "time_created": now_ms, "time_updated": now_ms})
    return "global"


def _session_info(sid: str, conv: Conversation, cwd: str, now_ms: int) -> dict[str, Any]:
    return {
        "id": sid,
        "slug": "resumed-" + sid[-6:].lower(),
        "version": FORMAT_VERSION,
        "directory": cwd,
        "title": conv.title,
    }


def _write_db(db: Path, conv: Conversation, cwd: str, now_ms: int) -> str:
    ids = _Ids(now_ms)
    sid = ids.next("ses")
    conn = sqlite3.connect(db, timeout=10)
    try:
        with conn:
            project = _project(conn, cwd, now_ms)
            info = _session_info(sid, conv, cwd, now_ms)
            _insert(conn, "session", {**info, "project_id": project, "time_created": now_ms, "time_updated": now_ms})
            for mid, at, data, parts in _rows(conv, sid, cwd, ids, now_ms):
                _insert(
                    conn,
                    "message",
                    {"id": mid, "session_id": sid, "time_created": at, "time_updated": at, "data": dumps(data)},
                )
                for pid, part in parts:
                    row = {"id": pid, "message_id": mid, "session_id": sid, "time_created": at, "time_updated": at}
                    _insert(conn, "part", {**row, "data": dumps(part)})
    except sqlite3.Error as exc:
        raise ResumeError(f"{db}: cannot add the session ({exc})") from None
    finally:
        conn.close()
    return sid


def _write_storage(root: Path, conv: Conversation, cwd: str, now_ms: int) -> tuple[str, Path]:
    ids = _Ids(now_ms)
    sid = ids.next("ses")
    info = {
        **_session_info(sid, conv, cwd, now_ms),
        "projectID": "global",
        "time": {"created": now_ms, "updated": now_ms},
    }
    for mid, _at, data, parts in _rows(conv, sid, cwd, ids, now_ms):
        write_new(root / "message" / sid / f"{mid}.json", [dumps({"id": mid, "sessionID": sid, **data})])
        for pid, part in parts:
            write_new(
                root / "part" / mid / f"{pid}.json", [dumps({"id": pid, "sessionID": sid, "messageID": mid, **part})]
            )
    path = write_new(root / "session" / "global" / f"{sid}.json", [dumps(info)])  # last: a reader sees it whole
    return sid, path


def write(conv: Conversation, cwd: str, env: Mapping[str, str]) -> Written:
    now_ms = int(time.time() * 1000)
    db = database(env)
    if db is not None:
        sid, path = _write_db(db, conv, cwd, now_ms), db
    else:
        sid, path = _write_storage(data_dir(env) / "storage", conv, cwd, now_ms)
    return Written("opencode", sid, path, ("opencode", "--session", sid), cwd)
