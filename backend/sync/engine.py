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

from typing import Any

from filelock import FileLock, Timeout

from ..model import OpmemError
from ..store.files import dump_json, write_atomic
from . import gitcli
from .gitcli import SyncError
from .outbox import SEEN, SyncReport, machine, machine_names, origins
from .pull import Puller, SyncRefused
from .push import Pusher, pushed_entry
from .refs import RefTable

__all__ = ["Sync", "SyncRefused", "SyncReport", "machine", "machine_names", "origins"]


class Sync(Puller, Pusher):
    """One sync of the store with its remote: `run` pulls, then pushes (pull.py, push.py)."""

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
        pushed = sum(1 for e in sessions.values() if pushed_entry(e) and not e.get("pulled"))
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
