"""`opmem import SOURCE [PATH...]` and `opmem watch [SOURCE...]`; `register(main)` adds them."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .backend.home import Home
from .backend.importers import ALIASES, SOURCES, run_import
from .backend.importers.base import ImportReport
from .backend.importers.detect import detect_sources
from .backend.importers.discovery import find_agents
from .backend.importers.hooks import IngestHooks
from .backend.importers.watch import Watcher
from .backend.model import OpmemError
from .backend.projects.autocommit import AutoCommitEvent
from .backend.safe_text import plain
from .backend.store.mirror_backlog import MirrorWriter
from .backend.store.mirror_pool import default_workers
from .cli_output import print_table
from .cli_signals import StopRequest, stop_requested_by_signals

Runs = list[tuple[str, ImportReport]]  # (agent label, its report) of one `opmem import`

console = Console()
err_console = Console(stderr=True)


def _home(ctx: click.Context) -> Home:
    obj = ctx.find_object(dict) or {}
    home = obj.get("home")
    return home if isinstance(home, Home) else Home()


def ingest_hooks(home: Home) -> IngestHooks:
    """What runs after each ingest batch of `opmem import` / `opmem watch`, and on the watch's idle tick:
    `Home.ingest_hooks`, the one list every import uses (the app's palette and the demo too)."""
    return home.ingest_hooks()


def _fail(exc: Exception) -> None:
    err_console.print(Text(f"opmem: {plain(str(exc))}", style="red"))
    sys.exit(1)


def _short(label: str, width: int = 48) -> str:
    label = plain(label)
    return label if len(label) <= width else "…" + label[-(width - 1) :]


def _figures(report: ImportReport) -> tuple[int, ...]:
    return (report.sessions, report.new_sessions, report.turns, report.nodes, report.skipped, len(report.warnings))


def summary_table(runs: list[tuple[str, ImportReport]], title: str = "import") -> Table:
    """One table for a run: a row per agent imported, and their total when there are several."""
    table = Table(title=title)
    table.add_column("agent")
    for column in ("sessions", "new", "turns", "nodes", "skipped", "warnings"):
        table.add_column(column, justify="right")
    for label, report in runs:
        table.add_row(plain(label), *map(str, _figures(report)))
    if len(runs) > 1:
        totals = [sum(column) for column in zip(*(_figures(report) for _, report in runs), strict=True)]
        table.add_row("total", *map(str, totals), style="bold")
    return table


def nothing_new(runs: list[tuple[str, ImportReport]]) -> bool:
    return all(not (r.new_sessions or r.turns or r.nodes or r.warnings) for _, r in runs)


def print_summary(runs: list[tuple[str, ImportReport]], max_warnings: int, verbose: bool = False) -> None:
    """What a run imported: one line when nothing was new, else one table (plain lines when
    piped); then the warnings, the first `max_warnings` of them all. Warnings an earlier run
    said about files unchanged since are counted in one line (verbose: said again)."""
    if nothing_new(runs):
        unchanged = sum(report.skipped for _, report in runs)
        reread = sum(report.sessions for _, report in runs)
        said = [f"{unchanged:,} file(s) unchanged since the last import"]
        if reread:
            said.append(f"{reread:,} session(s) read again, nothing new in them")
        where = ", ".join(label for label, _ in runs)
        console.print(Text(f"nothing new from {plain(where)}: {'; '.join(said)}"))
    else:
        print_table(console, summary_table(runs))
    merged = ImportReport()
    for _, report in runs:
        merged.warnings.extend(report.warnings)
        merged.said_before.extend(report.said_before)
        for kind, count in report.unknown_records.items():
            merged.unknown_records[kind] = merged.unknown_records.get(kind, 0) + count
    if verbose:
        merged.warnings[:0] = merged.said_before
    elif merged.said_before:
        said = len(merged.said_before)
        err_console.print(
            Text(f"{said:,} warning(s) said by an earlier import, the files unchanged since (--verbose: say them)"),
            style="dim",
        )
    print_warnings(merged, max_warnings)


def print_warnings(report: ImportReport, limit: int) -> None:
    for line in report.warnings[:limit]:
        err_console.print(Text(f"warning: {plain(line)}", style="yellow"), soft_wrap=True)
    hidden = len(report.warnings) - limit
    if hidden > 0:
        err_console.print(Text(f"… and {hidden} more warning(s)", style="yellow"))
    if report.unknown_records:
        kinds = ", ".join(f"{plain(k)} × {n}" for k, n in sorted(report.unknown_records.items()))
        err_console.print(Text(f"unknown record types (skipped): {kinds}", style="yellow"))


@click.command("import")
@click.argument("source", metavar="[SOURCE]", required=False)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Parse files again even when unchanged since the last import.")
@click.option("--warnings", "max_warnings", type=int, default=20, show_default=True, help="How many warnings to print.")
@click.option("--verbose", is_flag=True, help="Say again the warnings an earlier import said about unchanged files.")
@click.option("--no-bind", is_flag=True, help="Do not bind sessions to the git repository of their working folder.")
@click.option("--list", "list_only", is_flag=True, help="Only list the agents found on this machine (no SOURCE).")
@click.pass_context
def import_command(
    ctx: click.Context,
    source: str | None,
    paths: tuple[Path, ...],
    force: bool,
    max_warnings: int,
    verbose: bool,
    no_bind: bool,
    list_only: bool,
) -> None:
    """Import an agent's sessions (SOURCE: one of `opmem import --list`'s names, or jsonl with PATHs).

    `opmem import PATH...` (no SOURCE): every session under the paths, at any depth, is read by
    the importer whose format it has (said for each); one that fits several is named and skipped.

    Without SOURCE every agent found on this machine is imported (their default folders, with the
    agents' own environment overrides, VS Code and its forks included); --list only lists them.
    Without PATHs the agent's own session folder is used. Importing again adds only what is new.
    A session whose working folder lies in a git repository is bound to that project, and the
    project's commits are linked to the turns that made them.

    Ctrl-C or SIGTERM: the file being imported is finished, then the import stops (exit 130);
    run it again to import the rest. A second one stops at once.
    """
    home = _home(ctx)
    if ctx.get_parameter_source("max_warnings") is not click.core.ParameterSource.DEFAULT:
        verbose = True  # asking for a number of warnings: every warning counts
    report_run = partial(print_summary, max_warnings=max_warnings, verbose=verbose)
    if source is not None and not list_only and names_a_path(source):
        _import_detected(home, (Path(source), *paths), force, report_run, no_bind)
        return
    if source is None or list_only:
        if source is not None:
            _fail(OpmemError("--list takes no SOURCE"))
        _import_found(home, force, report_run, no_bind, list_only)
        return
    with stop_requested_by_signals() as stop:
        try:
            home.ensure()
            mirrors = mirror_writer(home)
            report = _import_with_progress(home, source, paths, force, no_bind, stop)
            write_mirrors(mirrors, report, stop)
        except OpmemError as exc:
            _fail(exc)
            return
    report_run([(source, report)])
    if stop.is_set():
        err_console.print(Text("opmem import: stopped by a signal; run it again to import the rest", style="yellow"))
        sys.exit(130)


def names_a_path(source: str) -> bool:
    """`opmem import X`: X is a file or folder (not a source's name or alias) when it exists or has a slash."""
    if source in SOURCES or source in ALIASES:
        return False
    return "/" in source or Path(source).expanduser().exists()


def _import_detected(
    home: Home, paths: tuple[Path, ...], force: bool, report_run: Callable[[Runs], None], no_bind: bool
) -> None:
    """`opmem import PATH...`: each session under the paths read by the importer whose shape it has."""
    missing = [str(p) for p in paths if not p.expanduser().exists()]
    if missing:
        _fail(OpmemError(f"no such file or folder: {', '.join(missing)}"))
    with err_console.status("looking at what the paths hold…"):
        detected = detect_sources(paths, SOURCES)
    for line in detected.warnings():
        err_console.print(Text(f"warning: {plain(line)}", style="yellow"), soft_wrap=True)
    if not detected.sessions:
        shown = ", ".join(str(p) for p in paths)
        _fail(OpmemError(f"found no agent session in {shown} (give SOURCE to read them as one agent's)"))
    jobs = []
    for name, units in detected.sessions.items():
        importer, unit = SOURCES[name], "session" if len(units) == 1 else "sessions"
        said = f"{len(units)} {unit} read as {importer.label} (opmem import {name})"
        jobs.append((name, importer.label, tuple(units), said))
    _import_each(home, jobs, force, report_run, no_bind, exact=True)


def _import_found(home: Home, force: bool, report_run: Callable[[Runs], None], no_bind: bool, list_only: bool) -> None:
    """Find every agent present, say what was found per agent, and (unless list_only) import each."""
    with err_console.status("looking for agents' sessions…") as status:
        found = find_agents(SOURCES, progress=lambda name: status.update(f"looking for {name} sessions…"))
    if not found:
        console.print(Text("Found no agent sessions in the default locations (give SOURCE and PATHs)."))
        return
    if list_only:
        table = Table(title="agents found")
        for column in ("agent", "source", "sessions", "where"):
            table.add_column(column, justify="right" if column == "sessions" else "left")
        for agent in found:
            where = ", ".join(str(r) for r in agent.roots)
            table.add_row(agent.label, agent.name, str(agent.sessions), Text(plain(where)))
        print_table(console, table)
    console.print(Text("Found: " + ", ".join(agent.summary() for agent in found)), soft_wrap=True)
    if list_only:
        return
    _import_each(home, [(agent.name, agent.label, (), "") for agent in found], force, report_run, no_bind)


def _import_each(
    home: Home,
    jobs: list[tuple[str, str, tuple[Path, ...], str]],
    force: bool,
    report_run: Callable[[Runs], None],
    no_bind: bool,
    *,
    exact: bool = False,
) -> None:
    """Import each (source, label, paths, line to say first) in turn, then report the run; a signal
    stops between agents (exit 130), an agent's error is said and the next one goes on."""
    runs: Runs = []
    with stop_requested_by_signals() as stop:
        for name, label, paths, said in jobs:
            if stop.is_set():
                break
            if said:
                console.print(Text(said))
            try:
                home.ensure()
                mirrors = mirror_writer(home)
                report = _import_with_progress(home, name, paths, force, no_bind, stop, mirrors, exact=exact)
                write_mirrors(mirrors, report, stop)
            except OpmemError as exc:
                err_console.print(Text(f"opmem import {name}: {plain(str(exc))}", style="red"))
                continue
            runs.append((label, report))
    if runs:
        report_run(runs)
    if stop.is_set():
        err_console.print(Text("opmem import: stopped by a signal; run it again to import the rest", style="yellow"))
        sys.exit(130)


def _progress_bar() -> Progress:
    """The bar on stderr an import and its git mirror show while they run (gone when done)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )


def _import_with_progress(
    home: Home,
    source: str,
    paths: tuple[Path, ...],
    force: bool,
    no_bind: bool,
    stop: StopRequest,
    mirrors: MirrorWriter | None = None,
    *,
    exact: bool = False,
) -> ImportReport:
    with _progress_bar() as bar:
        task = bar.add_task(f"importing {plain(source)}", total=None)

        def progress(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=_short(label) if label else "done")

        return run_import(
            home,
            source,
            list(paths) or None,
            progress=progress,
            cancel=stop.is_set,  # looked at between two files
            force=force,
            bind=not no_bind,
            hooks=ingest_hooks(home),
            defer_mirror=True,  # browsable and searchable first; write_mirrors commits the turns
            exact=exact,
            mirrors=mirrors,  # written meanwhile by worker processes, session by session
        )


def mirror_writer(home: Home) -> MirrorWriter:
    """The git mirrors to write: the ones an earlier, interrupted run left (adopted now), and
    the ones this import defers (added as their sessions are written). Worker processes, one a
    core, write them beside the import (mirror_pool.py). The search index fills in commit ids."""
    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror, workers=default_workers())
    writer.adopt()
    return writer


def write_mirrors(writer: MirrorWriter, report: ImportReport, stop: StopRequest) -> int:
    """Write the deferred git mirrors before `opmem import` exits, saying so; returns the commits made.

    A signal stops it between two sessions: what is left is written at the next start (an
    import, a watch, the app), since the sessions keep their marker (mirror_backlog.py)."""
    writer.add(writer.store.owed_mirrors())  # report.mirror_pending, and a batch that failed midway
    total = writer.pending + writer.written_early  # the workers may have written some already
    if not total or stop.is_set():
        writer.run(lambda: True)  # the workers finish the session under way; the rest stays queued
        _mirrors_left(writer)
        return 0
    err_console.print(
        Text(f"{report.sessions} session(s) browsable and searchable; writing the git mirror of {total}…")
    )
    with _progress_bar() as bar:
        task = bar.add_task("git mirror", total=total)
        done = writer.run(stop.is_set, lambda n, _total, _sid: bar.update(task, completed=n))
    for problem in done.problems:
        report.warn("git mirror", None, problem)
    err_console.print(
        Text(f"git mirror written: {done.commits} turn commit(s) of {done.sessions} session(s) in {done.seconds:.1f} s")
    )
    _mirrors_left(writer)
    return done.commits


def _mirrors_left(writer: MirrorWriter) -> None:
    if writer.pending:
        err_console.print(
            Text(
                f"git mirror: {writer.pending} session(s) left to write; the next `opmem import`, "
                "`opmem watch` or app start writes them (their node files are complete)",
                style="yellow",
            )
        )


@click.command("watch")
@click.argument("sources", nargs=-1, metavar="[SOURCE...]")
@click.option(
    "--path", "paths", multiple=True, type=click.Path(path_type=Path), help="Watch this file or folder instead."
)
@click.option("--idle", type=float, default=0.5, show_default=True, help="Seconds of quiet before a reply is written.")
@click.option("--no-bind", is_flag=True, help="Do not bind sessions to the git repository of their working folder.")
@click.option(
    "--autocommit/--no-autocommit",
    default=None,
    help="Commit the files each live turn's tools wrote in its project (default: [projects] autocommit, on).",
)
@click.pass_context
def watch_command(
    ctx: click.Context,
    sources: tuple[str, ...],
    paths: tuple[Path, ...],
    idle: float,
    no_bind: bool,
    autocommit: bool | None,
) -> None:
    """Keep importing new turns while agents write them (Ctrl-C stops).

    Turns of sessions bound to a project are auto-committed when they end: only the files the
    turn's tools wrote that had no uncommitted changes when it started.

    Ctrl-C or SIGTERM: the file being read is finished, a distillation started by the watch
    stops at its next batch edge, exit status 0. A second one stops at once (exit 130; what is
    stored stays whole and the next import or watch completes it).
    """
    with stop_requested_by_signals() as stop:
        _watch(_home(ctx), sources, paths, idle, no_bind, autocommit, stop)


def _watch(
    home: Home,
    sources: tuple[str, ...],
    paths: tuple[Path, ...],
    idle: float,
    no_bind: bool,
    autocommit: bool | None,
    stop: StopRequest,
) -> None:
    def on_batch(path: Path | None, report: ImportReport) -> None:
        stamp = time.strftime("%H:%M:%S")
        where = _short(str(path), 60) if path else "catch-up"
        line = f"{stamp} {where}: +{report.nodes} nodes, +{report.turns} turns"
        if report.new_sessions:
            line += f", {report.new_sessions} new session(s)"
        console.print(Text(line))
        print_warnings(report, 5)

    try:
        home.ensure()
        watcher = Watcher(
            home,
            list(sources) or None,
            list(paths) or None,
            on_batch=on_batch,
            idle_seconds=idle,
            bind=not no_bind,
            autocommit=autocommit,
            on_commit=print_commit_event,
            hooks=_with_periodic_sync(home, ingest_hooks(home)),
            mirrors=mirror_writer(home),
        )
        names = ", ".join(watcher.importers) or "nothing"
        roots = ", ".join(str(r) for r in watcher.watch_roots()) or "no existing folder"
        commits = "auto-commit on" if watcher.committer is not None else "auto-commit off"
        console.print(Text(f"watching {names} in {plain(roots)}; {commits} (Ctrl-C stops)"))
        try:
            watcher.run(stop)
        finally:
            home.distiller.cancel()  # a run the idle tick started: stopped at its next batch edge
            home.distiller.wait()
    except KeyboardInterrupt:
        err_console.print(Text("opmem watch: stopped at once", style="yellow"))
        sys.exit(130)
    except OpmemError as exc:
        _fail(exc)


def _with_periodic_sync(home: Home, hooks: IngestHooks) -> IngestHooks:
    """The watch's hooks, plus a sync every `[sync] every_minutes` when a remote is set (opmem sync)."""
    settings = home.config.sync
    if not settings.remote or settings.every_minutes <= 0:
        return hooks
    from dataclasses import replace

    from .backend.sync.periodic import PeriodicSync

    def said(report: object, error: str | None) -> None:
        stamp = time.strftime("%H:%M:%S")
        if error is not None:
            err_console.print(Text(f"{stamp} sync: {plain(error)}", style="yellow"), soft_wrap=True)
        elif report is not None:
            console.print(Text(f"{stamp} sync: {plain(report.lines()[0])}"))

    console.print(Text(f"syncing with {plain(settings.remote)} every {settings.every_minutes} min"))
    return replace(hooks, on_idle=(*hooks.on_idle, PeriodicSync(home, settings.every_minutes, said)))


def print_commit_event(event: AutoCommitEvent) -> None:
    """One line per auto-commit, and the warnings the UI must show."""
    stamp = time.strftime("%H:%M:%S")
    if event.commit:
        paths = ", ".join(event.paths[:5]) + (f" and {len(event.paths) - 5} more" if len(event.paths) > 5 else "")
        line = f"{stamp} committed turn {event.turn} of {event.session_id} in {event.project_id}: {event.commit[:7]} ({paths})"
        console.print(Text(plain(line), style="green"))
    if event.warning:
        err_console.print(Text(f"warning: {plain(event.warning)}", style="yellow"), soft_wrap=True)


def register(group: click.Group) -> None:
    """Add `import` and `watch` to the `opmem` command group."""
    group.add_command(import_command)
    group.add_command(watch_command)


__all__ = ["SOURCES", "import_command", "register", "watch_command"]
