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
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from ..memory.sqlite_files import remove_database
from ..model import OpmemError
from ..safe_text import plain
from ..store.files import dump_compact_json, dump_json, fsync_dir, write_atomic
from ..store.git_mirror import GIT_ERRORS, open_session_git
from ..store.packwriter import BLOB, COMMIT, MODE_TREE, TREE, object_id, parse_tree, write_pack
from ..store.session_repo import GENERATION_FILE
from .detect import find_secrets
from .redact import marker_for, redact_text, redact_value
from .scan import (
    NODE_FIELDS,
    MemoryScan,
    SessionScan,
    folder_stamp,
    memory_files,
    memory_record,
    scan_memory,
    scan_session,
    session_paths,
    strings_of,
)

if TYPE_CHECKING:
    from ..home import Home

MARKER_FILE = "opmem-purge"  # in .git: a purge of this session began and has not finished
FRAGMENT_MIN = 4  # the shortest cut-off start of a value that is replaced too
FULL_MIN = 6  # values this long are replaced wherever they occur in derived text (messages, meta)


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
# redaction of node data and of text derived from it


def redacted_node_bytes(data: Mapping[str, Any]) -> bytes | None:
    """The node file redacted (its fields through redact_value, markers kept), or None when it holds no secret."""
    out = dict(data)
    changed = False
    for name in NODE_FIELDS:
        if name in out:
            value = redact_value(out[name])
            if value is not out[name]:
                out[name] = value
                changed = True
    return dump_compact_json(out) if changed else None


