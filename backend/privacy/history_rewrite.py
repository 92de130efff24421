"""A session's git mirror rewritten without its secret values: every branch, a commit's tree,
message and node blobs redacted, refs moved, reflogs emptied, the reachable objects repacked so
that no object holding a value remains (backend/secrets_purge.py step 1; sync pushes redacted copies with it)."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

import pygit2

from ..model import OpmemError
from ..store.files import dump_json, fsync_dir, write_atomic
from ..store.git_mirror import GIT_ERRORS, open_session_git
from ..store.packwriter import BLOB, COMMIT, MODE_TREE, TREE, object_id, parse_tree, write_pack
from .scan import (
    NODE_FIELDS,
)
from .scrub import Values, redacted_node_bytes


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
        rewriter = HistoryRewriter(repo, values, known or {})
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


class HistoryRewriter:
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
