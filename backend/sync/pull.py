"""The pull half of a sync: fetch what other machines pushed, refuse a rewritten remote, take in
their sessions (staged, then renamed into place), titles and memory lines, then the index."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pygit2

from ..model import OpmemError
from ..store.files import dump_json, fsync_dir, write_atomic
from ..store.git_mirror import init_session_git, open_session_git
from ..store.packwriter import BLOB, COMMIT, MODE_TREE, TREE, parse_tree, write_pack
from ..store.session_repo import GENERATION_FILE
from . import gitcli
from .gitcli import SyncError
from .memory_merge import merge_memory
from .merge import title_winner
from .outbox import INCOMING, MEMORY, META, NS, PACK_AFTER, SEEN, SESSIONS, Outbox, SyncReport, origins

REINDEX_OWED = "reindex-owed"  # in sync/: a pull began taking things in and has not indexed them yet


class SyncRefused(SyncError):
    """The remote's history was rewritten by someone else; nothing here was changed or deleted."""


class Puller(Outbox):
    def pull(self, remote_refs: Mapping[str, str], report: SyncReport) -> None:
        seen = {NS + k[len("opmem/") :]: v for k, v in self._refs(SEEN).items()}
        changed = {name: oid for name, oid in remote_refs.items() if seen.get(name) != oid}
        gone = sorted(set(seen) - set(remote_refs))
        self._fetch(changed)
        forced = list(gone)
        for name, new in changed.items():
            old = seen.get(name)
            if old and not self.outbox.descendant_of(pygit2.Oid(hex=new), pygit2.Oid(hex=old)):
                forced.append(name)
        if forced:
            for name in changed:
                self._del_ref(INCOMING + name[len("refs/") :])
            self.refs.save(durable=self.home.durable)
            shown = ", ".join(sorted(forced)[:10]) + (f" and {len(forced) - 10} more" if len(forced) > 10 else "")
            raise SyncRefused(
                f"the sync remote {self.remote} was rewritten by someone else: {shown} "
                f"{'is' if len(forced) == 1 else 'are'} not a continuation of what this machine pulled last; "
                "nothing was changed here (if that rewrite is meant, `opmem sync init REMOTE` again starts from it)"
            )
        owed = (self.dir / REINDEX_OWED).exists()
        if not changed:
            if owed:
                self._reindex(report, everything=True)
            return
        if not owed:  # a kill before the reindex below leaves it: the next sync catches the index up
            write_atomic(self.dir / REINDEX_OWED, b"", durable=self.home.durable)
        report.refs_changed = True
        metas = {n[len(META) :]: oid for n, oid in remote_refs.items() if n.startswith(META)}
        theirs = {
            m: self._read_meta_tree(oid, seen.get(META + m))  # entries unchanged since last pulled were merged then
            for m, oid in metas.items()
            if m != self.me
        }
        origin_of: dict[str, str] = {}
        for m, tree in theirs.items():
            self._save_machine(m, tree)
            for sid, who in tree.get("origins", {}).items():
                if who == m:
                    origin_of[sid] = m
        claims = {sid: m for sid, m in origin_of.items() if m != self.me}
        if claims != self._claims():
            write_atomic(self.dir / "claims.json", dump_json(dict(sorted(claims.items()))))
        self._pull_sessions(remote_refs, changed, origin_of, theirs, report)
        self._merge_titles(theirs, report)
        for name, oid in changed.items():
            if name.startswith(MEMORY) and name[len(MEMORY) :] != self.me:
                report.memory_records += merge_memory(self.outbox, oid, self.home.memory_dir)
        self._reindex(report, everything=owed)
        for name, oid in changed.items():
            self._set_ref(SEEN + name[len("refs/") :], oid)
            self._del_ref(INCOMING + name[len("refs/") :])

    def _fetch(self, changed: Mapping[str, str]) -> None:
        """The changed remote refs fetched as refs/sync/incoming/... (objects and all)."""
        for name in list(self._refs(INCOMING)):  # left by a sync killed midway: fetched again if still new
            self._del_ref(INCOMING + name)
        if not changed:
            return
        gitcli.fetch(
            self.outbox_path, self.remote, [f"+{name}:{INCOMING}{name[len('refs/') :]}" for name in sorted(changed)]
        )
        # git wrote them as loose files: into the table, so that its save removes them (10,000
        # loose files left behind were read and removed by the next sync: 12 s)
        self.refs.fold_loose(INCOMING.rstrip("/"))
        if len(changed) >= PACK_AFTER:
            gitcli.write_commit_graph(self.outbox_path)

    def _read_meta_tree(self, oid: str, since: str | None = None) -> dict[str, Any]:
        """A machine's meta ref: machine, projects, origins, and `sessions`: the meta.json of each
        session whose entry differs from the one in commit `since` (all of them without it);
        `meta_blobs` names every session's blob, for `_their_meta`."""
        tree = self.outbox[pygit2.Oid(hex=oid)].peel(pygit2.Tree)
        out: dict[str, Any] = {"sessions": {}, "meta_blobs": {}}
        for name in ("machine.json", "projects.json", "origins.json"):
            if name in tree:
                try:
                    out[name[:-5]] = json.loads(self.outbox[tree[name].id].data)
                except ValueError:
                    out[name[:-5]] = {}
        before: dict[str, pygit2.Oid] = {}
        if since is not None and pygit2.Oid(hex=since) in self.outbox.odb:
            old = self.outbox[pygit2.Oid(hex=since)].peel(pygit2.Tree)
            if "sessions" in old:
                before = {e.name: e.id for e in self.outbox[old["sessions"].id]}
        if "sessions" in tree:
            for entry in self.outbox[tree["sessions"].id]:
                sid = entry.name[: -len(".json")]
                out["meta_blobs"][sid] = entry.id
                if before.get(entry.name) == entry.id:
                    continue
                data = self._blob_json(entry.id)
                if data is not None:
                    out["sessions"][sid] = data
        return out

    def _blob_json(self, oid: pygit2.Oid) -> dict[str, Any] | None:
        try:
            data = json.loads(self.outbox[oid].data)
        except (ValueError, KeyError):
            return None
        return data if isinstance(data, dict) else None

    def _their_meta(self, tree: Mapping[str, Any], sid: str) -> dict[str, Any] | None:
        if sid in tree["sessions"]:
            return tree["sessions"][sid]
        blob = tree["meta_blobs"].get(sid)
        return self._blob_json(blob) if blob is not None else None

    def _save_machine(self, machine_id: str, tree: Mapping[str, Any]) -> None:
        folder = self.dir / "machines"
        folder.mkdir(parents=True, exist_ok=True)
        data = {"machine": tree.get("machine", {}), "projects": tree.get("projects", {})}
        path = folder / f"{machine_id}.json"
        new = dump_json(data)
        if not path.exists() or path.read_bytes() != new:
            write_atomic(path, new)

    def _pull_sessions(
        self,
        remote_refs: Mapping[str, str],
        changed: Mapping[str, str],
        origin_of: Mapping[str, str],
        theirs: Mapping[str, Mapping[str, Any]],
        report: SyncReport,
    ) -> None:
        by_session: dict[str, dict[str, str]] = {}
        for name, oid in remote_refs.items():
            if name.startswith(SESSIONS):
                sid, _, branch = name[len(SESSIONS) :].partition("/heads/")
                if branch:
                    by_session.setdefault(sid, {})[branch] = oid
        touched = {n[len(SESSIONS) :].partition("/heads/")[0] for n in changed if n.startswith(SESSIONS)}
        pulled = origins(self.home)
        taken: list[tuple[str, str, Path]] = []
        for sid in sorted(touched):
            origin = origin_of.get(sid)
            if origin is None or origin == self.me:
                continue  # our own refs, or refs no machine claims (yet)
            path = self.home.sessions.path_for(sid)
            if path.exists() and pulled.get(sid) != origin:
                report.conflicts.append(
                    f"session {sid} was recorded here and on machine {origin}; the copy from {origin} was not taken"
                )
                continue
            taken.append((sid, origin, path))
        if any(pulled.get(sid) != origin for sid, origin, _ in taken):
            # named as pulled before they land: a kill in between never makes one "recorded here"
            pulled.update((sid, origin) for sid, origin, _ in taken)
            write_atomic(self.dir / "origins.json", dump_json(dict(sorted(pulled.items()))))
        staged: list[tuple[str, Path, Path]] = []
        for sid, origin, path in taken:
            meta = self._their_meta(theirs[origin], sid)
            try:
                if not path.exists():
                    staged.append((sid, self._stage_session(sid, path, by_session.get(sid, {}), meta), path))
                elif self._update_session(sid, path, by_session.get(sid, {}), meta):
                    report.updated_sessions.append(sid)
            except (OpmemError, OSError, pygit2.GitError, KeyError, ValueError) as exc:
                report.problems.append(f"session {sid}: not pulled ({type(exc).__name__}: {exc})")
        self._land(staged, report)
        self.home.sessions._mark_changed(*(sid for sid, _staging, _path in staged))

    def _land(self, staged: list[tuple[str, Path, Path]], report: SyncReport) -> None:
        """Staged sessions renamed into place, after one os.sync put every file of them on disk."""
        if not staged:
            return
        if self.home.durable:
            os.sync()
        self.home.sessions.journal.append(sid for sid, _staging, _path in staged)  # a kill after a rename
        parents = set()
        for sid, staging, path in staged:
            os.rename(staging, path)
            parents.add(path.parent)
            report.pulled_sessions.append(sid)
        if self.home.durable:
            for parent in parents:
                fsync_dir(parent)

    def _objects_for(self, tips: Iterable[str], target: pygit2.Repository | None) -> list[tuple[int, bytes]]:
        """Every object reachable from `tips` in the outbox that `target` lacks."""
        out: list[tuple[int, bytes]] = []
        seen: set[str] = set()
        odb = self.outbox.odb
        stack = [t for t in tips]
        kinds = {pygit2.enums.ObjectType.COMMIT: COMMIT, pygit2.enums.ObjectType.TREE: TREE}
        while stack:
            oid = stack.pop()
            if oid in seen:
                continue
            seen.add(oid)
            if target is not None and pygit2.Oid(hex=oid) in target.odb:
                continue  # with all it reaches: a repo holds what its objects name
            kind, data = odb.read(pygit2.Oid(hex=oid))
            out.append((kinds.get(kind, BLOB), data))
            if kind == pygit2.enums.ObjectType.COMMIT:
                commit = self.outbox[pygit2.Oid(hex=oid)]
                stack.append(str(commit.tree_id))
                stack.extend(str(p) for p in commit.parent_ids)
            elif kind == pygit2.enums.ObjectType.TREE:
                for mode, _name, child in parse_tree(data):
                    if mode == MODE_TREE or mode.startswith(b"100"):
                        stack.append(child.hex())
        return out

    def _node_files(self, tips: Iterable[str]) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        for tip in tips:
            tree = self.outbox[pygit2.Oid(hex=tip)].peel(pygit2.Tree)
            if "history" not in tree:
                continue
            for entry in self.outbox[tree["history"].id]:
                if entry.name not in files and entry.name.endswith(".json"):
                    files[entry.name] = self.outbox[entry.id].data
        return files

    def _tip_meta(self, branches: Mapping[str, str]) -> dict[str, Any]:
        tip = branches.get("main") or next(iter(sorted(branches.values())), None)
        if tip is None:
            return {}
        tree = self.outbox[pygit2.Oid(hex=tip)].peel(pygit2.Tree)
        try:
            data = json.loads(self.outbox[tree["meta.json"].id].data) if "meta.json" in tree else {}
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    def _write_refs(self, git_dir: Path, branches: Mapping[str, str]) -> None:
        repo = open_session_git(git_dir)
        for branch, oid in sorted(branches.items()):
            repo.references.create(f"refs/heads/{branch}", pygit2.Oid(hex=oid), force=True)
        if "main" not in branches and branches:
            repo.set_head(f"refs/heads/{sorted(branches)[0]}")

    def _stage_session(self, sid: str, path: Path, branches: Mapping[str, str], meta: Mapping[str, Any] | None) -> Path:
        """A session recorded elsewhere, made whole in a hidden folder beside its place (renamed in
        by the caller once all are on disk; a kill leaves the hidden folder, removed by the next sync)."""
        staging = path.with_name(f".{path.name}.syncing-{uuid.uuid4().hex[:8]}")
        for sub in ("history", "context/commits", "workdir"):
            (staging / sub).mkdir(parents=True)
        self._git_template(staging / ".git")
        objects = self._objects_for(branches.values(), None)
        if objects:
            write_pack(staging / ".git" / "objects" / "pack", objects, durable=False)
        for branch, oid in branches.items():
            ref = staging / ".git" / "refs" / "heads" / branch
            ref.parent.mkdir(parents=True, exist_ok=True)
            ref.write_text(oid + "\n")
        if "main" not in branches and branches:
            (staging / ".git" / "HEAD").write_text(f"ref: refs/heads/{sorted(branches)[0]}\n")
        for name, data in self._node_files(branches.values()).items():
            (staging / "history" / name).write_bytes(data)
        data = dict(meta) if meta else self._tip_meta(branches)
        data["id"] = sid
        (staging / "meta.json").write_bytes(dump_json(data))
        return staging

    def _git_template(self, git_dir: Path) -> None:
        """A session's `.git` as `init_session_git` makes it, copied from one made once per run."""
        if self._template is None:
            made = self.dir / f".template-{uuid.uuid4().hex[:8]}"
            init_session_git(made)
            files: dict[str, bytes] = {}
            dirs: list[str] = []
            root = made / ".git"
            for folder, subdirs, names in os.walk(root):
                rel = Path(folder).relative_to(root)
                dirs += [str(rel / d) for d in subdirs]
                for name in names:
                    files[str(rel / name)] = (Path(folder) / name).read_bytes()
            shutil.rmtree(made, ignore_errors=True)
            self._template = (dirs, files)
        dirs, files = self._template
        git_dir.mkdir()
        for d in dirs:
            (git_dir / d).mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (git_dir / name).write_bytes(data)

    def _update_session(
        self, sid: str, path: Path, branches: Mapping[str, str], meta: Mapping[str, Any] | None
    ) -> bool:
        """New turns and branches of a session pulled before: objects, refs, node files, meta."""
        with self.home.sessions.rewriting(sid):
            repo = open_session_git(path)
            have = {
                b: str(repo.references[f"refs/heads/{b}"].target)
                for b in branches
                if f"refs/heads/{b}" in repo.references
            }
            if have == dict(branches):
                current = json.loads((path / "meta.json").read_bytes())
                if not meta or all(current.get(k) == v for k, v in meta.items() if k != "id"):
                    return False
            objects = self._objects_for(branches.values(), repo)
            if objects:
                write_pack(path / ".git" / "objects" / "pack", objects)
            for name, data in self._node_files(branches.values()).items():
                target = path / "history" / name
                if not target.exists():
                    write_atomic(target, data, durable=False)
            fsync_dir(path / "history")
            self._write_refs(path / ".git", branches)
            current = json.loads((path / "meta.json").read_bytes())
            merged = dict(meta) if meta else self._tip_meta(branches)
            if title_winner(merged, current) is not None:  # a title the user gave here stays
                merged["title"], merged["title_source"] = current.get("title"), current.get("title_source")
            merged["id"] = sid
            write_atomic(path / "meta.json", dump_json(merged))
            write_atomic(path / ".git" / GENERATION_FILE, uuid.uuid4().hex.encode())
        return True

    def _merge_titles(self, theirs: Mapping[str, Mapping[str, Any]], report: SyncReport) -> None:
        """A title another machine holds for a session this one has: the user's wins, else the newer."""
        for tree in theirs.values():
            for sid, remote in tree.get("sessions", {}).items():
                path = self.home.sessions.path_for(sid)
                try:
                    local = json.loads((path / "meta.json").read_bytes())
                except (OSError, ValueError):
                    continue
                win = title_winner(local, remote)
                if win is None or "[secret:" in str(win.get("title")):
                    continue  # a redacted copy of our own title never replaces it
                with self.home.sessions.rewriting(sid):
                    local = json.loads((path / "meta.json").read_bytes())
                    win = title_winner(local, remote)
                    if win is None:
                        continue
                    local.update(win)
                    local["updated_at"] = max(float(local.get("updated_at") or 0), float(remote.get("updated_at") or 0))
                    write_atomic(path / "meta.json", dump_json(local))
                    if (path / ".git").is_dir():
                        write_atomic(path / ".git" / GENERATION_FILE, uuid.uuid4().hex.encode())
                report.titles += 1

    def _reindex(self, report: SyncReport, *, everything: bool) -> None:
        """The search index takes in the sessions and memory records pulled (nothing else changed);
        `everything`: what a sync killed before this step pulled is not known, all is caught up."""
        if everything or report.memory_records or report.pulled_sessions or report.updated_sessions:
            try:
                if "memory" in self.home.__dict__:
                    self.home.memory.refresh()
                wanted = None if everything else sorted({*report.pulled_sessions, *report.updated_sessions})
                self.home.search_index.update(wanted)
                self.home.usage.update(wanted)
            except OpmemError as exc:
                report.problems.append(f"the search index was not updated: {exc}; run `opmem index rebuild`")
                return
        (self.dir / REINDEX_OWED).unlink(missing_ok=True)
