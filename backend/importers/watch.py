"""Keep importing while agents write: parse only the complete lines appended to each file.

Each watched file has a Follower holding its importer's stateful line parser and the byte offset
read so far (also saved in ``<home>/import-state.json``). A change reads from the offset to the
last newline, feeds those lines, and ingests what the parser emits; a model reply still being
streamed is held back until the file has been quiet for `idle_seconds`. Unchanged files are
never read. After a restart, a file that changed is read once from the start to rebuild the
parser's state (ingest skips the nodes already stored). Importers without a line parser are
re-parsed whole on each change, which is still idempotent; a change inside a session folder
(OpenProgram) re-reads the folder that holds it.

Given a Home, sessions are bound to their projects and linked to project commits as they are
written (projects/binding.py), and live turns of bound sessions are auto-committed when they end
(projects/autocommit.py; `[projects] autocommit` in config.toml, default on).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..model import OpmemError
from ..projects.autocommit import AutoCommitEvent, LiveTurnCommitter
from ..projects.binding import ProjectBinder
from ..store.mirror_backlog import MirrorWriter
from . import SOURCES, base, get_importer, import_file
from .base import ImportedSession, Importer, ImportReport, SessionParser
from .hooks import IngestHooks
from .ingest import ProjectHook, ingest
from .state import STATE_FILE, FileState, ImportState

if TYPE_CHECKING:
    from ..home import Home

Batch = Callable[["Path | None", ImportReport], Any]


class StopFlag(Protocol):
    """What stops a watch: a threading.Event, or the CLI's signal-set flag (cli_signals.py)."""

    def is_set(self) -> bool: ...


CommitHook = Callable[[AutoCommitEvent], Any]


def autocommit_enabled(home: Home) -> bool:
    """`[projects] autocommit` from the home's config.toml (default true)."""
    return home.config.projects.autocommit


def default_sources() -> list[str]:
    """Sources whose own session folder exists (not ones that read the current folder, nor exports)."""
    here = Path.cwd().resolve()
    names: list[str] = []
    for name in SOURCES:
        if not SOURCES[name].live:  # a data export is read once, not followed
            continue
        roots = [Path(p) for p in SOURCES[name].default_paths()]
        if any(r.exists() for r in roots) and all(r.resolve() != here for r in roots):
            names.append(name)
    return names


@dataclass(slots=True)
class Follower:
    path: Path
    source: str
    importer: Importer
    parser: SessionParser | None = None
    offset: int = 0
    lines: int = 0
    last_change: float = 0.0
    idle_flushed: bool = True
    sessions: set[str] = field(default_factory=set)
    log: ImportReport = field(default_factory=ImportReport)  # what the parser reported so far
    forwarded: int = 0
    unknown_seen: dict[str, int] = field(default_factory=dict)

    def forward(self, report: ImportReport) -> None:
        """Copy the parser's new warnings and unknown-record counts into this poll's report."""
        report.warnings.extend(self.log.warnings[self.forwarded :])
        self.forwarded = len(self.log.warnings)
        for kind, count in self.log.unknown_records.items():
            new = count - self.unknown_seen.get(kind, 0)
            if new:
                report.unknown_records[kind] = report.unknown_records.get(kind, 0) + new
        self.unknown_seen = dict(self.log.unknown_records)