class Values:
    """The secret values of one session (never shown, never written), to find them again in text
    that was cut from the node text: commit messages, titles, previews."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}  # value -> kind
        self._forms: list[tuple[str, str]] | None = None
        self._done: dict[str, str] = {}  # text -> scrubbed (meta.json strings repeat in every commit)

    def collect(self, data: Any) -> None:
        for text in strings_of(data):
            for f in find_secrets(text):
                value = text[f.start : f.end]
                if value not in self.kinds:
                    self.kinds[value] = f.kind
                    self._forms = None
                    self._done = {}

    def forms(self) -> list[tuple[str, str]]:
        """(form, original value), longest first: the value and its one-line form (whitespace
        collapsed, control bytes out), as commit messages and excerpts cut it."""
        if self._forms is None:
            seen: dict[str, str] = {}
            for value in self.kinds:
                seen.setdefault(value, value)
                seen.setdefault(" ".join(plain(value).split()), value)
            self._forms = sorted(((f, v) for f, v in seen.items() if f), key=lambda fv: -len(fv[0]))
        return self._forms

    def scrub(self, text: str) -> str:
        """`text` without the session's values: whole ones, a start of one cut off at a line's end
        (or before "…"), and whatever else the detector finds. A value counts where it starts a
        word (not after a letter or digit), so an id that ends like the start of one stays."""
        if not text:
            return text
        done = self._done.get(text)
        if done is not None:
            return done
        out = text
        for form, value in self.forms():
            if len(form) >= FULL_MIN and form in out:
                out = _replace_words(out, form, marker_for(self.kinds[value], value))
        out = redact_text(self._cut_offs(out))
        if len(self._done) < 100_000:
            self._done[text] = out
        return out

    def _cut_offs(self, text: str) -> str:
        ends = sorted({len(text)} | {i for i, ch in enumerate(text) if ch in "\n…"}, reverse=True)
        for end in ends:  # right to left: a replacement never moves an end still to be looked at
            for form, value in self.forms():
                for size in range(min(len(form) - 1, end), FRAGMENT_MIN - 1, -1):
                    if text.startswith(form[:size], end - size) and _word_start(text, end - size):
                        text = text[: end - size] + marker_for(self.kinds[value], value) + text[end:]
                        break
                else:
                    continue
                break
        return text

    def scrub_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(v) for v in value]
        if isinstance(value, dict):
            return {self.scrub(k) if isinstance(k, str) else k: self.scrub_value(v) for k, v in value.items()}
        return value


def _word_start(text: str, at: int) -> bool:
    return at == 0 or not text[at - 1].isalnum()


def _replace_words(text: str, form: str, marker: str) -> str:
    out: list[str] = []
    at = 0
    while True:
        i = text.find(form, at)
        if i < 0:
            break
        if _word_start(text, i):
            out.append(text[at:i] + marker)
        else:
            out.append(text[at : i + len(form)])
        at = i + len(form)
    out.append(text[at:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# the git mirror


def rewrite_git(
    path: Path,
    values: Values,
    known: Mapping[bytes, bytes | None] | None = None,
    commits_map: dict[str, str] | None = None,
) -> tuple[int, int]:
    """Rewrite every branch of the session repo at `path` without the values; prune what is left.
    `known`: node blobs whose redaction is known already (blob id -> new bytes, None: clean).
    Returns (commits rewritten, refs moved)."""
    try:
        repo = open_session_git(path)
        rewriter = _HistoryRewriter(repo, values, known or {})
        tips = _ref_tips(repo)
        mapping = rewriter.rewrite(set(tips.values()))
    except GIT_ERRORS as exc:  # nothing changed yet
        raise OpmemError(
            f"{path / '.git'}: the git mirror cannot be read ({type(exc).__name__}: {exc}); "
            "`opmem verify` rebuilds it from the node files, then purge again"
        ) from None
    if commits_map is not None:
        commits_map.update((old, new) for old, new in mapping.items() if old != new)
    if rewriter.new_objects:  # one pack, before any ref names its objects
        write_pack(path / ".git" / "objects" / "pack", rewriter.new_objects)
        repo = open_session_git(path)
    moved = 0
    for name, old in sorted(tips.items()):
        new = mapping.get(old, old)
        if new != old:
            repo.references.create(name, pygit2.Oid(hex=new), force=True)
            moved += 1
    _map_detached_head(path / ".git", mapping)
    _empty_reflogs(path / ".git")
    (path / ".git" / "index").unlink(missing_ok=True)  # it names old blobs; rewritten from HEAD after
    (path / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    _map_packed_refs(path / ".git", mapping)
    _drop_commit_graphs(path / ".git")
    _repack_reachable(repo, path / ".git", [mapping.get(t, t) for t in tips.values()])
    return rewriter.rewritten, moved


def _ref_tips(repo: pygit2.Repository) -> dict[str, str]:
    """Every direct ref that points at a commit (branches, and any other ref under refs/)."""
    tips: dict[str, str] = {}
    for name in repo.references:
        ref = repo.references.get(name)
        if ref is None or ref.type != pygit2.enums.ReferenceType.DIRECT:
            continue
        obj = repo[ref.target]  # a ref to a missing object: the mirror is broken (GIT_ERRORS)
        if obj.type == pygit2.enums.ObjectType.COMMIT:
            tips[name] = str(ref.target)
    return tips


class _HistoryRewriter:
    def __init__(self, repo: pygit2.Repository, values: Values, known: Mapping[bytes, bytes | None]) -> None:
        self.repo = repo
        self.values = values
        self.known = known
        self.new_objects: list[tuple[int, bytes]] = []  # written as one pack when the walk is done
        self._new_ids: set[bytes] = set()
        self.blobs: dict[tuple[bytes, str], bytes] = {}  # (old oid, kind) -> new oid
        self.trees: dict[tuple[bytes, str], bytes] = {}
        self.rewritten = 0

    def rewrite(self, tips: Iterable[str]) -> dict[str, str]:
        """old commit id -> new commit id, for every commit reachable from `tips`."""
        tips = list(tips)
        if not tips:
            return {}
        walker = self.repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        for tip in tips:
            walker.push(pygit2.Oid(hex=tip))
        mapping: dict[str, str] = {}
        for commit in walker:  # parents before children
            old = str(commit.id)
            new = self._commit(old, mapping)
            mapping[old] = new
            if new != old:
                self.rewritten += 1
        return mapping

    def _read(self, oid: bytes) -> bytes:
        return self.repo.odb.read(pygit2.Oid(raw=oid))[1]

    def _write(self, kind: int, data: bytes) -> bytes:
        oid = object_id(kind, data)
        if oid not in self._new_ids:
            self._new_ids.add(oid)
            self.new_objects.append((kind, data))
        return oid

    def _commit(self, oid: str, mapping: Mapping[str, str]) -> str:
        raw = self.repo.odb.read(pygit2.Oid(hex=oid))[1]
        header, sep, message = raw.partition(b"\n\n")
        lines = header.split(b"\n")
        out: list[bytes] = []
        for line in lines:
            if line.startswith(b"tree "):
                tree = bytes.fromhex(line[5:].decode())
                line = b"tree " + self._tree(tree, "").hex().encode()
            elif line.startswith(b"parent "):
                parent = line[7:].decode()
                line = b"parent " + mapping.get(parent, parent).encode()
            out.append(line)
        new_raw = b"\n".join(out) + sep + self._message(message)
        if new_raw == raw:
            return oid
        return self._write(COMMIT, new_raw).hex()

    def _message(self, message: bytes) -> bytes:
        try:
            text, errors = message.decode("utf-8"), "strict"
        except UnicodeDecodeError:
            text, errors = message.decode("utf-8", "surrogateescape"), "surrogateescape"
        # the Opmem- trailers name the turn and its head node: kept as they are
        lines = text.split("\n")
        cleaned = "\n".join(line if line.startswith("Opmem-") else self.values.scrub(line) for line in lines)
        return message if cleaned == text else cleaned.encode("utf-8", errors)

    def _tree(self, oid: bytes, where: str) -> bytes:
        key = (oid, where)
        if key in self.trees:
            return self.trees[key]
        raw = self._read(oid)
        entries = parse_tree(raw)
        # history/ first: meta.json (its title and preview) is scrubbed with the values found there
        order = sorted(range(len(entries)), key=lambda i: entries[i][1] != b"history")
        new_ids: dict[int, bytes] = {}
        for i in order:
            mode, name, child = entries[i]
            sub = f"{where}{name.decode('utf-8', 'surrogateescape')}"
            if mode == MODE_TREE:
                new_ids[i] = self._tree(child, sub + "/")
            elif mode.startswith(b"100"):
                new_ids[i] = self._blob(child, _blob_kind(sub))
            else:
                new_ids[i] = child  # a symlink or a submodule: no session text
        if all(new_ids[i] == entries[i][2] for i in range(len(entries))):
            result = oid
        else:
            new_raw = b"".join(mode + b" " + name + b"\0" + new_ids[i] for i, (mode, name, _) in enumerate(entries))
            result = self._write(TREE, new_raw)
        self.trees[key] = result
        return result

    def _blob(self, oid: bytes, kind: str) -> bytes:
        key = (oid, kind)
        if key in self.blobs:
            return self.blobs[key]
        if kind == "node" and oid in self.known:
            new = self.known[oid]
        else:
            new = _redact_blob(self._read(oid), kind, self.values)
        result = oid if new is None else self._write(BLOB, new)
        self.blobs[key] = result
        return result


def _blob_kind(where: str) -> str:
    if where.startswith("history/") and where.endswith(".json"):
        return "node"
    if where == "meta.json":
        return "meta"
    return "text"


def _redact_blob(data: bytes, kind: str, values: Values) -> bytes | None:
    """The blob without secrets, or None when it holds none."""
    if kind in ("node", "meta"):
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            if kind == "node":
                values.collect({k: parsed.get(k) for k in NODE_FIELDS})
                return redacted_node_bytes(parsed)
            cleaned = values.scrub_value(parsed)
            return None if cleaned == parsed else dump_json(cleaned)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # not text: no session text in it
    cleaned = values.scrub(text)
    return None if cleaned == text else cleaned.encode("utf-8")


def _map_detached_head(git_dir: Path, mapping: Mapping[str, str]) -> None:
    head = git_dir / "HEAD"
    try:
        text = head.read_text().strip()
    except OSError:
        return
    if text in mapping and mapping[text] != text:
        write_atomic(head, (mapping[text] + "\n").encode())


def _map_packed_refs(git_dir: Path, mapping: Mapping[str, str]) -> None:
    """packed-refs (a repo someone ran `git gc` in) names the new commits too, not shadowed old ones."""
    path = git_dir / "packed-refs"
    try:
        text = path.read_text()
    except OSError:
        return
    out = []
    for line in text.splitlines(keepends=True):
        head = line[1:41] if line.startswith("^") else line[:40]
        if head in mapping:
            line = line.replace(head, mapping[head], 1)
        out.append(line)
    new = "".join(out)
    if new != text:
        write_atomic(path, new.encode())


def _drop_commit_graphs(git_dir: Path) -> None:
    """Files git derives from the commits and packs (they name the old ones); git makes them again."""
    info = git_dir / "objects" / "info"
    for name in ("commit-graph", "packs"):
        (info / name).unlink(missing_ok=True)
    shutil.rmtree(info / "commit-graphs", ignore_errors=True)
    pack = git_dir / "objects" / "pack"
    for name in ("multi-pack-index",):
        (pack / name).unlink(missing_ok=True)


def _empty_reflogs(git_dir: Path) -> None:
    """What `git reflog expire --expire=now --all` leaves: every reflog empty (they name old commits)."""
    logs = git_dir / "logs"
    if not logs.is_dir():
        return
    for folder, _dirs, files in os.walk(logs):
        for name in files:
            path = Path(folder) / name
            if path.stat().st_size:
                write_atomic(path, b"")


def _repack_reachable(repo: pygit2.Repository, git_dir: Path, tips: list[str]) -> None:
    """One new pack of the objects reachable from `tips`; every other pack and loose object goes."""
    objects = git_dir / "objects"
    pack_dir = objects / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    staging = objects / f"purge-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        commits: list[pygit2.Oid] = []
        if tips:
            walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL)
            for tip in set(tips):
                walker.push(pygit2.Oid(hex=tip))
            commits = [c.id for c in walker]

        def add(builder: pygit2.PackBuilder) -> None:
            for oid in commits:
                builder.add_recur(oid)  # the commit, its tree and blobs (not its parents: walked above)

        repo.pack(str(staging), add, n_threads=1)
        made = sorted(staging.glob("pack-*"), key=lambda p: p.suffix == ".idx")  # the .pack before its .idx
        keep = {p.name for p in made}
        for item in made:
            os.replace(item, pack_dir / item.name)
        if made:
            fsync_dir(pack_dir)
        old = [p for p in pack_dir.glob("pack-*") if p.name not in keep]
        for item in sorted(old, key=lambda p: p.suffix != ".idx"):  # an index before its pack
            item.unlink(missing_ok=True)
        for name in os.listdir(objects):
            if len(name) == 2 and all(c in "0123456789abcdef" for c in name):
                shutil.rmtree(objects / name, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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
