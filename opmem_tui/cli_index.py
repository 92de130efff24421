"""`opmem index ...`: the search index (memory/index.sqlite): rebuild, update, stats."""

from __future__ import annotations

from typing import Any

import click

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.index_update import UpdateReport
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.safe_text import plain


def _home(ctx: click.Context) -> Home:
    obj: Any = ctx.obj
    if isinstance(obj, dict) and isinstance(obj.get("home"), Home):
        return obj["home"]
    return Home()


def _summary(verb: str, report: UpdateReport) -> str:
    parts = [
        f"{verb}: {report.sessions_updated} sessions indexed ({report.rows} rows)",
        f"{report.records} memory records",
    ]
    if report.dense_rows:
        parts.append(f"{report.dense_rows} dense vectors")
    if report.sessions_dropped:
        parts.append(f"{report.sessions_dropped} deleted sessions dropped")
    return ", ".join(parts) + f" in {report.seconds:.2f} s"


def _finish(verb: str, report: UpdateReport) -> None:
    click.echo(_summary(verb, report))
    for problem in report.problems[:20]:
        click.echo(f"warning: {plain(problem)}", err=True)


@click.group("index")
def index() -> None:
    """The search index over sessions and memory (derived: safe to delete and rebuild)."""


@index.command("rebuild")
@click.pass_context
def rebuild_cmd(ctx: click.Context) -> None:
    """Build the index again from every session and the memory logs."""
    home = _home(ctx)
    if not home.exists():
        raise click.ClickException(f"no opmem home at {plain(str(home.path))}")
    try:
        report = home.search_index.rebuild()
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    _finish("rebuilt", report)


@index.command("update")
@click.pass_context
def update_cmd(ctx: click.Context) -> None:
    """Index what is new since the last update (drops deleted sessions)."""
    home = _home(ctx)
    if not home.exists():
        raise click.ClickException(f"no opmem home at {plain(str(home.path))}")
    try:
        report = home.search_index.update()
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    _finish("updated", report)


@index.command("stats")
@click.pass_context
def stats_cmd(ctx: click.Context) -> None:
    """Size and row counts of the index."""
    home = _home(ctx)
    if not home.exists():
        raise click.ClickException(f"no opmem home at {plain(str(home.path))}")
    try:
        stats = home.search_index.stats()
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    click.echo(f"{plain(stats.path)}: {stats.bytes:,} bytes")
    click.echo(f"{stats.sessions} sessions, {stats.turn_rows - stats.dead_rows} turn rows, {stats.record_rows} records")
    if stats.dead_rows:
        click.echo(f"{stats.dead_rows} rows of deleted sessions wait for a rebuild")
