"""One sync of a store with its git remote: pull what other machines pushed, then push what is new here.

The remote is one git repository for the whole store. Its refs:

    refs/opmem/sessions/<session id>/heads/<branch>   a session's branches (objects shared by all)
    refs/opmem/meta/<machine id>       a commit whose tree holds machine.json, projects.json (the
                                       machine's project registry: paths are per machine),
                                       origins.json ({session id: machine that recorded it}) and
                                       sessions/<id>.json (meta.json of each session it shares)
    refs/opmem/memory/<machine id>     a commit whose tree holds that machine's memory logs

A machine pushes only refs it owns: the sessions recorded on it, its meta ref and its memory ref;
git refuses anything that is not a fast-forward (no push is forced). Everything goes through a
local bare repository, `<home>/sync/outbox.git`, so the whole store is one fetch and one push:

    refs/opmem/...               what this machine pushes (redacted copies unless [sync] redact = false)
    refs/sync/seen/opmem/...     each remote ref as last pulled or pushed
    refs/sync/incoming/opmem/... a fetch being checked (a ref that is not a descendant of its seen
                                 value was rewritten by someone else: the sync refuses, naming it)

What never moves: the users' project repositories, the search index and caches (rebuilt here),
private sessions and those `[memory] exclude_*` names (and their memory records). A pulled session
never overwrites a session recorded here: same id, other content keeps the local one, reported.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2
from filelock import FileLock, Timeout

from ..memory.logs import log_names
from ..memory.store import LOCK_NAME
from ..model import OpmemError, SessionMeta
from ..privacy import redact_value
from ..privacy.purge import Values, _HistoryRewriter
from ..store.change_journal import ROTATE_AFTER, JournalRead
from ..store.files import dump_compact_json, dump_json, fsync_dir, write_atomic
from ..store.git_mirror import init_session_git, open_session_git
from ..store.packwriter import BLOB, COMMIT, MODE_TREE, TREE, object_id, parse_tree, write_pack
from ..store.session_repo import GENERATION_FILE
from . import gitcli
from .gitcli import SyncError
from .merge import missing_lines, parse_lines, session_of, title_winner
from .refs import RefTable

if TYPE_CHECKING:
    from ..home import Home

NS = "refs/opmem/"
SEEN = "refs/sync/seen/"
INCOMING = "refs/sync/incoming/"
SESSIONS = NS + "sessions/"
META = NS + "meta/"
MEMORY = NS + "memory/"
SIGNATURE = ("opmem sync", "sync@opmem.invalid")
MODE_BLOB = b"100644"
FULL_SCAN_EVERY = 24 * 3600.0  # seconds; between these, only the sessions the store's journal names are looked at
OUTBOX_PACKS_AT_MOST = 50  # git's own gc.autoPackLimit; the outbox has gc.auto=0, so a sync rolls them up
REINDEX_OWED = "reindex-owed"  # in sync/: a pull began taking things in and has not indexed them yet
PACK_AFTER = 100  # a push (fetch) of this many refs or more packs a local remote's refs, writes commit-graphs


class SyncRefused(SyncError):
    """The remote's history was rewritten by someone else; nothing here was changed or deleted."""


@dataclass(frozen=True)
class Known:
    """A blob the outbox already holds, by its raw id."""

    oid: bytes


@dataclass(frozen=True)
class Subtree:
    """A folder given as its tree object, built by the caller (10,000 session metas in one)."""

    raw: bytes
    blobs: tuple[bytes, ...] = ()  # new blobs it names


@dataclass
class _PushScan:
    state: dict[str, Any]  # session id -> what was pushed of it, with the stamp of its files
    pulled: dict[str, str]
    claims: dict[str, str]
    want: dict[str, str] = field(default_factory=dict)
    by_session: dict[str, list[str]] = field(default_factory=dict)  # session id -> its names in `want`
    metas: dict[str, Any] = field(default_factory=dict)
    own: set[str] = field(default_factory=set)
    private: set[str] = field(default_factory=set)
    present: set[str] = field(default_factory=set)
    objects: list[tuple[int, bytes]] = field(default_factory=list)
    dirty: bool = False


