"""`opmem projects ...`: bind folders as projects and read their git history from the shell.

`list`, `log` and `warnings` take `--json` for scripts: one JSON object on stdout.
"""

from __future__ import annotations

import dataclasses
import os
import time

import click

from opmem_tui.backend import naming
from opmem_tui.backend.home import Home
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.privacy import redact_text
from opmem_tui.backend.projects.known import unbound_projects
from opmem_tui.backend.projects.registry import STATUSES, ProjectRegistry
from opmem_tui.backend.safe_text import plain
from opmem_tui.cli_sessions import dump_json


def _plain(text: str) -> str:
    """Commit and session text is untrusted: no escape sequences reach the terminal."""
    return redact_text(plain(text)).replace("\n", " ")


def _home(ctx: click.Context) -> Home:
    """The Home the `opmem` group put in ctx.obj; $OPMEM_HOME when the group runs on its own."""
    obj = ctx.find_root().obj
    home = obj.get("home") if isinstance(obj, dict) else None
    return home if isinstance(home, Home) else Home()


def _registry(ctx: click.Context) -> ProjectRegistry:
    return _home(ctx).projects


def _fail(exc: OpmemError) -> click.ClickException:
    return click.ClickException(_plain(str(exc)))


@click.group("projects")
def projects() -> None:
    """Folders bound as projects: their status, sessions and git history."""


@projects.command("list")
@click.option("--json", "as_json", is_flag=True, help='Print JSON: {"projects": [...]}.')
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List bound projects, then those the memory knows only from sessions (a folder no project is
    bound to: a plain folder here, or one not on this machine)."""
    home = _home(ctx)
    try:
        items = home.projects.list_projects()
        known = unbound_projects(home)
    except OpmemError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(
            dump_json(
                {
                    "projects": [p.to_json() for p in items],
                    "known_from_sessions": [
                        {"id": k.id, "name": k.name, "workdir": k.workdir, "where": k.where} for k in known
                    ],
                }
            )
        )
        return
    if not items and not known:
        click.echo("no projects bound (opmem projects add PATH)")
        return
    width = max(len(p.id) for p in (*items, *known))
    for p in items:
        gone = "" if os.path.isdir(p.workdir) else "  (not on this machine)"
        click.echo(
            f"{p.id:<{width}}  {p.status:<6}  {len(p.sessions):>4} sessions  {_plain(p.workdir)}  {_plain(p.name)}{gone}"
        )
    if not items:
        click.echo("no projects bound (opmem projects add PATH)")
    if known:
        click.echo("known from sessions only (opmem core --project ID shows one's memory):")
        for k in known:
            click.echo(f"{k.id:<{width}}  {k.where}  {_plain(k.workdir)}  {_plain(k.name)}")


@projects.command("add")
@click.argument("path", type=click.Path(file_okay=False, exists=True))
@click.option("--name", default=None, help="Display name (default: the folder name).")
@click.pass_context
def add_cmd(ctx: click.Context, path: str, name: str | None) -> None:
    """Bind PATH as a project (reuses its git repository, or runs git init)."""
    try:
        project = _registry(ctx).resolve_project(path, name)
    except OpmemError as exc:
        raise _fail(exc) from None
    click.echo(f"{project.id}  {_plain(project.workdir)}")


def _project_id(ctx: click.Context, text: str | None) -> str:
    """The project `text` names (id, name or unique prefix), else the current folder's (backend/naming)."""
    try:
        return naming.project(_home(ctx), text).id
    except OpmemError as exc:
        raise _fail(exc) from None


@projects.command("status")
@click.argument("project_id", metavar="PROJECT")
@click.argument("status", type=click.Choice(STATUSES))
@click.pass_context
def status_cmd(ctx: click.Context, project_id: str, status: str) -> None:
    """Set a project's status (only active projects get agent commits)."""
    project_id = _project_id(ctx, project_id)
    try:
        project = _registry(ctx).set_status(project_id, status)
    except OpmemError as exc:
        raise _fail(exc) from None
    click.echo(f"{project.id}  {project.status}")


@projects.command("unbind")
@click.argument("project_id", metavar="PROJECT")
@click.pass_context
def unbind_cmd(ctx: click.Context, project_id: str) -> None:
    """Forget a project. Its folder and .git are left exactly as they are."""
    project_id = _project_id(ctx, project_id)
    try:
        project = _home(ctx).unbind_project(project_id)
    except OpmemError as exc:
        raise _fail(exc) from None
    click.echo(f"unbound {project.id} ({_plain(project.workdir)} untouched)")


@projects.command("log")
@click.argument("project_id", metavar="[PROJECT]", required=False)
@click.option("--agent-only", is_flag=True, help="Only commits made by agents through opmem.")
@click.option("--limit", default=30, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--after", default=None, help="Continue after this commit (the last one shown).")
@click.option("--json", "as_json", is_flag=True, help='Print JSON: {"commits": [...], "next": <oid for --after>}.')
@click.pass_context
def log_cmd(
    ctx: click.Context, project_id: str | None, agent_only: bool, limit: int, after: str | None, as_json: bool
) -> None:
    """A project's commits (by id, name or prefix; default: the current folder's), newest first;
    agent commits are marked with *."""
    project_id = _project_id(ctx, project_id)
    registry = _registry(ctx)
    try:
        commits = registry.log(project_id, limit, agent_only, after=after)
        links = registry.links.by_commit(project_id)
    except OpmemError as exc:
        raise _fail(exc) from None
    if as_json:
        rows = []
        for c in commits:
            row = dataclasses.asdict(c)
            del row["paths"]  # filled only for linking; a log page does not compute them
            link = links.get(c.oid)
            row["link"] = link.to_json() if link is not None else None
            rows.append(row)
        following = commits[-1].oid if len(commits) == limit else None
        click.echo(dump_json({"project_id": project_id, "commits": rows, "next": following}))
        return
    for c in commits:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.time))
        mark = "*" if c.is_agent else " "
        link = links.get(c.oid)
        where = f"  [{link.session_id} turn {link.turn}]" if link and not c.is_agent else ""
        who = f"agent {c.model}" if c.is_agent else c.author_name
        click.echo(_plain(f"{c.short} {mark} {when}  {who[:24]:<24}  {c.summary}{where}"))


@projects.command("warnings")
@click.argument("project_id", metavar="[PROJECT]", required=False)
@click.option("--json", "as_json", is_flag=True, help='Print JSON: {"warnings": [...]}, newest first.')
@click.pass_context
def warnings_cmd(ctx: click.Context, project_id: str | None, as_json: bool) -> None:
    """Turns whose changes were not committed, and why (every project's unless one is named)."""
    if project_id is not None:
        project_id = _project_id(ctx, project_id)
    try:
        found = _registry(ctx).warnings(project_id)
    except OpmemError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(dump_json({"warnings": [dataclasses.asdict(w) for w in found]}))
        return
    if not found:
        click.echo("no warnings")
    for w in found:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(w.created_at))
        click.echo(_plain(f"{w.id}  {when}  {w.project_id}  {w.message}"))
