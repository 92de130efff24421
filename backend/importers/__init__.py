"""Importers of other agents' sessions, and `run_import`, used by the CLI and the TUI palette.

SOURCES maps a source name to its importer module (loaded on first use; a module that is not
installed yet is simply absent). An importer module exposes SOURCE, default_paths(), discover(paths)
and parse_file(path, report); optionally open_parser(path, report) (a stateful line parser with
feed_line/take, so `opmem watch` reads only appended lines) and is_complete(path).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from ..home import Home
from ..model import OpmemError
from ..projects.binding import ProjectBinder
from .base import ImportReport
from .hooks import IngestHooks
from .ingest import ProjectHook, ingest
from .state import STATE_FILE, FileState, ImportState

MODULES = {
    "claude": "claude_code",
    "codex": "codex",
    "gemini": "gemini",
    "aider": "aider",
    "openprogram": "openprogram",
    "jsonl": "jsonl",
}
ALIASES = {"claude-code": "claude", "claude_code": "claude", "cc": "claude"}

Progress = Callable[[int, int, str], Any]
Cancel = Callable[[], bool]
SessionHook = Callable[[str], Any]


class _Sources(Mapping[str, ModuleType]):
    """Source name -> importer module, imported lazily; missing modules are left out."""

    def __init__(self) -> None:
        self._loaded: dict[str, ModuleType] = {}
        self._missing: set[str] = set()

    def _load(self, name: str) -> ModuleType | None:
        if name in self._loaded:
            return self._loaded[name]
        if name in self._missing or name not in MODULES:
            return None
        qualified = f"{__name__}.{MODULES[name]}"
        try:
            module = importlib.import_module(qualified)
        except ModuleNotFoundError as exc:
            if exc.name != qualified:
                raise  # the module exists but one of its imports is missing: a real error
            self._missing.add(name)
            return None
        self._loaded[name] = module
        return module

    def __getitem__(self, name: str) -> ModuleType:
        module = self._load(ALIASES.get(name, name))
        if module is None:
            raise KeyError(name)
        return module

    def __iter__(self) -> Iterator[str]:
        return (name for name in MODULES if self._load(name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


SOURCES = _Sources()


def get_importer(source: str) -> ModuleType:
    try:
        return SOURCES[source]
    except KeyError:
        known = ", ".join(SOURCES) or "none"
        raise OpmemError(f"unknown import source {source!r} (available: {known})") from None


def source_name(source: str) -> str:
    """The registry name ("claude") for a name or alias ("claude-code")."""
    name = ALIASES.get(source, source)
    get_importer(name)
    return name


def resolve_home(home_or_store: Any) -> tuple[Any, Path | None]:
    """(SessionStore, import-state path) from a Home or a SessionStore."""
    store = getattr(home_or_store, "sessions", None)
    if store is not None and hasattr(home_or_store, "path"):
        return store, Path(home_or_store.path) / STATE_FILE
    root = getattr(home_or_store, "root", None)
    return home_or_store, (Path(root).parent / STATE_FILE if root is not None else None)


def run_import(
    home_or_store: Any,
    source: str,
    paths: Iterable[Path | str] | None = None,
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    on_project: ProjectHook | None = None,
    force: bool = False,
    bind: bool = True,
    hooks: IngestHooks | None = None,
) -> ImportReport:
    """Import every session file of `source` under `paths` (default: where the agent keeps them).

    Files unchanged since their last complete import are skipped (counted in report.skipped);
    force=True parses them again (still idempotent). A file that fails is a warning, never fatal.
    Given a Home, a session whose cwd lies in a git repository is bound to that project (unless
    bind=False or `on_project` replaces the binder), and the commits of each bound session's
    project are linked to its turns (projects/binding.py). `hooks.after_ingest` runs after each file with
    the sessions it wrote to; report.touched holds them all.
    """
    name = source_name(source)
    importer = get_importer(name)
    binder = ProjectBinder.for_home(home_or_store) if isinstance(home_or_store, Home) else None
    if binder is not None and bind and on_project is None:
        on_project = binder
    store, state_path = resolve_home(home_or_store)
    state = ImportState(state_path)
    report = ImportReport()
    given = list(paths) if paths else []
    missing = [str(p) for p in given if not Path(p).expanduser().exists()]
    if missing:
        raise OpmemError(f"no such file or folder: {', '.join(missing)}")
    roots = given if given else importer.default_paths()
    if not roots:
        raise OpmemError(f"{name} sessions have no default folder: give a file or folder to import")
    files = importer.discover(roots)
    if not files:
        where = ", ".join(str(p) for p in roots)
        absent = "" if any(Path(p).expanduser().exists() for p in roots) else " (folder not found)"
        report.warn(where, None, f"nothing to import: no {importer.LOOKS_FOR} found{absent}")
    total = len(files)
    try:
        for done, path in enumerate(files):
            if cancel is not None and cancel():
                break
            if progress is not None:
                progress(done, total, str(path))
            before = set(report.touched)
            import_file(
                store,
                name,
                importer,
                Path(path),
                report,
                state,
                on_project=on_project,
                force=force,
                on_session=binder.session_written if binder is not None else None,
            )
            if binder is not None:
                binder.link_pending(report)  # file by file: a cancelled import keeps its links
            if hooks is not None:
                hooks.ingested(report.touched - before, report)
        else:
            if progress is not None:
                progress(total, total, "")
    finally:
        state.save()
    return report


def import_file(
    store: Any,
    name: str,
    importer: ModuleType,
    path: Path,
    report: ImportReport,
    state: ImportState,
    *,
    on_project: ProjectHook | None = None,
    force: bool = False,
    on_session: SessionHook | None = None,
) -> None:
    """Parse one file whole and ingest what it holds; problems become warnings.

    on_session(session_id) is called for each session this file wrote nodes to.
    """
    try:
        stat = os.stat(path)
    except OSError as exc:
        report.warn(path, None, f"cannot read: {exc.strerror or exc}")
        return
    if not force and state.unchanged(path, stat):
        report.skipped += 1
        return
    complete_check = getattr(importer, "is_complete", None)
    complete = bool(complete_check(path)) if complete_check is not None else True
    try:
        sessions = importer.parse_file(path, report)
        for imported in sessions:
            before = report.nodes
            sid = ingest(store, imported, report, on_project=on_project)
            if on_session is not None and report.nodes != before:
                on_session(sid)
    except (OpmemError, OSError, UnicodeError) as exc:
        report.warn(path, None, str(exc))
        return
    except Exception as exc:  # a parser bug must not stop the other files
        report.warn(path, None, f"internal error while importing: {type(exc).__name__}: {exc}")
        return
    state.record(
        path,
        FileState(
            source=name, size=stat.st_size, mtime_ns=stat.st_mtime_ns, offset=stat.st_size, lines=0, complete=complete
        ),
    )
