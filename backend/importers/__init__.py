"""Importers of other agents' sessions, and `run_import`, used by the CLI and the TUI palette.

SOURCES (registry.py, derived from the Importer subclasses) maps each source name to its
Importer (base.py): what the agent is, where it keeps its sessions, what a session looks like,
and how to read one whole or follow it line by line (`opmem watch`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import OpmemError
from ..projects.binding import ProjectBinder
from ..store.node_log import SyncWorker
from ..store.sessions import SessionStore
from . import parse_ahead
from .base import Importer, ImportReport
from .hooks import IngestHooks
from .ingest import ProjectHook, ingest
from .parse_ahead import ParseAhead, ParserBug
from .registry import ALIASES, SOURCES
from .state import STATE_FILE, FileState, ImportState

if TYPE_CHECKING:
    from ..home import Home
    from ..store.mirror_backlog import MirrorWriter

Progress = Callable[[int, int, str], Any]
Cancel = Callable[[], bool]
SessionHook = Callable[[str], Any]


def get_importer(source: str) -> Importer:
    name = ALIASES.get(source, source)
    if name not in SOURCES:
        raise OpmemError(f"unknown import source {source!r} (available: {', '.join(SOURCES)})")
    return SOURCES[name]


def source_name(source: str) -> str:
    """The registry name ("claude") for a name or alias ("claude-code")."""
    return get_importer(source).name


def _nowhere_to_look(importer: Importer) -> str:
    """Why an import with no path found nothing to read, and how to go on."""
    if any(where.startswith("<project>") for where in importer.locations):  # kept in the project (Crush)
        return (
            f"found no {importer.looks_for} (looked in {Path.cwd()} and the folders above it):"
            f" run `opmem import {importer.name}` in the project's folder, or give the database's path"
        )
    return f"{importer.name} sessions have no default folder: give a file or folder to import"


def run_import(
    home: Home,
    source: str,
    paths: Iterable[Path | str] | None = None,
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    on_project: ProjectHook | None = None,
    force: bool = False,
    bind: bool = True,
    hooks: IngestHooks | None = None,
    defer_mirror: bool = False,
    exact: bool = False,
    mirrors: MirrorWriter | None = None,
) -> ImportReport:
    """Import every session file of `source` under `paths` (default: where the agent keeps them).

    Under given paths its sessions are found where the agent's layout puts them and by their
    shape at any depth (`Importer.find`); exact=True: `paths` are the sessions themselves
    (`detect_sources` found them).

    Files unchanged since their last complete import are skipped (counted in report.skipped);
    force=True parses them again (still idempotent). A file that fails is a warning, never fatal.
    A session whose cwd lies in a git repository is bound to that project (unless bind=False or
    `on_project` replaces the binder), and the commits of each bound session's
    project are linked to its turns (projects/binding.py). `hooks.after_ingest` runs after each file with
    the sessions it wrote to; report.touched holds them all.

    defer_mirror (a backlog): sessions are written and indexed without their turn commits, which
    `store.mirror_backlog.MirrorWriter` writes afterwards (report.mirror_pending: the sessions).
    `mirrors` (with defer_mirror): each file's sessions are added to it once their node files
    are durable, so a writer with worker processes mirrors them while the next files are written;
    what it finished is handed on (`poll`) file by file.
    """
    importer = get_importer(source)
    binder = ProjectBinder.for_home(home)
    if bind and on_project is None:
        on_project = binder
    store = home.sessions
    state = ImportState(home.path / STATE_FILE)
    report = ImportReport()
    if state.problem:
        report.warn(state.path, None, state.problem)
    given = list(paths) if paths else []
    missing = [str(p) for p in given if not Path(p).expanduser().exists()]
    if missing:
        raise OpmemError(f"no such file or folder: {', '.join(missing)}")
    roots = given if given else importer.default_paths()
    if not roots:
        raise OpmemError(_nowhere_to_look(importer))
    if exact:
        files = importer.ordered([Path(p) for p in given])
    else:
        files = importer.find(given) if given else importer.discover(roots)
    if not files:
        where = ", ".join(str(p) for p in roots)
        if any(Path(p).expanduser().exists() for p in roots):
            report.warn(where, None, f"nothing to import: no {importer.looks_for} found")
        else:
            report.warn(where, None, f"not found: nothing to import (looked for {importer.looks_for})")
    total = len(files)
    syncs = SyncWorker()
    ahead = ParseAhead(importer) if defer_mirror and parse_ahead.usable(importer, total) else None
    try:
        for done, path in enumerate(files):
            if cancel is not None and cancel():
                break
            if progress is not None:
                progress(done, total, str(path))
            if ahead is not None:
                _send_ahead(ahead, importer, files[done : done + 1 + parse_ahead.AHEAD], state, force)
            before = set(report.touched)
            warned = len(report.warnings)
            import_file(
                store,
                importer,
                Path(path),
                report,
                state,
                on_project=on_project,
                force=force,
                on_session=binder.session_written,
                redact=home.config.privacy.redact_on_import,
                defer_mirror=defer_mirror,
                syncs=syncs,
                ahead=ahead,
            )
            _quiet_repeats(importer, Path(path), report, state, warned)
            binder.link_pending(report)  # file by file: a cancelled import keeps its links
            _written(report, report.touched - before, hooks, mirrors if defer_mirror else None, syncs)
        else:
            if progress is not None:
                progress(total, total, "")
    finally:
        try:
            if ahead is not None:
                ahead.close()
            syncs.close()  # every file's state recorded once its nodes are durable
        finally:
            state.save()
    return report


def _written(
    report: ImportReport,
    fresh: set[str],
    hooks: IngestHooks | None,
    mirrors: MirrorWriter | None,
    syncs: SyncWorker,
) -> None:
    """A file's sessions are written: the hooks are told, and its backlog goes to the mirror
    writer once durable; what the writer finished meanwhile is handed on."""
    if hooks is not None:
        hooks.ingested(fresh, report)
    if mirrors is not None:
        owed = sorted(fresh & report.mirror_pending)
        if owed:
            syncs.when_durable(partial(mirrors.add, owed))
        mirrors.poll()


def _quiet_repeats(importer: Importer, path: Path, report: ImportReport, state: ImportState, start: int) -> None:
    """The warnings this file gave (report.warnings[start:]) that an earlier run said already about
    it, unchanged since, move to report.said_before (`opmem import --verbose` shows them)."""
    fresh = report.warnings[start:]
    try:
        stat = importer.file_stat(path)
    except OSError:
        return
    repeated = state.said_before(path, stat, fresh)
    report.warnings[start:] = [line for line, old in zip(fresh, repeated, strict=True) if not old]
    report.said_before.extend(line for line, old in zip(fresh, repeated, strict=True) if old)


def _send_ahead(ahead: ParseAhead, importer: Importer, paths: list[Path], state: ImportState, force: bool) -> None:
    """Hand the worker the files about to be imported that will be parsed (their stat taken now,
    before it reads them; an unchanged or unreadable file is left to import_file)."""
    for path in map(Path, paths):
        if ahead.sent(path):
            continue
        try:
            stat = importer.file_stat(path)
        except OSError:
            continue
        if force or not state.unchanged(path, stat, importer.name):
            ahead.send(path, stat, importer.is_complete(path))


def import_file(
    store: SessionStore,
    importer: Importer,
    path: Path,
    report: ImportReport,
    state: ImportState,
    *,
    on_project: ProjectHook | None = None,
    force: bool = False,
    on_session: SessionHook | None = None,
    redact: bool = False,
    defer_mirror: bool = False,
    syncs: SyncWorker | None = None,
    ahead: ParseAhead | None = None,
) -> None:
    """Parse one file whole and ingest what it holds; problems become warnings (redact: see ingest).

    on_session(session_id) is called for each session this file wrote nodes to. syncs: the
    batch ends' syncs run there and the file's state is recorded when they are done
    (`syncs.settle()`); a sync that fails is this file's warning. ahead: the file may have been
    parsed by its worker (parse_ahead.py), under the stat recorded for it.
    """
    parsed = ahead.take(path) if ahead is not None else None
    if parsed is None:
        try:
            stat = importer.file_stat(path)
        except OSError as exc:
            report.warn(path, None, f"cannot read: {exc.strerror or exc}")
            return
        if not force and state.unchanged(path, stat, importer.name):
            report.skipped += 1
            return
        complete = importer.is_complete(path)
    else:
        stat, complete = parsed.stat, parsed.final
    try:
        sessions = importer.parse_file(path, report, final=complete) if parsed is None else parsed.into(report)
        for imported in sessions:
            before = report.nodes
            sid = ingest(
                store,
                imported,
                report,
                on_project=on_project,
                redact=redact,
                defer_mirror=defer_mirror,
                sync_later=None if syncs is None else syncs.submit,
            )
            if on_session is not None and report.nodes != before:
                on_session(sid)
    except (OpmemError, OSError, UnicodeError) as exc:
        report.warn(path, None, str(exc))
        _not_recorded(syncs, path, report)
        return
    except Exception as exc:  # a parser bug must not stop the other files
        bug = str(exc) if isinstance(exc, ParserBug) else f"{type(exc).__name__}: {exc}"  # the worker's names it
        report.warn(path, None, f"internal error while importing: {bug}")
        _not_recorded(syncs, path, report)
        return
    entry = FileState(
        source=importer.name,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        offset=stat.st_size,
        lines=0,
        complete=complete,
    )
    if syncs is None:
        state.record(path, entry)
    else:
        syncs.then(partial(state.record, path, entry), partial(_sync_failed, report, path))


def _sync_failed(report: ImportReport, path: Path, exc: OSError) -> None:
    report.warn(path, None, str(exc))


def _not_recorded(syncs: SyncWorker | None, path: Path, report: ImportReport) -> None:
    """A file that failed midway: the syncs of what it wrote are still its own (warnings included)."""
    if syncs is not None:
        syncs.then(lambda: None, partial(_sync_failed, report, path))
