"""The `opmem` command line: the app with no arguments, subcommands for scripting."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from .backend.home import Home
from .backend.model import OpmemError
from .backend.safe_text import plain

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def _home(ctx: click.Context) -> Home:
    return ctx.obj["home"]


def _fail(exc: Exception) -> None:
    err_console.print(Text(f"opmem: {exc}", style="red"))
    sys.exit(1)


def _reader_gone() -> None:
    """stdout's reader stopped early (`opmem sessions list | head -1`): no file has a problem, so
    no message; stdout goes to /dev/null so the flush at exit cannot fail again, and exit 1, as
    rich does for what it prints itself (Console.on_broken_pipe). SIGPIPE itself stays ignored:
    dying of it could stop an import between two writes."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


class _Commands(click.Group):
    """Every command: an OSError that reaches here (a full disk, a read-only home) is a message
    naming the file, exit 1, not a traceback; so is an OpmemError no command caught (a session
    another opmem process keeps locked)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _reader_gone()
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            _fail(OpmemError(f"{where}{exc.strerror or exc}"))
        except OpmemError as exc:
            _fail(exc)


@click.group(cls=_Commands, invoke_without_command=True)
@click.option(
    "--home",
    "home_path",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="OPMEM_HOME",
    help="State directory (default: $OPMEM_HOME, else the platform data folder).",
)
@click.pass_context
def main(ctx: click.Context, home_path: Path | None) -> None:
    """opmem: every agent session kept as a git repository, distilled into memory."""
    ctx.ensure_object(dict)
    home = ctx.obj["home"] = Home(home_path)
    for problem in home.config.problems():  # config.toml: what could not be read keeps its default
        err_console.print(Text(f"opmem: warning: {problem}", style="yellow"))
    if ctx.invoked_subcommand in _WRITERS:  # reads leave the store as they found it (their output is redacted)
        _redact_older_memory(home)
    if ctx.invoked_subcommand is None:
        run_app(ctx.obj["home"])


# The commands that write the memory or the index re-redact an older opmem's memory first
# (distill and sleep do it under their own lock); None: the app.
_WRITERS = frozenset({None, "import", "watch", "index", "flush"})


def _redact_older_memory(home: Home) -> None:
    """A memory an earlier opmem distilled holds secrets: masked before any command reads it."""
    from .backend.orchestration import ensure_redacted

    try:
        upgraded = ensure_redacted(home)
    except (OpmemError, OSError) as exc:
        err_console.print(
            Text(f"opmem: warning: the memory could not be re-redacted yet: {plain(str(exc))}", style="yellow")
        )
        return
    if upgraded is not None:
        err_console.print(Text(upgraded.message, style="dim"))


def run_app(home: Home, *, start_tab: str = "sessions") -> None:
    try:
        from .app import OpmemApp
    except ImportError as exc:  # the TUI layer is optional for scripting installs
        _fail(OpmemError(f"the app cannot start: {exc}"))
        return
    try:
        home.ensure()
        OpmemApp(home, start_tab=start_tab).run()
    except OpmemError as exc:
        _fail(exc)


@main.command()
@click.option("--no-repair", is_flag=True, help="Only report; commit nothing.")
@click.pass_context
def verify(ctx: click.Context, no_repair: bool) -> None:
    """Check every session (meta, node files, git mirror) and backfill missing commits."""
    try:
        report = _home(ctx).sessions.verify(repair=not no_repair)
    except OpmemError as exc:
        _fail(exc)
        return
    console.print(f"checked {report.checked} sessions")
    if report.unreadable:
        names = ", ".join(plain(sid) for sid in report.unreadable)
        err_console.print(Text(f"unreadable: {len(report.unreadable)} session(s): {names}", style="yellow"))
    for line in report.repaired:
        console.print(Text(f"repaired: {line}", style="green"))
    for line in report.writing:  # a backlog's mirror another process is writing: not a problem
        console.print(Text(f"writing: {line}"))
    for line in report.problems:
        err_console.print(Text(f"problem: {line}", style="yellow"))
    if not report.ok:
        sys.exit(2)


def _register_subcommands() -> None:
    from .cli_connect import register as register_connect
    from .cli_demo import demo
    from .cli_distill import register as register_distill
    from .cli_export import register as register_export
    from .cli_import import register as register_import
    from .cli_index import index
    from .cli_projects import projects
    from .cli_recall import register as register_recall
    from .cli_resume import register as register_resume
    from .cli_secrets import secrets
    from .cli_sessions import sessions
    from .cli_sync import sync
    from .cli_usage import register as register_usage

    main.add_command(sessions)
    main.add_command(demo)
    main.add_command(projects)
    main.add_command(index)
    main.add_command(secrets)
    main.add_command(sync)
    register_import(main)
    register_usage(main)
    register_recall(main)
    register_distill(main)
    register_connect(main)
    register_export(main)
    register_resume(main)


_register_subcommands()