@dataclass
class SyncReport:
    pulled_sessions: list[str] = field(default_factory=list)
    updated_sessions: list[str] = field(default_factory=list)
    pushed_refs: int = 0
    memory_records: int = 0
    titles: int = 0
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    refs_changed: bool = False

    def lines(self) -> list[str]:
        out = [
            f"pulled {len(self.pulled_sessions)} new session(s), updated {len(self.updated_sessions)}, "
            f"{self.memory_records} memory record(s), {self.titles} title(s); pushed {self.pushed_refs} ref(s)"
        ]
        out += [f"kept the local copy: {c}" for c in self.conflicts]
        return out


# ---------------------------------------------------------------------------------------------- machine


def machine(home: Home) -> dict[str, Any]:
    """This store's machine identity (`<home>/machine.json`), made the first time."""
    path = home.path / "machine.json"
    try:
        data = json.loads(path.read_bytes())
        if isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"]:
            return data
    except (OSError, ValueError):
        pass
    host = socket.gethostname() or "machine"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in host)[:40].strip("-.") or "machine"
    data = {"id": f"{safe}-{uuid.uuid4().hex[:8]}", "name": host, "created_at": time.time()}
    home.path.mkdir(parents=True, exist_ok=True)
    write_atomic(path, dump_json(data))
    return data


def origins(home: Home) -> dict[str, str]:
    """{session id: machine id} of the sessions pulled from other machines (the rest were recorded here)."""
    try:
        data = json.loads((home.path / "sync" / "origins.json").read_bytes())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def machine_names(home: Home) -> dict[str, str]:
    """{machine id: name} of this machine and every machine seen on the remote."""
    names = {}
    folder = home.path / "sync" / "machines"
    if folder.is_dir():
        for path in folder.glob("*.json"):
            try:
                data = json.loads(path.read_bytes())
                names[path.stem] = str(data.get("machine", {}).get("name") or path.stem)
            except (OSError, ValueError, AttributeError):
                continue
    if (home.path / "machine.json").exists():
        me = machine(home)
        names[me["id"]] = str(me.get("name") or me["id"])
    return names


# ---------------------------------------------------------------------------------------------- sync


