"""A backlog import's next files, parsed in a second process while this one writes the current one.

Parsing is a third of a backlog import's CPU time, and a Claude transcript's parse depends on
nothing but files on disk. So a worker process (spawned: nothing of this process's threads, locks
or databases is copied) parses the next files, in order, and hands their sessions back pickled;
this process unpickles them (a fifth of a parse's time) and writes them. Until the worker has
started, the files are parsed here. A pool that breaks (a killed worker) leaves every later file
to this process, so an import never depends on it.

The stat of a file is taken before the worker reads it, and that stat is what import-state.json
records: a file that grew meanwhile is read again by the next import, as with a parse here.
"""

from __future__ import annotations

import copyreg
import functools
import io
import multiprocessing
import os
import pickle
import signal
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model import OpmemError
from ..worker_process import start_worker_process
from .base import ImportedSession, Importer, ImportReport

AHEAD = 2  # files handed to the worker beyond the one being written
SMALLEST = 2  # files to parse: fewer are parsed here (a worker takes a third of a second to start)


class ParseFailed(OpmemError):
    """The worker's parse of a file failed as a parse here would have: the file's warning."""


class ParserBug(Exception):
    """The worker's parser raised what a parse here reports as an internal error (str: "KeyError: ...")."""


@dataclass(frozen=True)
class Parsed:
    """A file the worker parsed: the stat and `final` it was parsed under, and how it went."""

    stat: Any  # Importer.file_stat's: an os.stat_result, or a database's stamp
    final: bool
    kind: str  # "ok", "failed" or "bug" (parse_in_worker)
    value: Any  # the sessions, or what went wrong
    said: ImportReport  # the parse's warnings and unknown records

    @classmethod
    def unpack(cls, stat: Any, final: bool, blob: bytes) -> Parsed:
        kind, value, said = pickle.loads(blob)
        return cls(stat, final, kind, value, said)

    def into(self, report: ImportReport) -> list[ImportedSession]:
        """The sessions, with what the parse said added to `report`; a parse that failed raises
        as it would have here (ParseFailed, ParserBug)."""
        report.warnings.extend(self.said.warnings)
        for record, count in self.said.unknown_records.items():
            report.unknown_records[record] = report.unknown_records.get(record, 0) + count
        if self.kind == "failed":
            raise ParseFailed(self.value)
        if self.kind == "bug":
            raise ParserBug(self.value)
        return self.value


def usable(importer: Importer, files: int) -> bool:
    """Whether a backlog of `files` files of `importer` is worth a worker: one more CPU, and
    a parse that reads nothing but its files."""
    return importer.parses_apart and files >= SMALLEST and (os.cpu_count() or 1) > 1


class ParseAhead:
    """Hands the next files to one worker process and takes their parses back in order."""

    def __init__(self, importer: Importer) -> None:
        self.importer = importer
        self.broken = ""  # why the worker is no longer used, when it is not
        self.taken = 0  # files whose parse came from the worker
        self.spawned = False  # whether a worker was started
        self._sent: dict[Path, tuple[Any, bool, Future[bytes]]] = {}
        self._executor: ProcessPoolExecutor | None = None
        self._ready: Future[bool] | None = None

    def send(self, path: Path, stat: Any, final: bool) -> None:
        """Have the worker parse `path` as it is now (`stat`, taken before it reads it); the first
        file sent starts the worker (an import with nothing new to parse starts none)."""
        if path in self._sent or not self.start():
            return
        assert self._executor is not None
        try:
            future = self._executor.submit(parse_in_worker, type(self.importer), os.fspath(path), final)
        except (BrokenProcessPool, OSError, RuntimeError) as exc:
            self._stop(exc)
            return
        self._sent[path] = (stat, final, future)

    def start(self) -> bool:
        """Start the worker, unless it runs or broke (send does, for the first file it is given)."""
        if self.broken:
            return False
        if self._executor is None:
            try:
                self._executor = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=start_worker,
                    initargs=(os.getpid(),),
                )
                self._ready = self._executor.submit(ready)
            except (BrokenProcessPool, OSError, ValueError, RuntimeError) as exc:
                self._stop(exc)
                return False
            self.spawned = True
        return True

    def started(self, timeout: float = 0) -> bool:
        """Whether the worker runs (waiting up to `timeout` seconds for it)."""
        if self._ready is None:
            return False
        try:
            return self._ready.result(timeout) is True
        except TimeoutError:
            return False
        except (BrokenProcessPool, CancelledError, OSError, RuntimeError) as exc:
            self._stop(exc)
            return False

    def sent(self, path: Path) -> bool:
        return path in self._sent

    def take(self, path: Path) -> Parsed | None:
        """The worker's parse of `path` (waited for once the worker runs), or None: parse it here."""
        entry = self._sent.pop(path, None)
        if entry is None:
            return None
        stat, final, future = entry
        if not self.started():
            future.cancel()  # still starting: quicker here (a parse already under way is dropped)
            return None
        try:
            parsed = Parsed.unpack(stat, final, future.result())
        except (BrokenProcessPool, CancelledError, OSError, RuntimeError, pickle.UnpicklingError, EOFError) as exc:
            self._stop(exc)
            return None
        self.taken += 1
        return parsed

    def close(self) -> None:
        """Drop what is still queued; the worker exits once it is done with its file."""
        for _stat, _final, future in self._sent.values():
            future.cancel()
        self._sent.clear()
        self._ready = None
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def _stop(self, exc: BaseException) -> None:
        self.broken = self.broken or f"{type(exc).__name__}: {exc}"
        self.close()


# ------------------------------------------------------------------ in the worker


def start_worker(parent: int) -> None:
    """The worker's initializer: nothing printed on the terminal, gone with `parent` (the import's
    pid); Ctrl-C is the import's to handle (it stops between files), not a traceback of the worker's."""
    start_worker_process(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def ready() -> bool:
    return True


@functools.cache
def _importer(kind: type[Importer]) -> Importer:
    return kind()  # one a worker, as the registry holds one (the worker is handed the class: no registry import)


def parse_in_worker(kind: type[Importer], path: str, final: bool) -> bytes:
    """One file parsed as run_import would parse it here: ("ok", sessions, report), or ("failed",
    message, report) for what import_file makes a warning, ("bug", message, report) for the rest."""
    report = ImportReport()
    try:
        sessions = _importer(kind).parse_file(Path(path), report, final=final)
    except (OpmemError, OSError, UnicodeError) as exc:
        return _dumps(("failed", str(exc), report))
    except Exception as exc:  # a parser bug: the file's internal-error warning, as here
        return _dumps(("bug", f"{type(exc).__name__}: {exc}", report))
    return _dumps(("ok", sessions, report))


def _proxy(value: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(value)


def _reduce_proxy(value: MappingProxyType[str, Any]) -> tuple[Any, tuple[dict[str, Any]]]:
    return _proxy, (dict(value),)


_DISPATCH = {**copyreg.dispatch_table, MappingProxyType: _reduce_proxy}  # nodes' metadata is read-only


def _dumps(value: Any) -> bytes:
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    pickler.dump(value)
    return out.getvalue()
