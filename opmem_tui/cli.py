"""The `opmem` command line: the app with no arguments, subcommands for scripting."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
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


@click.group(invoke_without_command=True)
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
    ctx.obj["home"] = Home(home_path)
    if ctx.invoked_subcommand is None:
        _run_app(ctx.obj["home"])


def _run_app(home: Home) -> None:
    try:
        from .app import OpmemApp
    except ImportError as exc:  # the TUI layer is optional for scripting installs
        _fail(OpmemError(f"the app cannot start: {exc}"))
        return
    try:
        home.ensure()
        OpmemApp(home).run()
    except OpmemError as exc:
        _fail(exc)


def _age(ts: float) -> str:
    if not ts:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@main.group()
def sessions() -> None:
    """List, show, rename and delete sessions."""


@sessions.command("list")
@click.option("--limit", type=int, default=50, show_default=True)
@click.pass_context
def sessions_list(ctx: click.Context, limit: int) -> None:
    """Sessions, most recently updated first."""
    try:
        listing = _home(ctx).sessions.list_sessions()
    except OpmemError as exc:
        _fail(exc)
        return
    table = Table(
        title=f"{len(listing.sessions)} sessions" + (f", {listing.skipped} skipped" if listing.skipped else "")
    )
    for col in ("id", "title", "source", "turns", "updated"):
        table.add_column(col)
    for meta in listing.sessions[:limit]:
        table.add_row(
            Text(meta.id),
            Text(plain(meta.display_title)),
            Text(meta.source),
            str(meta.turn_count),
            _age(meta.updated_at),
        )
    console.print(table)
    for problem in listing.problems:
        err_console.print(Text(f"skipped: {problem}", style="yellow"))


@sessions.command("show")
@click.argument("session_id")
@click.option("--turn", type=int, default=None, help="Show only this turn.")
@click.pass_context
def sessions_show(ctx: click.Context, session_id: str, turn: int | None) -> None:
    """Print a session's current branch, turn by turn."""
    store = _home(ctx).sessions
    try:
        meta = store.get_meta(session_id)
        turns = store.get_turns(session_id)
    except OpmemError as exc:
        _fail(exc)
        return
    console.print(Text(f"{plain(meta.display_title)}  ({meta.source}, {len(turns)} turns)", style="bold"))
    for t in turns:
        if turn is not None and t.number != turn:
            continue
        console.print(
            Text(f"── turn {t.number} / {len(turns)}" + (f"  [{t.commit[:8]}]" if t.commit else ""), style="cyan")
        )
        for node in t.nodes:
            label = f"{node.role}" + (f" {node.name}" if node.name and node.is_tool else "")
            console.print(Text(f"{label}: ", style="bold"), Text(plain(node.content)[:2000]))


@sessions.command("rename")
@click.argument("session_id")
@click.argument("title")
@click.pass_context
def sessions_rename(ctx: click.Context, session_id: str, title: str) -> None:
    """Give a session a title of your own (never overwritten)."""
    try:
        meta = _home(ctx).sessions.rename_session(session_id, title)
    except OpmemError as exc:
        _fail(exc)
        return
    console.print(Text(f"renamed {meta.id}: {meta.title}"))


@sessions.command("delete")
@click.argument("session_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def sessions_delete(ctx: click.Context, session_id: str, yes: bool) -> None:
    """Delete a session folder for good."""
    store = _home(ctx).sessions
    try:
        meta = store.get_meta(session_id)
    except OpmemError as exc:
        _fail(exc)
        return
    if not yes and not click.confirm(f"Delete session {session_id} ({plain(meta.display_title)})?"):
        console.print("kept")
        return
    try:
        store.delete_session(session_id)
    except OpmemError as exc:
        _fail(exc)
        return
    console.print(Text(f"deleted {session_id}"))


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
    for line in report.repaired:
        console.print(Text(f"repaired: {line}", style="green"))
    for line in report.problems:
        err_console.print(Text(f"problem: {line}", style="yellow"))
    if not report.ok:
        sys.exit(2)


@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-app", is_flag=True, help="Build the demo store and print where it is; do not open the app.")
def demo(directory: Path | None, no_app: bool) -> None:
    """Open the app on a demo store (built in DIRECTORY, or a temporary folder)."""
    import tempfile

    from .backend.demo import build_demo, is_demo

    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="opmem-demo-"))
    try:
        if is_demo(directory):
            home = Home(directory / "home")
        elif directory.exists() and any(directory.iterdir()):
            _fail(OpmemError(f"{directory}: not empty and not an opmem demo; give an empty or new folder"))
            return
        else:
            with console.status("building the demo store…"):
                home = build_demo(directory)
    except OpmemError as exc:
        _fail(exc)
        return
    console.print(Text(f"demo store: {home.path}  (projects in {directory / 'projects'})"))
    if not no_app:
        _run_app(home)


def _register_subcommands() -> None:
    from .cli_distill import register as register_distill
    from .cli_import import register as register_import
    from .cli_projects import projects
    from .cli_recall import register as register_recall

    main.add_command(projects)
    register_import(main)
    register_recall(main)
    register_distill(main)


_register_subcommands()