class Sync:
    def __init__(self, home: Home, remote: str | None = None) -> None:
        self.home = home
        self.settings = home.config.sync
        self.remote = remote or self.settings.remote
        self.dir = home.path / "sync"
        self.outbox_path = self.dir / "outbox.git"
        self.me = machine(home)["id"]
        self._outbox: pygit2.Repository | None = None
        self._refs_table: RefTable | None = None
        self._template: tuple[list[str], dict[str, bytes]] | None = None
        self._unwritten: list[tuple[int, bytes]] = []  # objects made for the outbox, written by _write_objects

    # -- plumbing ---------------------------------------------------------------------------------
    @property
    def outbox(self) -> pygit2.Repository:
        if self._outbox is None:
            if not (self.outbox_path / "HEAD").exists():
                self.dir.mkdir(parents=True, exist_ok=True)
                tmp = self.dir / f".outbox-{uuid.uuid4().hex[:8]}"
                repo = pygit2.init_repository(str(tmp), bare=True)
                repo.config["gc.auto"] = "0"
                repo.config["core.logAllRefUpdates"] = "false"
                del repo
                os.rename(tmp, self.outbox_path)
            self._outbox = pygit2.Repository(str(self.outbox_path))
        return self._outbox

    @property
    def refs(self) -> RefTable:
        if self._refs_table is None:
            _ = self.outbox  # made the first time
            self._refs_table = RefTable(self.outbox_path)
        return self._refs_table

    def _refs(self, prefix: str) -> dict[str, str]:
        return self.refs.under(prefix)

    def _set_ref(self, name: str, oid: str) -> None:
        self.refs.set(name, oid)

    def _del_ref(self, name: str) -> None:
        self.refs.delete(name)

    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads((self.dir / "state.json").read_bytes())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_state(self, state: Mapping[str, Any]) -> None:
        write_atomic(self.dir / "state.json", dump_compact_json(state))

    def _last(self, state: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`sync/last.json`: when the last sync ended and with which remote (a few bytes, written by
        every sync; state.json, megabytes at 10,000 sessions, only when a session's entry changed).
        A store synced before last.json existed has them in state.json."""
        try:
            data = json.loads((self.dir / "last.json").read_bytes())
            if isinstance(data, dict):
                return data
        except (OSError, ValueError):
            pass
        state = self._state() if state is None else state
        return {k: state[k] for k in ("last_sync", "remote") if k in state}

    # -- the whole run ----------------------------------------------------------------------------
    def run(self) -> SyncReport:
        if not self.remote:
            raise SyncError("no sync remote: run `opmem sync init REMOTE` first")
        self.dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.dir / ".lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise SyncError(f"another sync of {self.home.path} is running") from None
        try:
            self._clean_staging()
            if self._refs_table is None:
                _ = self.refs  # loaded: what a `git fetch` killed midway left is folded in
            else:
                self.refs.load()
            state = self._state()  # read once: at 10,000 sessions it is the run's largest file
            if self._last(state).get("remote") != self.remote:  # a new remote: nothing of it was seen yet
                for name in list(self._refs(SEEN)):
                    self._del_ref(SEEN + name)
            report = SyncReport()
            remote_refs = gitcli.ls_remote(self.outbox_path, self.remote)
            self.pull(remote_refs, report)
            self.refs.save(durable=self.home.durable)
            self.push(remote_refs, report, state)
            self.refs.save(durable=self.home.durable)
            self._roll_up_packs()
            return report
        finally:
            lock.release()

    def _roll_up_packs(self) -> None:
        """One pack per sync would grow without end (a sync every few minutes for a year); past
        OUTBOX_PACKS_AT_MOST they are rolled up. Refs are not touched (the table keeps them)."""
        try:
            packs = sum(1 for _ in (self.outbox_path / "objects" / "pack").glob("*.pack"))
        except OSError:
            return
        if packs > OUTBOX_PACKS_AT_MOST and gitcli.repack_geometric(self.outbox_path):
            self._outbox = None  # its pack list is stale

    def forget_remote(self) -> None:
        """Start over with the remote as it is now (`opmem sync init`): what was seen of it is
        forgotten; nothing local (sessions, memory, what this machine pushes) is touched."""
        if not (self.outbox_path / "HEAD").exists():
            return
        for name in list(self.refs.under("refs/sync/")):
            self.refs.delete("refs/sync/" + name)
        self.refs.save(durable=self.home.durable)
        state = self._state()
        if state.pop("remote", None) is not None:
            self._save_state(state)
        last = self._last(state)
        if last.pop("remote", None) is not None:
            write_atomic(self.dir / "last.json", dump_json(last))

    def status(self) -> dict[str, Any]:
        """What the last syncs left: no network, nothing written."""
        seen = RefTable(self.outbox_path).under(SEEN) if (self.outbox_path / "HEAD").exists() else {}
        state = self._state()
        sessions = state.get("sessions", {})
        pushed = sum(1 for e in sessions.values() if _shared(e) and not e.get("pulled"))
        pulled = origins(self.home)
        others = self._claims()
        on_remote = {r[len("opmem/sessions/") :].partition("/")[0] for r in seen if r.startswith("opmem/sessions/")}
        deleted = [
            sid
            for sid in sorted(on_remote - set(pulled) - set(others))
            if not (self.home.sessions_dir / sid / "meta.json").exists() and sid not in self._local_ids()
        ]
        return {
            "remote": self.remote,
            "machine": self.me,
            "redact": self.settings.redact,
            "last_sync": self._last(state).get("last_sync"),
            "remote_refs_seen": len(seen),
            "sessions_pushed": pushed,
            "sessions_pulled": len(pulled),
            "sessions_deleted_here_on_remote": len(deleted),  # a sync never deletes (README: Sync)
            "machines": sorted({r.split("/")[-1] for r in seen if r.startswith("opmem/meta/")} - {self.me}),
        }

    def _local_ids(self) -> set[str]:
        try:
            return set(self.home.sessions.locations())
        except OpmemError:
            return set()

    # -- pull -------------------------------------------------------------------------------------
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
                report.memory_records += self._merge_memory(oid)
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

    def _merge_memory(self, oid: str) -> int:
        tree = self.outbox[pygit2.Oid(hex=oid)].peel(pygit2.Tree)
        remote_logs: dict[str, bytes] = {}

        def walk(t: pygit2.Tree, where: str) -> None:
            for entry in t:
                obj = self.outbox[entry.id]
                if isinstance(obj, pygit2.Tree):
                    walk(obj, f"{where}{entry.name}/")
                elif entry.name.endswith(".jsonl"):
                    remote_logs[f"{where}{entry.name}"] = obj.data

        walk(tree, "")
        root = self.home.memory_dir
        added = 0
        root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(root / LOCK_NAME), timeout=120):
            for name, raw in sorted(remote_logs.items()):
                if not _safe_log_name(name):
                    continue
                target = root / name
                local = target.read_bytes() if target.exists() else b""
                new = missing_lines(local, raw)
                if not new:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("ab") as fh:
                    if local and not local.endswith(b"\n"):
                        fh.write(b"\n")  # seal a torn last line, as the memory's own appender does
                    fh.write(b"".join(line + b"\n" for line in new))
                    fh.flush()
                    os.fsync(fh.fileno())
                added += len(new)
        return added

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

    # -- push -------------------------------------------------------------------------------------
    def push(self, remote_refs: Mapping[str, str], report: SyncReport, state: dict[str, Any] | None = None) -> None:
        """Push what is new here; `state` is state.json as `run` read it (read here without it)."""
        if state is None:
            state = self._state()
        fingerprint = [
            self.settings.redact,
            sorted(self.home.config.memory.exclude_projects),
            sorted(self.home.config.memory.exclude_paths),
        ]
        changed = False
        if state.get("fingerprint") != fingerprint or not self.refs.get(META + self.me):
            # a setting that changes what is pushed, or an outbox without our meta ref (its entries'
            # blob ids name nothing): every session is looked at again
            state = {"fingerprint": fingerprint}
            changed = True
        scan = _PushScan(state.setdefault("sessions", {}), origins(self.home), self._claims())
        scan.want = {NS + k: v for k, v in self._refs(NS).items()}
        for name in scan.want:
            if name.startswith(SESSIONS):
                scan.by_session.setdefault(name[len(SESSIONS) :].partition("/")[0], []).append(name)
        cursor = self._scan_local(scan, report, self._last(state).get("journal"), reset=changed)
        for sid in set(scan.state) - scan.present:  # deleted here: its refs stay on the remote
            scan.state.pop(sid)
            scan.dirty = True
        self._unwritten.extend(scan.objects)
        for name, oid in scan.want.items():
            if name.startswith(SESSIONS):
                self._set_ref(name, oid)
        origins_tree = {sid: self.me for sid in scan.own} | {
            sid: m for sid, m in scan.pulled.items() if sid in scan.metas
        }
        if scan.dirty or report.refs_changed or not self.refs.get(META + self.me):
            self._commit_meta(scan.metas, origins_tree, scan.state)
            changed = True  # blob ids noted in the entries
        memory_stamp = [[n, *_file_stamp(self.home.memory_dir / n)] for n in log_names(self.home.memory_dir)]
        memory_key = [memory_stamp, sorted(scan.private)]
        if state.get("memory") != memory_key or not self.refs.get(MEMORY + self.me):
            self._commit_memory(scan.private)
            state["memory"] = memory_key
            changed = True
        self._write_objects()
        self._push_refs(remote_refs, report)
        if changed or scan.dirty or "last_sync" in state:
            state.pop("last_sync", None)  # in last.json now
            state.pop("remote", None)
            self._save_state(state)
        last: dict[str, Any] = {"last_sync": time.time(), "remote": self.remote}
        if cursor is not None:
            last["journal"] = cursor
        write_atomic(self.dir / "last.json", dump_json(last), durable=self.home.durable)

    def _scan_local(self, scan: _PushScan, report: SyncReport, cursor: Any, *, reset: bool) -> dict[str, Any] | None:
        """Every local session into `scan`: those the store's journal names as written since the
        last sync (`cursor`, from last.json) are looked at, the rest are as noted then; every one
        when the journal cannot say. Returns the cursor the next sync starts from."""
        token = _change_token(self.home)  # read before the journal: a write after both moves it again
        given = cursor if _sound_cursor(cursor) and not reset else None
        written, read = self._journal_since(given)
        now = time.time()
        if given is not None and written is not None:
            silent = token != given.get("token") and not written  # a writer keeping no journal (an older opmem)
            if silent or now - float(given.get("full_at") or 0) > FULL_SCAN_EVERY:  # or a hand edit, long unseen
                written = None
        if written is None:
            for sid, path in self._local_sessions():
                self._scan_session(sid, path, scan, report)
        else:
            folders = self._folders(set(scan.state) | written)
            for sid in sorted(folders):
                cached = scan.state.get(sid)
                noted = cached.get("stamp") if cached and sid not in written else None
                self._scan_session(sid, folders[sid], scan, report, noted)
        if read is None:
            return None
        full_at = now if written is None or given is None else float(given.get("full_at") or 0)
        return {"id": read.journal, "offset": read.offset, "token": token, "full_at": full_at}

    def _journal_since(self, cursor: Mapping[str, Any] | None) -> tuple[frozenset[str] | None, JournalRead | None]:
        """The sessions the store's journal names since `cursor` (None: every session is to be
        looked at), and the read whose end the next sync starts from."""
        journal = self.home.sessions.journal
        if cursor is not None:
            read = journal.read(str(cursor.get("id")), int(cursor.get("offset") or 0))
            if read is not None and read.size <= ROTATE_AFTER:
                return read.ids, read
        read = journal.read(None, 0)
        if read is None or read.size > ROTATE_AFTER:
            # missing, torn or long: a new one from now on (a line appended to the old one meanwhile
            # is of files written before the full scan that follows, which sees them)
            journal.rotate()
            read = journal.read(None, 0)
        return None, read

    def _folders(self, ids: Iterable[str]) -> dict[str, str]:
        """{id: folder} of these sessions (those kept in projects where locations.json says)."""
        root = str(self.home.sessions_dir) + os.sep
        try:
            located = {sid: str(where) for sid, where in self.home.sessions.locations().items()}
        except OpmemError:
            located = {}
        return {sid: located.get(sid) or root + sid for sid in ids}

    def _push_refs(self, remote_refs: Mapping[str, str], report: SyncReport) -> None:
        mine = self._refs(NS)
        to_push = sorted(NS + n for n, oid in mine.items() if remote_refs.get(NS + n) != oid)
        if not to_push:
            return
        self.refs.save(durable=self.home.durable)  # git reads what it pushes from the outbox
        specs = [f"{n}:{n}" for n in to_push] if len(to_push) <= 2000 else [f"{NS}*:{NS}*"]
        gitcli.push(self.outbox_path, self.remote, specs)
        if len(to_push) >= PACK_AFTER:
            gitcli.pack_remote_refs(self.remote)
            gitcli.write_commit_graph(self.outbox_path)
            remote_dir = gitcli.local_repository(self.remote)
            if remote_dir is not None:  # ssh, https: their host's own gc writes it
                gitcli.write_commit_graph(remote_dir)
        for n in to_push:
            self._set_ref(SEEN + n[len("refs/") :], mine[n[len(NS) :]])
        report.pushed_refs = len(to_push)
        report.refs_changed = True

    def _claims(self) -> dict[str, str]:
        """{session id: machine} of the sessions other machines say they recorded (as last pulled)."""
        try:
            data = json.loads((self.dir / "claims.json").read_bytes())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _scan_session(
        self, sid: str, where: str, scan: _PushScan, report: SyncReport, stamp: list[int] | None = None
    ) -> None:
        """One local session: what of it is pushed (its redacted branches, its meta), from the
        stamps of its files when nothing changed since the last sync. `stamp`: the one noted then,
        for a session the store's journal says was not written since (no stat)."""
        stamp = stamp or _stamp(where)
        if stamp is None:
            return  # no meta.json (yet): not a session to push
        scan.present.add(sid)
        cached = scan.state.get(sid)
        claimed = scan.claims.get(sid) not in (None, self.me) and sid not in scan.pulled
        if cached and cached.get("stamp") == stamp and bool(cached.get("pulled")) == (sid in scan.pulled):
            if claimed:
                report.conflicts.append(_conflict(sid))
            elif not _shared(cached):
                scan.private.add(sid)
            else:
                scan.metas[sid] = cached.get("meta")  # None once its blob is noted (that is what is used)
                if not cached.get("pulled"):
                    scan.own.add(sid)
            if not claimed:
                return
        scan.dirty = True
        path = Path(where)
        try:
            meta = json.loads((path / "meta.json").read_bytes())
        except (OSError, ValueError):
            return
        if not isinstance(meta, dict) or self._kept_here(meta, sid, path):
            scan.state[sid] = {"stamp": stamp, "meta": None}
            scan.private.add(sid)
            self._drop_session_refs(sid, scan)
            return
        shown = redact_value(meta) if self.settings.redact else meta
        if sid in scan.pulled:
            scan.metas[sid] = shown
            scan.state[sid] = {"stamp": stamp, "meta": shown, "pulled": True}
            return
        if claimed:  # the remote's copy of this id is another machine's: neither side's is replaced
            if not (cached and cached.get("stamp") == stamp):
                report.conflicts.append(_conflict(sid))
            scan.state[sid] = {"stamp": stamp, "meta": None}
            self._drop_session_refs(sid, scan)
            return
        if self._mirror_being_written(sid, cached, scan):
            return
        try:
            tips = self._session_tips(path, scan.objects)
        except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
            report.problems.append(
                f"session {sid}: not pushed, its git mirror cannot be read ({exc}); run `opmem verify`"
            )
            return
        self._drop_session_refs(sid, scan, keep=set(tips))
        for branch, oid in tips.items():
            scan.want[f"{SESSIONS}{sid}/heads/{branch}"] = oid
        scan.metas[sid] = shown
        scan.own.add(sid)
        scan.state[sid] = {"stamp": stamp, "meta": shown}

    def _mirror_being_written(self, sid: str, cached: dict | None, scan: _PushScan) -> bool:
        """A backlog whose git is still being written is pushed as it was last (nothing, if new);
        the mirror's commits name it in the journal again, and the next sync pushes it whole."""
        if self.home.sessions.mirror_pending(sid) is None:
            return False
        if cached:
            scan.metas[sid] = cached.get("meta")
            scan.own.add(sid)
        return True

    def _kept_here(self, meta: dict, sid: str, path: Path) -> bool:
        """A private or `[memory] exclude_*` session never leaves this machine (the one rule of
        backend/privacy/exclusions.py, as the distiller, the index and recall read it)."""
        try:
            return self.home.exclusions().reason(SessionMeta.from_listing(meta, sid, str(path))) is not None
        except (OpmemError, TypeError, ValueError):
            return True  # a meta.json we cannot read as a session's: kept here, not pushed

    def _drop_session_refs(self, sid: str, scan: _PushScan, keep: set[str] | None = None) -> None:
        prefix = f"{SESSIONS}{sid}/heads/"
        for name in scan.by_session.get(sid, ()):
            if name in scan.want and (keep is None or name[len(prefix) :] not in keep):
                scan.want.pop(name)
                self._del_ref(name)

    def _local_sessions(self) -> list[tuple[str, str]]:
        """(id, folder) of every session here: the sessions folder's and those kept in projects."""
        out: dict[str, str] = {}
        root = self.home.sessions_dir
        try:
            with os.scandir(root) as entries:
                for e in entries:
                    if not e.name.startswith(".") and e.is_dir():
                        out[e.name] = e.path
        except FileNotFoundError:
            pass
        try:
            for sid, where in self.home.sessions.locations().items():
                out[sid] = str(where)
        except OpmemError:
            pass
        return sorted(out.items())  # one without meta.json is passed over by _scan_session's stamp

    def _session_tips(self, path: Path, new_objects: list[tuple[int, bytes]]) -> dict[str, str]:
        """The session's branches as pushed (redacted unless [sync] redact = false); the objects
        the outbox lacks are added to `new_objects`."""
        repo = open_session_git(path)
        tips: dict[str, str] = {}
        for name in repo.references:
            if name.startswith("refs/heads/"):
                ref = repo.references[name].resolve()
                tips[name[len("refs/heads/") :]] = str(ref.target)
        if not tips:
            return {}
        made: dict[bytes, tuple[int, bytes]] = {}
        if self.settings.redact:
            rewriter = _HistoryRewriter(repo, Values(), {})
            mapping = rewriter.rewrite(set(tips.values()))
            made = {object_id(k, d): (k, d) for k, d in rewriter.new_objects}
            tips = {b: mapping.get(o, o) for b, o in tips.items()}
        odb = repo.odb
        outbox_odb = self.outbox.odb
        stack = list(tips.values())
        seen: set[str] = set()
        kinds = {
            pygit2.enums.ObjectType.COMMIT: COMMIT,
            pygit2.enums.ObjectType.TREE: TREE,
            pygit2.enums.ObjectType.BLOB: BLOB,
        }
        while stack:
            oid = stack.pop()
            if oid in seen:
                continue
            seen.add(oid)
            raw_id = bytes.fromhex(oid)
            if raw_id in made:
                kind, data = made[raw_id]
            else:
                if pygit2.Oid(hex=oid) in outbox_odb:
                    continue
                otype, data = odb.read(pygit2.Oid(hex=oid))
                kind = kinds[otype]
            new_objects.append((kind, data))
            if kind == COMMIT:
                header = data.partition(b"\n\n")[0]
                for line in header.split(b"\n"):
                    if line.startswith((b"tree ", b"parent ")):
                        stack.append(line.split(b" ", 1)[1].decode())
            elif kind == TREE:
                for mode, _name, child in parse_tree(data):
                    if mode == MODE_TREE or mode.startswith(b"100"):
                        stack.append(child.hex())
        return tips

    def _commit_tree(self, ref: str, files: Mapping[str, bytes | Known | Subtree]) -> None:
        """Commit `files` (path -> bytes, a Known blob the outbox holds, or a Subtree) on `ref` of
        the outbox, unless its tree is already that."""
        objects: list[tuple[int, bytes]] = []

        def build(entries: Mapping[str, bytes | Known | Subtree]) -> bytes:
            subdirs: dict[str, dict[str, bytes | Known | Subtree]] = {}
            blobs: dict[str, bytes | Known] = {}
            items: list[tuple[bytes, bytes, bytes]] = []
            for name, data in entries.items():
                if isinstance(data, Subtree):
                    objects.extend((BLOB, blob) for blob in data.blobs)
                    objects.append((TREE, data.raw))
                    items.append((MODE_TREE, name.encode(), object_id(TREE, data.raw)))
                    continue
                head, sep, rest = name.partition("/")
                if sep:
                    subdirs.setdefault(head, {})[rest] = data
                else:
                    blobs[name] = data
            for name, data in blobs.items():
                if isinstance(data, Known):
                    items.append((MODE_BLOB, name.encode(), data.oid))
                    continue
                objects.append((BLOB, data))
                items.append((MODE_BLOB, name.encode(), object_id(BLOB, data)))
            for name, sub in subdirs.items():
                items.append((MODE_TREE, name.encode(), build(sub)))
            items.sort(key=lambda it: it[1] + (b"/" if it[0] == MODE_TREE else b""))
            raw = b"".join(mode + b" " + name + b"\0" + oid for mode, name, oid in items)
            objects.append((TREE, raw))
            return object_id(TREE, raw)

        tree = build(files).hex()
        current = self.refs.get(ref)
        parent = current or self.refs.get(SEEN + ref[len("refs/") :])
        if parent is not None and str(self.outbox[pygit2.Oid(hex=parent)].tree_id) == tree:
            if current is None:
                self._set_ref(ref, parent)
            return
        now = int(time.time())
        who = f"{SIGNATURE[0]} <{SIGNATURE[1]}> {now} +0000"
        body = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "") + f"author {who}\ncommitter {who}\n\n"
        body += f"opmem sync from {self.me}\n"
        objects.append((COMMIT, body.encode()))
        self._unwritten.extend((k, d) for k, d in objects if pygit2.Oid(raw=object_id(k, d)) not in self.outbox.odb)
        self._set_ref(ref, object_id(COMMIT, body.encode()).hex())

    def _write_objects(self) -> None:
        """The objects this push made (sessions' redacted history, the meta and memory commits) as
        one pack, before any ref naming them is saved: one pack and one fsync per sync, not three."""
        objects = list({object_id(k, d): (k, d) for k, d in self._unwritten}.values())
        self._unwritten = []
        if objects:
            write_pack(self.outbox_path / "objects" / "pack", objects)
            self._outbox = None

    def _commit_meta(
        self, metas: Mapping[str, Any], origins_tree: Mapping[str, str], state: Mapping[str, dict[str, Any]]
    ) -> None:
        """The meta ref's tree: a session whose meta is unchanged since the last sync keeps the blob
        id noted then (10,000 sessions are not serialised and hashed again for one new turn)."""
        me = machine(self.home)
        projects: Any = {}
        try:
            projects = json.loads((self.home.projects_dir / "projects.json").read_bytes())
        except (OSError, ValueError):
            projects = {}
        files: dict[str, bytes | Known | Subtree] = {
            "machine.json": dump_json(me),
            "projects.json": dump_json(redact_value(projects) if self.settings.redact else projects),
            "origins.json": _flat_json(dict(sorted(origins_tree.items()))),
        }
        trust = self.refs.get(META + self.me) is not None
        items: list[tuple[bytes, bytes]] = []  # (file name, raw blob id) of sessions/
        new: list[bytes] = []
        for sid, meta in metas.items():
            entry = state.get(sid)
            blob = entry.get("blob") if entry is not None and trust else None
            if blob:
                items.append((f"{sid}.json".encode(), bytes.fromhex(blob)))
                entry.pop("meta", None)  # the blob is what is used: state.json stays small
            else:
                data = dump_json(meta)
                new.append(data)
                oid = object_id(BLOB, data)
                items.append((f"{sid}.json".encode(), oid))
                if entry is not None:
                    entry["blob"] = oid.hex()
                    entry.pop("meta", None)
        if items:  # one folder of blobs: git's order is the names' bytes
            items.sort()
            raw = b"".join(b"100644 " + name + b"\0" + oid for name, oid in items)
            files["sessions"] = Subtree(raw, tuple(new))
        self._commit_tree(META + self.me, files)

    def _commit_memory(self, private: set[str]) -> None:
        root = self.home.memory_dir
        files: dict[str, bytes] = {}
        for name in log_names(root):
            raw = (root / name).read_bytes()
            lines = []
            for line, data in parse_lines(raw):
                if session_of(data) in private:
                    continue
                if self.settings.redact:
                    shown = redact_value(data)
                    line = (
                        line if shown is data else json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode()
                    )
                lines.append(line + b"\n")
            files[name] = b"".join(lines)
        self._commit_tree(MEMORY + self.me, files)

    def _clean_staging(self) -> None:
        root = self.home.sessions_dir
        if root.is_dir():
            for stale in root.glob(".*.syncing-*"):
                shutil.rmtree(stale, ignore_errors=True)
        for stale in [*self.dir.glob(".outbox-*"), *self.dir.glob(".template-*")]:
            shutil.rmtree(stale, ignore_errors=True)


