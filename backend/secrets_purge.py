"""`opmem secrets purge`: the secrets found in the store redacted in place, git history included.

For each session that holds a secret (scan.py), under the session's write lock:

1. The git mirror is rewritten on every branch: each commit from the first one that holds a value
   on gets a tree whose node files and meta.json are redacted and a message with the value (or
   the cut-off start of it: a message holds the first 60 characters of the prompt) replaced by
   its marker; author, committer, times and the rest of the message stay. Refs are moved, the
   reflogs emptied, the index rewritten from HEAD, and the reachable objects written into one
   new pack: every other pack and loose object is deleted, so no object holding a value remains.
2. The node files holding a value are rewritten redacted (temp file, fsync, rename: each file is
   old or new, never torn); every other file is left byte for byte.
3. meta.json (title, preview, ...) likewise.

The git step goes first and takes the values from the objects themselves, so a purge cut short
(a crash, a kill) is finished by running it again: the node files still hold what was not done,
and a marker in .git (`opmem-purge`) names a session whose remaining steps (the pruning, the
search index) are due even when its files hold nothing any more. The search index is built again
from the redacted sessions at the end (its full-text tables keep the terms of dropped rows until
they are rebuilt).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .memory.sqlite_files import remove_database
from .model import OpmemError
from .privacy.history_rewrite import rewrite_git
from .privacy.scan import (
    MemoryScan,
    SessionScan,
    folder_stamp,
    memory_files,
    memory_record,
    scan_memory,
    scan_session,
    session_paths,
)
from .privacy.scrub import Values, redacted_node_bytes
from .store.files import dump_json, fsync_dir, write_atomic
from .store.packwriter import BLOB, object_id
from .store.session_repo import GENERATION_FILE

if TYPE_CHECKING:
    from .home import Home

MARKER_FILE = "opmem-purge"  # in .git: a purge of this session began and has not finished


@dataclass
class PurgePlan:
    """What a purge will do: the sessions, their node files and findings."""

    sessions: list[SessionScan] = field(default_factory=list)
    memory: MemoryScan | None = None  # the memory files (a purge of the whole store only)
    problems: list[str] = field(default_factory=list)

    @property
    def findings(self) -> int:
        return sum(len(s.findings) for s in self.sessions)

    @property
    def memory_findings(self) -> int:
        return len(self.memory.findings) if self.memory is not None else 0

    def __bool__(self) -> bool:
        return bool(self.sessions or self.memory_findings)

    @property
    def nodes(self) -> int:
        return sum(len(s.affected) for s in self.sessions)


@dataclass
class PurgeReport:
    sessions: int = 0
    nodes: int = 0
    findings: int = 0
    commits_rewritten: int = 0
    refs_moved: int = 0
    memory_files: int = 0  # files under memory/ rewritten
    index_rebuilt: bool = False
    problems: list[str] = field(default_factory=list)


def plan_purge(home: Home, session_id: str | None = None) -> PurgePlan:
    """The sessions with a secret in their files, and those whose earlier purge did not finish."""
    plan = PurgePlan()
    for sid, path in session_paths(home.sessions, session_id, plan.problems):
        result = scan_session(path, sid)
        plan.problems.extend(result.problems)
        if result.findings or (path / ".git" / MARKER_FILE).exists():
            plan.sessions.append(result)
    if session_id is None and home.memory_dir.is_dir():
        plan.memory = scan_memory(home.memory_dir)
        plan.problems.extend(plan.memory.problems)
    return plan


def purge(home: Home, plan: PurgePlan, *, progress: Callable[[str], Any] | None = None) -> PurgeReport:
    """Carry out `plan` (made by plan_purge); the search index is rebuilt when one exists."""
    report = PurgeReport(problems=list(plan.problems))
    done: list[Path] = []
    values = Values()  # of every session purged: memory records cut from their text are scrubbed with them
    commits_map: dict[str, str] = {}  # old commit id -> new, for the memory records' provenance
    for scanned in plan.sessions:
        if progress is not None:
            progress(scanned.session)
        with home.sessions.rewriting(scanned.session) as repo:
            fresh = scanned
            if folder_stamp(repo.path) != scanned.stamp:  # changed since the plan: look again, lock held
                fresh = scan_session(repo.path, scanned.session)
            commits, refs = purge_session(repo.path, fresh, values, commits_map)
            repo.mirror.reset()  # the index after the new HEAD (no index entry keeps an old blob)
            repo.mirror.index_dirty = True
            repo.mirror.flush_index(force=True)
            report.problems.extend(repo.mirror.problems)
        report.sessions += 1
        report.nodes += len(fresh.affected)
        report.findings += len(fresh.findings)
        report.commits_rewritten += commits
        report.refs_moved += refs
        done.append(repo.path)
    if plan.memory is not None:
        if progress is not None:
            progress("memory")
        with home.memory.batch():  # the memory lock: no distillation appends meanwhile
            report.memory_files = purge_memory(home.memory_dir, values, commits_map)
    if (done or report.memory_files) and home.search_index.path.exists():
        try:
            home.search_index.rebuild()
            report.index_rebuilt = True
        except OpmemError as exc:
            report.problems.append(f"the search index could not be rebuilt: {exc}; run `opmem index rebuild`")
            return report  # the markers stay: a purge run again rebuilds it
    for path in done:
        (path / ".git" / MARKER_FILE).unlink(missing_ok=True)
    return report


def purge_session(
    path: Path, scanned: SessionScan, values: Values | None = None, commits_map: dict[str, str] | None = None
) -> tuple[int, int]:
    """Redact one session folder (its lock held): git first, then node files, then meta.json.
    `values` gains the session's values, `commits_map` its old -> new commit ids.
    Returns (commits rewritten, refs moved)."""
    git_dir = path / ".git"
    values = values if values is not None else Values()
    # git blobs that are node files as the scan read them: known without running the detector again
    known: dict[bytes, bytes | None] = dict.fromkeys(scanned.clean_blobs)
    redacted: list[tuple[str, bytes]] = []
    for nf in scanned.affected:
        values.collect(nf.data)
        new = redacted_node_bytes(nf.data)
        known[object_id(BLOB, nf.raw)] = new
        if new is not None:
            redacted.append((nf.name, new))
    commits = refs = 0
    if git_dir.is_dir():
        write_atomic(git_dir / MARKER_FILE, b"a purge of this session began; `opmem secrets purge` finishes it\n")
        commits, refs = rewrite_git(path, values, known, commits_map)
    history = path / "history"
    for name, new in redacted:
        write_atomic(history / name, new)
    if scanned.affected:
        fsync_dir(history)
    meta_path = path / "meta.json"
    try:
        meta = json.loads(meta_path.read_bytes())
    except (OSError, ValueError):
        meta = None
    if isinstance(meta, dict):
        cleaned = values.scrub_value(meta)
        if cleaned != meta:
            write_atomic(meta_path, dump_json(cleaned))
            fsync_dir(path)
    if git_dir.is_dir():  # every open copy of the session (other processes too) reads it again whole
        write_atomic(git_dir / GENERATION_FILE, uuid.uuid4().hex.encode())
    return commits, refs


# ---------------------------------------------------------------------------------------------
# the memory files


def purge_memory(memory_dir: Path, values: Values, commits_map: Mapping[str, str]) -> int:
    """Scrub the memory logs and Markdown files (the memory lock held): only the lines that hold a
    value (or name a rewritten commit) change; the derived cache goes (its free pages may keep old
    text), to be rebuilt from the logs. Returns the files rewritten."""
    changed = 0
    for name in memory_files(memory_dir):
        path = memory_dir / name
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        new = _scrub_log(raw, values, commits_map) if name.endswith(".jsonl") else _scrub_bytes(raw, values)
        if new != raw:
            write_atomic(path, new)
            changed += 1
    if changed:
        remove_database(memory_dir / ".cache.sqlite")
    return changed


def _scrub_bytes(raw: bytes, values: Values) -> bytes:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    cleaned = values.scrub(text)
    return raw if cleaned == text else cleaned.encode("utf-8")


def _scrub_log(raw: bytes, values: Values, commits_map: Mapping[str, str]) -> bytes:
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        record = memory_record(line)
        if record is None:  # a torn line: as text
            lines[i] = _scrub_bytes(line, values)
            continue
        cleaned = _remap_commits(values.scrub_value(record), commits_map)
        if cleaned != record:
            lines[i] = _json_line(cleaned)
    return b"\n".join(lines)


def _remap_commits(value: Any, commits_map: Mapping[str, str]) -> Any:
    """A record with its provenance's `commit` moved to the rewritten commit."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "commit" and isinstance(v, str) and v in commits_map:
                out[k] = commits_map[v]
            else:
                out[k] = _remap_commits(v, commits_map)
        return out
    if isinstance(value, list):
        return [_remap_commits(v, commits_map) for v in value]
    return value


def _json_line(data: Any) -> bytes:
    """As the memory writer writes a record (backend/memory/writer.py)."""
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")