class Watcher:
    """Follows the session files of some sources; `run()` blocks until `stop` is set."""

    def __init__(
        self,
        home: Home,
        sources: Iterable[str] | None = None,
        paths: Iterable[Path | str] | None = None,
        *,
        on_project: ProjectHook | None = None,
        on_batch: Batch | None = None,
        idle_seconds: float = 0.5,
        bind: bool = True,
        autocommit: bool | None = None,
        on_commit: CommitHook | None = None,
        hooks: IngestHooks | None = None,
        mirrors: MirrorWriter | None = None,
    ) -> None:
        """bind: bind sessions to the project of their cwd (unless `on_project` is given).
        autocommit: commit live turns of bound sessions (None: from config.toml).
        on_commit: told about each auto-commit and each auto-commit warning.
        hooks: after_ingest after each batch (catch-up, a change, an idle flush), on_idle from run().
        mirrors: the catch-up (a backlog) defers its git mirrors to this writer, which run() runs in
        the background (with what an interrupted run left); live turns are committed as they end.
        """
        self.store = home.sessions
        self.redact = home.config.privacy.redact_on_import  # [privacy]: store new sessions redacted
        self.state = ImportState(home.path / STATE_FILE)
        chosen = [get_importer(s) for s in sources] if sources else [SOURCES[name] for name in default_sources()]
        self.importers: dict[str, Importer] = {importer.name: importer for importer in chosen}
        given = [Path(p).expanduser() for p in paths] if paths else None
        self.given = given is not None  # paths given: sessions are also found by their shape (Importer.find)
        self.roots: dict[str, list[Path]] = {
            name: (given if given is not None else [Path(p) for p in imp.default_paths()])
            for name, imp in self.importers.items()
        }
        self.binder = ProjectBinder.for_home(home)
        self.on_project = on_project if on_project is not None or not bind else self.binder
        if autocommit is None:
            autocommit = autocommit_enabled(home)
        self.committer = LiveTurnCommitter(home.sessions, home.projects, on_event=on_commit) if autocommit else None
        self.sources_of: dict[str, Path] = {}  # session -> the file (or folder) it was last read from
        self.changed_at: dict[Path, float] = {}  # whole-file sources: when they last changed
        self.settled: set[Path] = set()  # whole-file sources read again once quiet (see tick)
        self.read_at: dict[Path, float] = {}  # whole-file sources: when they were last read
        self.due: set[Path] = set()  # changed, waiting for their re-read interval (see tick)
        self.on_batch = on_batch
        self.hooks = hooks if hooks is not None else IngestHooks()
        self.last_idle_hook = float("-inf")
        self.idle_seconds = idle_seconds
        self.followers: dict[Path, Follower] = {}
        self.known: dict[Path, str] = {}  # discovered file -> source
        self.ignored: set[Path] = set()  # changed paths that are no session file of ours
        self.lock = threading.Lock()
        self.mirrors = mirrors

    # -- discovery ---------------------------------------------------------------------------

    def discover(self) -> None:
        for name, importer in self.importers.items():
            roots = [r for r in self.roots[name] if r.exists()]
            if not roots:
                continue
            for path in importer.find(roots) if self.given else importer.discover(roots):
                self.known.setdefault(Path(path).resolve(), name)

    def owner(self, path: Path) -> Path | None:
        """The discovered session file, or the session folder holding `path` (OpenProgram)."""
        if path in self.known:
            return path
        for importer in self.importers.values():
            store = importer.companion(path)  # a database's -wal stands for the database
            if store is not None and store in self.known:
                return store
        for parent in path.parents:
            if parent in self.known:
                return parent
        return None

    def watch_roots(self) -> list[Path]:
        """Existing folders to watch (a file root is watched through its folder)."""
        out: dict[Path, None] = {}
        for roots in self.roots.values():
            for root in roots:
                if root.is_dir():
                    out[root.resolve()] = None
                elif root.is_file():
                    out[root.parent.resolve()] = None
        return list(out)

    # -- work --------------------------------------------------------------------------------

    def catch_up(self, stop: StopFlag | None = None) -> ImportReport:
        """Import every file that changed since its last import (the start of a watch).

        Whole-file parses: followers (and their parser state) are only made for files that
        change while we watch. A `stop` set meanwhile ends it after the file being imported;
        what was imported is saved and linked as usual.
        """
        self.discover()
        report = ImportReport()
        if self.state.problem:
            report.warn(str(self.state.path), None, self.state.problem)
            self.state.problem = ""  # said once, at the start
        on_session = self.binder.session_written
        for path, name in list(self.known.items()):
            if stop is not None and stop.is_set():
                break
            import_file(
                self.store,
                self.importers[name],
                path,
                report,
                self.state,
                on_project=self.on_project,
                on_session=on_session,
                redact=self.redact,
                defer_mirror=self.mirrors is not None,
            )
            if self.mirrors is not None:
                self.mirrors.add(sorted(report.mirror_pending))  # file by file: written meanwhile
        self.state.save()
        self.binder.link_pending(report)
        self.hooks.ingested(report.touched, report)
        return report

    def changed_since_catch_up(self) -> list[Path]:
        """Session files that changed (or appeared) after catch_up read them, before the watch was live."""
        self.discover()
        changed: list[Path] = []
        for path in self.known:
            if path in self.followers:
                continue
            try:
                stat = self.importers[self.known[path]].file_stat(path)
            except OSError:
                continue
            if not self.state.unchanged(path, stat):
                changed.append(path)
        return changed

    def poll(self, path: Path, report: ImportReport | None = None) -> ImportReport:
        """`path` changed: import its new complete lines (or the whole file, for whole-file formats)."""
        report = report if report is not None else ImportReport()
        before = set(report.touched)
        path = Path(path).resolve()
        with self.lock:
            owner = self.owner(path)
            if owner is None:
                if path in self.ignored:
                    return report
                self.discover()  # a new file (or session folder) appeared: is it one of ours?
                owner = self.owner(path)
                if owner is None:
                    self.ignored.add(path)
                    return report
            path = owner
            name = self.known[path]
            importer = self.importers[name]
            if not path.exists():
                self.followers.pop(path, None)
                return report
            if not importer.follows_lines(path):
                now = time.monotonic()
                self.changed_at[path] = now
                self.settled.discard(path)
                interval = importer.reread_interval(path)
                if interval and now - self.read_at.get(path, float("-inf")) < interval:
                    self.due.add(path)  # read again at most every `interval` s (tick reads it when due)
                else:
                    self._read_whole(path, importer, report, now)
            else:
                follower = self.followers.get(path)
                if follower is None:
                    follower = self.followers[path] = Follower(path, name, importer)
                self._read_appended(follower, report)
        self.hooks.ingested(report.touched - before, report)
        self._notify(path, report)
        return report

    def tick(self, now: float | None = None) -> ImportReport:
        """Flush model replies of files that have been quiet for `idle_seconds`."""
        now = time.monotonic() if now is None else now
        report = ImportReport()
        with self.lock:
            for follower in self.followers.values():
                if follower.parser is None or follower.idle_flushed:
                    continue
                if now - follower.last_change < self.idle_seconds:
                    continue
                follower.idle_flushed = True
                before = report.nodes
                self._ingest(follower, follower.parser.take(final=False, idle=True), report)
                follower.forward(report)
                if report.nodes != before:
                    self._record(follower)
                    self._notify(follower.path, report)
            self._read_due(now, report)
            self._reread_quiet(now, report)
            self._settle(now)
        problems = ImportReport()
        self.hooks.ingested(report.touched, problems)
        self._notify(None, problems)
        report.warnings.extend(problems.warnings)
        return report

    def _read_whole(self, path: Path, importer: Importer, report: ImportReport, now: float) -> None:
        self.read_at[path] = now
        self.due.discard(path)
        import_file(
            self.store,
            importer,
            path,
            report,
            self.state,
            on_project=self.on_project,
            force=True,
            on_session=lambda sid: self._written(sid, path),
            redact=self.redact,
        )

    def _read_due(self, now: float, report: ImportReport) -> None:
        """Whole-file sources whose changes waited for their re-read interval (a big state.vscdb)."""
        for path in sorted(self.due):
            importer = self.importers.get(self.known.get(path, ""))
            if importer is None:
                self.due.discard(path)
            elif now - self.read_at.get(path, float("-inf")) >= importer.reread_interval(path):
                before = report.nodes
                self._read_whole(path, importer, report, now)
                self.state.save()
                if report.nodes != before:
                    self._notify(path, report)

    def _reread_quiet(self, now: float, report: ImportReport) -> None:
        """A whole-file source (a database) quiet for LIVE_SECONDS is read once more: what its
        reads held back as still being written (a reply the agent never finished) is final now."""
        for path, changed in list(self.changed_at.items()):
            if path in self.settled or now - changed <= base.LIVE_SECONDS or path not in self.known:
                continue
            self.settled.add(path)
            importer = self.importers[self.known[path]]
            before = report.nodes
            import_file(
                self.store,
                importer,
                path,
                report,
                self.state,
                on_project=self.on_project,
                force=True,
                on_session=lambda sid, p=path: self._written(sid, p),
            )
            self.state.save()
            if report.nodes != before:
                self._notify(path, report)

    def idle(self, now: float | None = None) -> ImportReport:
        """The on_idle hooks, at most every `hooks.idle_every` seconds (run() calls this)."""
        now = time.monotonic() if now is None else now
        report = ImportReport()
        if self.hooks.on_idle and now - self.last_idle_hook >= self.hooks.idle_every:
            self.last_idle_hook = now
            self.hooks.idle(report)
            self._notify(None, report)
        return report

    def busy(self, path: Path | None, now: float | None = None) -> bool:
        """Whether `path` changed within `idle_seconds` or its parser still holds something back."""
        if path is None:
            return False
        now = time.monotonic() if now is None else now
        follower = self.followers.get(path)
        if follower is not None and follower.parser is not None:
            return now - follower.last_change < self.idle_seconds or follower.parser.holding()
        return now - self.changed_at.get(path, float("-inf")) < self.idle_seconds

    def _settle(self, now: float) -> None:
        """Quiet sessions: auto-commit the live turns that ended, link what was written."""
        if self.committer is not None:
            self.committer.settle(lambda path: self.busy(path, now))
        if self.binder.written:
            problems = ImportReport()
            self.binder.link_pending(problems, ready=lambda sid: not self.busy(self.sources_of.get(sid), now))
            self._notify(None, problems)

    def _read_appended(self, follower: Follower, report: ImportReport) -> None:
        try:
            stat = follower.path.stat()
        except OSError as exc:
            report.warn(follower.path, None, f"cannot read: {exc.strerror or exc}")
            return
        if follower.parser is None or stat.st_size < follower.offset:
            # First sight in this process, or the file was truncated/replaced: start over.
            follower.log = ImportReport()
            follower.forwarded, follower.unknown_seen = 0, {}
            follower.parser = follower.importer.open_parser(follower.path, follower.log)
            follower.offset = follower.lines = 0
        try:
            with open(follower.path, "rb") as handle:
                handle.seek(follower.offset)
                data = handle.read()
        except OSError as exc:
            report.warn(follower.path, None, f"cannot read: {exc.strerror or exc}")
            return
        end = data.rfind(b"\n") + 1  # only complete lines; a torn last line waits
        if end:
            for line in data[:end].splitlines(keepends=True):
                follower.lines += 1
                follower.parser.feed_line(line, follower.lines)
            follower.offset += end
            follower.last_change = time.monotonic()
            follower.idle_flushed = False
        self._ingest(follower, follower.parser.take(final=False), report)
        follower.forward(report)
        self._record(follower, stat)

    def _record(self, follower: Follower, stat: os.stat_result | None = None) -> None:
        try:
            stat = stat if stat is not None else follower.path.stat()
        except OSError:
            return
        whole = follower.offset == stat.st_size
        self.state.record(
            follower.path,
            FileState(
                source=follower.source,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                offset=follower.offset,
                lines=follower.lines,
                # Something held back (a reply or tool still running) is completed by a later pass.
                complete=whole and not (follower.parser is not None and follower.parser.holding()),
            ),
        )
        self.state.save()

    def _ingest(self, follower: Follower, sessions: list[ImportedSession], report: ImportReport) -> None:
        for imported in sessions:
            try:
                before = report.nodes
                sid = ingest(self.store, imported, report, on_project=self.on_project, redact=self.redact)
                follower.sessions.add(sid)
            except OpmemError as exc:
                report.warn(follower.path, None, str(exc))
                continue
            if report.nodes != before:
                self._written(sid, follower.path)

    def _written(self, session_id: str, source: Path) -> None:
        """New nodes in a session: it may start or grow a live turn, and needs linking."""
        self.sources_of[session_id] = source
        self.binder.session_written(session_id)
        if self.committer is not None:
            self.committer.observe(session_id, source)

    def _notify(self, path: Path | None, report: ImportReport) -> None:
        if self.on_batch is not None and (report.nodes or report.warnings or report.new_sessions):
            self.on_batch(path, report)

    # -- loop --------------------------------------------------------------------------------

    def run(self, stop: StopFlag | None = None, *, ready: Callable[[], Any] | None = None) -> None:
        """Catch up, then follow changes until `stop` is set (or Ctrl-C).

        `stop` is looked at between two steps (files of the catch-up, changed files of a batch)
        and by watchfiles every 50 ms while it waits: a step under way always finishes.
        """
        roots = self.watch_roots()
        if not roots:
            raise OpmemError("nothing to watch: none of the session folders exists")
        stop = stop if stop is not None else threading.Event()
        if self.mirrors is None:
            self._run(roots, stop, ready)
            return
        self.mirrors.adopt()
        self.mirrors.start()
        try:
            self._run(roots, stop, ready)
        finally:
            self.mirrors.stop()  # after the session under way; the rest waits for the next start

    def _run(self, roots: list[Path], stop: StopFlag, ready: Callable[[], Any] | None) -> None:
        import watchfiles

        first = self.catch_up(stop)
        self._notify(None, first)
        if stop.is_set():
            return
        tick_ms = max(50, int(self.idle_seconds * 500))
        watcher = watchfiles.watch(
            *roots,
            stop_event=stop,
            debounce=400,
            step=50,
            rust_timeout=tick_ms,
            yield_on_timeout=True,
            recursive=True,
            raise_interrupt=False,
            watch_filter=None,
        )
        live = False
        with closing(watcher):
            for changes in watcher:
                if stop.is_set():
                    return
                targets: dict[Path, None] = {}
                if not live:  # the first yield (a timeout at the latest): the watch is live
                    live = True
                    targets.update(dict.fromkeys(self.changed_since_catch_up()))
                    if ready is not None:
                        ready()
                self._follow(changes, targets, stop)

    def _follow(self, changes: set[tuple[Any, str]], targets: dict[Path, None], stop: StopFlag) -> None:
        """One batch of the watch: read what changed, then the idle flush and the idle hooks."""
        for raw in sorted({raw for _, raw in changes}):
            path = Path(raw)
            if path.is_file() or path.resolve() in self.known:
                # a node file in a session folder stands for its folder: one re-read per batch
                targets.setdefault(self.owner(path.resolve()) or path, None)
        for path in targets:
            if stop.is_set():
                return
            self.poll(path)
        self.tick()
        self.idle()