def _safe_log_name(name: str) -> bool:
    parts = name.split("/")
    return all(p and p not in (".", "..") for p in parts) and parts[0] in ("timeline", "graph") and len(parts) == 2


def _shared(entry: Mapping[str, Any]) -> bool:
    """A state entry of a session that is pushed (its meta, or once committed its blob id), not kept here."""
    return entry.get("meta") is not None or bool(entry.get("blob"))


def _flat_json(data: Mapping[str, str]) -> bytes:
    """dump_json of a flat {text: text} object, byte for byte, without json's pure-Python indenter
    (origins.json has an entry per session)."""
    if not data:
        return b"{}"
    enc = json.encoder.encode_basestring  # what ensure_ascii=False uses
    return ("{\n" + ",\n".join(f" {enc(k)}: {enc(v)}" for k, v in data.items()) + "\n}").encode()


def _conflict(sid: str) -> str:
    return f"session {sid} was recorded here and on another machine; this copy is not pushed and theirs not taken"


def _sound_cursor(cursor: Any) -> bool:
    """A journal cursor as this code writes it in last.json (anything else: a full scan)."""
    return (
        isinstance(cursor, dict)
        and isinstance(cursor.get("id"), str)
        and isinstance(cursor.get("offset"), int)
        and isinstance(cursor.get("full_at"), (int, float))
    )


def _change_token(home: Home) -> str:
    try:
        return home.sessions.changed_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _file_stamp(path: Path) -> list[int]:
    try:
        st = os.stat(path)
        return [st.st_mtime_ns, st.st_size, st.st_ino]
    except OSError:
        return [0, 0, 0]


_STAMPED = ("meta.json", ".git/refs/heads", ".git/packed-refs", ".git/HEAD")


def _stamp(where: str) -> list[int] | None:
    """(mtime, size, inode) of the files a push reads of a session; None without its meta.json.

    Run on every session of every sync: plain string paths (no Path objects), one stat each."""
    out: list[int] = []
    folder = where + os.sep
    for sub in _STAMPED:
        try:
            st = os.stat(folder + sub)
            out += [st.st_mtime_ns, st.st_size, st.st_ino]
        except OSError:
            if sub == "meta.json":
                return None
            out += [0, 0, 0]
    return out
