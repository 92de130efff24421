"""The push half of a sync: every local session looked at (only those the store's journal names,
between full scans), its branches redacted into the outbox, the meta and memory commits, the push."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from ..memory.logs import log_names
from ..model import OpmemError, SessionMeta
from ..privacy import redact_value
from ..privacy.history_rewrite import HistoryRewriter
from ..privacy.scrub import Values
from ..store.change_journal import ROTATE_AFTER, JournalRead
from ..store.files import dump_json, write_atomic
from ..store.git_mirror import open_session_git
from ..store.packwriter import BLOB, COMMIT, MODE_TREE, TREE, object_id, parse_tree
from . import gitcli

if TYPE_CHECKING:
    from ..home import Home
from .memory_merge import memory_files
from .outbox import MEMORY, META, NS, PACK_AFTER, SEEN, SESSIONS, Known, Outbox, Subtree, SyncReport, machine, origins

FULL_SCAN_EVERY = 24 * 3600.0  # seconds; between these, only the sessions the store's journal names are looked at


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


class Pusher(Outbox):
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
            elif not pushed_entry(cached):
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
            rewriter = HistoryRewriter(repo, Values(), {})
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
        self._commit_tree(MEMORY + self.me, memory_files(self.home.memory_dir, private, redact=self.settings.redact))


def pushed_entry(entry: Mapping[str, Any]) -> bool:
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
