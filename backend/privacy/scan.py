"""Where the store holds secrets: every node file and meta.json read directly, `find_secrets` on
each string (markers of an earlier redaction are not secrets). A finding names the place
(session, turn, node, field), the kind and the fingerprint of the value, never the value itself.

Fields of a node: `content`, `name`, `input`, `metadata`, `reads` (the strings inside JSON values,
dict keys included); of a session: `meta.json <key>` (`meta.json title`, `meta.json preview`, ...).
What distillation derived is scanned too when the whole store is: the memory logs and Markdown
files under memory/ (field `memory/<file>`; node: the record's id, session: its provenance's).
Turn N is counted along the node's branch, as the store counts it (its user messages); a node
before the first user message is in turn 0, meta.json in none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import OpmemError
from ..store.node_log import NODE_FILE_RE
from ..store.packwriter import BLOB, object_id
from ..store.sessions import SessionStore
from .detect import find_secrets
from .redact import fingerprint

NODE_FIELDS = ("content", "name", "input", "metadata", "reads")
META_PREFIX = "meta.json "


@dataclass(frozen=True, slots=True)
class SecretFinding:
    session: str
    turn: int | None  # None: meta.json, a memory file
    node: str | None  # None: meta.json; a memory record's id
    field: str
    kind: str
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "turn": self.turn,
            "node": self.node,
            "field": self.field,
            "kind": self.kind,
            "fingerprint": self.fingerprint,
        }


@dataclass
class NodeFile:
    """One node file as read: its bytes and JSON object (for the purge)."""

    name: str
    raw: bytes
    data: dict[str, Any]


@dataclass
class SessionScan:
    """What one session holds: findings, and the node files that hold them."""

    session: str
    path: Path
    findings: list[SecretFinding] = field(default_factory=list)
    affected: list[NodeFile] = field(default_factory=list)  # node files with a finding
    meta_affected: bool = False
    problems: list[str] = field(default_factory=list)
    clean_blobs: set[bytes] = field(default_factory=set)  # git blob ids of the node files with no secret
    stamp: tuple[object, ...] = ()  # what changes when the folder's node files or meta.json do


def folder_stamp(path: Path) -> tuple[object, ...]:
    """Names, sizes, times and inodes of history/ and meta.json: node files are only ever added
    (a purge replaces some), so an equal stamp means the same files."""
    out: list[object] = []
    for item in (path / "meta.json", path / "history"):
        try:
            st = item.stat()
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            out.append(None)
    try:
        with os.scandir(path / "history") as entries:
            for e in entries:
                st = e.stat(follow_symlinks=False)
                out.append((e.name, st.st_size, st.st_mtime_ns, st.st_ino))
    except OSError:
        pass
    return tuple(sorted(out, key=repr))


def strings_of(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string in a JSON value (dict keys included), as redact_value reaches them."""
    if isinstance(value, str):
        yield value
    elif depth > 200:
        return
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                yield k
            yield from strings_of(v, depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings_of(v, depth + 1)


def _secrets_in(value: Any) -> list[tuple[str, str]]:
    """(kind, fingerprint) of every secret in a JSON value."""
    out: list[tuple[str, str]] = []
    for text in strings_of(value):
        for f in find_secrets(text):
            out.append((f.kind, fingerprint(text[f.start : f.end])))
    return out


def read_node_files(history: Path, problems: list[str]) -> list[NodeFile]:
    """The node files of a history/ folder (plain files named like nodes; symlinks are not followed)."""
    try:
        entries = list(os.scandir(history))
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(f"{history}: cannot read ({exc.strerror or exc})")
        return []
    files: list[NodeFile] = []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or not NODE_FILE_RE.match(name):
            continue
        if entry.is_symlink():
            problems.append(f"{entry.path}: a symbolic link, not read (node files are plain files)")
            continue
        try:
            raw = Path(entry.path).read_bytes()
            data = json.loads(raw)
        except OSError as exc:
            problems.append(f"{entry.path}: cannot read ({exc.strerror or exc})")
            continue
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            problems.append(f"{entry.path}: not a node file ({type(exc).__name__}), not scanned")
            continue
        if not isinstance(data, dict):
            problems.append(f"{entry.path}: not a JSON object, not scanned")
            continue
        files.append(NodeFile(name, raw, data))
    files.sort(key=lambda f: (f.data.get("seq") if isinstance(f.data.get("seq"), int) else 0, f.name))
    return files


def turn_numbers(files: list[NodeFile]) -> dict[str, int]:
    """node id -> its turn along its branch (user messages from the root to it)."""
    parent: dict[str, str | None] = {}
    starts: dict[str, int] = {}
    for f in files:
        nid = f.data.get("id")
        if not isinstance(nid, str):
            continue
        p = f.data.get("parent_id")
        caller = f.data.get("called_by")
        parent[nid] = p if isinstance(p, str) else (caller if isinstance(caller, str) else None)
        starts[nid] = 1 if f.data.get("role") == "user" and caller is None else 0
    turns: dict[str, int] = {}
    for nid in parent:
        path: list[str] = []
        cur: str | None = nid
        while cur is not None and cur not in turns and cur in parent and cur not in path:
            path.append(cur)
            cur = parent[cur]
        base = turns.get(cur, 0) if cur is not None else 0
        for item in reversed(path):
            base += starts[item]
            turns[item] = base
    return turns


def scan_session(path: Path, session_id: str) -> SessionScan:
    """Every secret in one session folder's node files and meta.json."""
    result = SessionScan(session_id, path, stamp=folder_stamp(path))
    files = read_node_files(path / "history", result.problems)
    turns = turn_numbers(files)
    for f in files:
        nid = f.data.get("id")
        nid = nid if isinstance(nid, str) else f.name
        hit = False
        for name in NODE_FIELDS:
            for kind, fp in _secrets_in(f.data.get(name)):
                result.findings.append(SecretFinding(session_id, turns.get(nid, 0), nid, name, kind, fp))
                hit = True
        if hit:
            result.affected.append(f)
        else:
            result.clean_blobs.add(object_id(BLOB, f.raw))
    meta_path = path / "meta.json"
    try:
        meta = json.loads(meta_path.read_bytes())
    except FileNotFoundError:
        meta = None
    except (OSError, ValueError, RecursionError) as exc:
        result.problems.append(f"{meta_path}: cannot read ({type(exc).__name__}), not scanned")
        meta = None
    if isinstance(meta, dict):
        for key, value in meta.items():
            for kind, fp in _secrets_in([key, value]):
                result.findings.append(SecretFinding(session_id, None, None, META_PREFIX + str(key), kind, fp))
                result.meta_affected = True
    return result


def session_paths(
    store: SessionStore, session_id: str | None = None, problems: list[str] | None = None
) -> list[tuple[str, Path]]:
    """(id, folder) of every valid session of the store, or of the one named (a clear error if absent).
    The folders the listing skips (a bad meta.json) are `problems`, not scanned."""
    if session_id is not None:
        path = store.path_for(session_id)  # refuses a bad id
        if not (path / "meta.json").is_file():
            raise OpmemError(f"no session {session_id!r} in {store.root}")
        return [(session_id, path)]
    listing = store.list_sessions(rescan=True)
    if problems is not None:
        problems.extend(f"{line} (not scanned)" for line in listing.problems)
    return sorted((meta.id, Path(meta.path) if meta.path else store.path_for(meta.id)) for meta in listing.sessions)


def scan_sessions(
    store: SessionStore, session_id: str | None = None, problems: list[str] | None = None
) -> Iterator[SessionScan]:
    """One SessionScan per session (lock-free reads: node files are written once, renamed in whole)."""
    for sid, path in session_paths(store, session_id, problems):
        yield scan_session(path, sid)


def scan(
    store: SessionStore,
    session_id: str | None = None,
    problems: list[str] | None = None,
    *,
    memory_dir: Path | None = None,
) -> Iterator[SecretFinding]:
    """Every finding of the store (or of one session), session by session; then, for the whole
    store and given `memory_dir`, those of the memory files."""
    for result in scan_sessions(store, session_id, problems):
        if problems is not None:
            problems.extend(result.problems)
        yield from result.findings
    if memory_dir is not None and session_id is None:
        result = scan_memory(memory_dir)
        if problems is not None:
            problems.extend(result.problems)
        yield from result.findings


@dataclass
class MemoryScan:
    findings: list[SecretFinding] = field(default_factory=list)
    affected: list[str] = field(default_factory=list)  # names under memory/ holding a finding
    problems: list[str] = field(default_factory=list)


MEMORY_SUFFIXES = (".jsonl", ".md")


def memory_files(memory_dir: Path) -> list[str]:
    """The logs (timeline, graph) and Markdown files (core.md, entity views) under memory/, by name."""
    names: list[str] = []
    for folder, dirs, files in os.walk(memory_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = Path(folder).relative_to(memory_dir)
        for name in sorted(files):
            if name.endswith(MEMORY_SUFFIXES) and not name.startswith("."):
                names.append(name if rel == Path(".") else f"{rel.as_posix()}/{name}")
    return names


def memory_record(line: bytes) -> Any:
    """A log line as JSON (None: not JSON, e.g. a torn last line)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def scan_memory(memory_dir: Path) -> MemoryScan:
    """Every secret in the memory logs and Markdown files (what distillation derived)."""
    result = MemoryScan()
    for name in memory_files(memory_dir):
        path = memory_dir / name
        try:
            raw = path.read_bytes()
        except OSError as exc:
            result.problems.append(f"{path}: cannot read ({exc.strerror or exc})")
            continue
        where = f"memory/{name}"
        found = False
        if name.endswith(".jsonl"):
            for line in raw.splitlines():
                if not line.strip():
                    continue
                record = memory_record(line)
                hits = _secrets_in(record if record is not None else line.decode("utf-8", "replace"))
                if hits:
                    found = True
                    node, session = _record_place(record)
                    result.findings.extend(SecretFinding(session, None, node, where, k, fp) for k, fp in hits)
        else:
            hits = _secrets_in(raw.decode("utf-8", "replace"))
            found = bool(hits)
            result.findings.extend(SecretFinding("", None, None, where, k, fp) for k, fp in hits)
        if found:
            result.affected.append(name)
    return result


def _record_place(record: Any) -> tuple[str | None, str]:
    """(record id, session id of its provenance) of a memory record, as far as it names them."""
    if not isinstance(record, dict):
        return None, ""
    rid = record.get("id")
    prov = record.get("provenance")
    sid = prov.get("session_id") if isinstance(prov, dict) else None
    return (rid if isinstance(rid, str) else None), (sid if isinstance(sid, str) else "")
