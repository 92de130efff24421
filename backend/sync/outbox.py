"""The local bare repository every sync goes through (`<home>/sync/outbox.git`): its ref names,
its ref table, the sync's state files, and the commits a push builds in it (engine.py documents
the layout)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pygit2

from ..store.files import dump_compact_json, dump_json, write_atomic
from ..store.packwriter import BLOB, COMMIT, MODE_TREE, TREE, object_id, write_pack
from . import gitcli
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
OUTBOX_PACKS_AT_MOST = 50  # git's own gc.autoPackLimit; the outbox has gc.auto=0, so a sync rolls them up
PACK_AFTER = 100  # a push (fetch) of this many refs or more packs a local remote's refs, writes commit-graphs


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
    """{machine id: name} of this machine and every machine seen on the remote; machines that
    share a hostname (two VMs called `vm`) are told apart by their ids."""
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
    shared = Counter(names.values())
    return {mid: mid if shared[name] > 1 else name for mid, name in names.items()}


class Outbox:
    """The outbox and the files beside it in `<home>/sync/`, shared by the pull and the push."""

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

    def _claims(self) -> dict[str, str]:
        """{session id: machine} of the sessions other machines say they recorded (as last pulled)."""
        try:
            data = json.loads((self.dir / "claims.json").read_bytes())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

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

    def _roll_up_packs(self) -> None:
        """One pack per sync would grow without end (a sync every few minutes for a year); past
        OUTBOX_PACKS_AT_MOST they are rolled up. Refs are not touched (the table keeps them)."""
        try:
            packs = sum(1 for _ in (self.outbox_path / "objects" / "pack").glob("*.pack"))
        except OSError:
            return
        if packs > OUTBOX_PACKS_AT_MOST and gitcli.repack_geometric(self.outbox_path):
            self._outbox = None  # its pack list is stale

    def _clean_staging(self) -> None:
        root = self.home.sessions_dir
        if root.is_dir():
            for stale in root.glob(".*.syncing-*"):
                shutil.rmtree(stale, ignore_errors=True)
        for stale in [*self.dir.glob(".outbox-*"), *self.dir.glob(".template-*")]:
            shutil.rmtree(stale, ignore_errors=True)
