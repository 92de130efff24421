"""`opmem sync init REMOTE`, `opmem sync` (pull, then push), `opmem sync status`."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from .backend.home import Home
from .backend.model import OpmemError
from .backend.privacy import redact_text, redact_value
from .backend.safe_text import plain


def _home(ctx: click.Context) -> Home:
    obj: Any = ctx.obj
    return obj["home"] if isinstance(obj, dict) and isinstance(obj.get("home"), Home) else Home()


def _fail(message: str) -> None:
    click.echo(f"opmem sync: {plain(message)}", err=True)
    sys.exit(1)


@click.group("sync", invoke_without_command=True)
@click.pass_context
def sync(ctx: click.Context) -> None:
    """Sync sessions and memory with a git remote: pull what other machines pushed, then push."""
    if ctx.invoked_subcommand is not None:
        return
    from .backend.sync import Sync

    home = _home(ctx)
    if not home.exists():
        _fail(f"no opmem home at {home.path}")
    try:
        report = Sync(home).run()
    except OpmemError as exc:
        _fail(str(exc))
        return
    for line in report.lines():
        click.echo(plain(line))
    for problem in report.problems:
        click.echo(f"warning: {plain(problem)}", err=True)


def local_path(remote: str) -> Path | None:
    """The folder a remote names when it is a path on this machine (not ssh://, https://, nor
    git's `host:path`), else None."""
    if remote.startswith("file://"):
        return Path(remote[len("file://") :])
    if "://" in remote or re.match(r"^[^/]+:", remote):
        return None
    return Path(remote).expanduser()


def _create_bare(folder: Path, create: bool) -> None:
    """A missing local remote: made a bare repository when asked (`--create`, or yes at the prompt)."""
    import pygit2

    asked = create or (
        sys.stdin.isatty() and click.confirm(f"{folder} does not exist. Create a bare git repository there?")
    )
    if not asked:
        _fail(f"{folder} does not exist; `opmem sync init --create {folder}` makes a bare repository there")
    try:
        pygit2.init_repository(str(folder), bare=True, initial_head="main")
    except (pygit2.GitError, OSError) as exc:
        _fail(f"{folder}: could not create a bare repository: {exc}")
    click.echo(f"created a bare repository at {folder}")


@sync.command("init")
@click.argument("remote")
@click.option("--create", is_flag=True, help="A local path that does not exist yet: make a bare repository there.")
@click.pass_context
def sync_init(ctx: click.Context, remote: str, create: bool) -> None:
    """Set the remote (a bare repository path, ssh://..., git@host:path, https://...) and check it answers."""
    from .backend.sync import Sync, machine
    from .backend.sync.gitcli import ls_remote

    home = _home(ctx)
    home.ensure()
    remote = remote.strip()
    if not remote:
        _fail("the remote is empty")
    folder = local_path(remote)
    if folder is not None:
        folder = folder.resolve()  # kept absolute: a sync runs from anywhere
        remote = str(folder)
        if not folder.exists():
            _create_bare(folder, create)
    try:
        refs = ls_remote(Sync(home, remote).outbox_path.parent, remote)
    except OpmemError as exc:
        _fail(str(exc))
        return
    try:
        home.config.set("sync.remote", remote)
        home.config.save()
        Sync(home, remote).forget_remote()  # the next sync starts from the remote as it is
    except OpmemError as exc:
        _fail(str(exc))
    me = machine(home)
    click.echo(
        f"sync remote: {plain(redact_text(remote))} ({len(refs)} opmem ref(s) there); this machine: {plain(me['id'])}"
    )
    click.echo("run `opmem sync` to pull and push")


@sync.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def sync_status(ctx: click.Context, as_json: bool) -> None:
    """The remote, this machine, when it last synced and what it holds from others (no network)."""
    from .backend.sync import Sync

    home = _home(ctx)
    try:
        status = Sync(home).status()
    except OpmemError as exc:
        _fail(str(exc))
        return
    if as_json:
        click.echo(json.dumps(redact_value(status), indent=1))  # the remote URL may carry a token
        return
    if not status["remote"]:
        click.echo("no sync remote: run `opmem sync init REMOTE`")
        return
    last = status["last_sync"]
    when = datetime.fromtimestamp(last).strftime("%Y-%m-%d %H:%M") if last else "never"
    click.echo(f"remote: {plain(redact_text(status['remote']))}")
    click.echo(f"machine: {plain(status['machine'])} · redact: {'on' if status['redact'] else 'off'}")
    click.echo(f"last sync: {when}")
    click.echo(
        f"sessions pushed from here: {status['sessions_pushed']} · pulled from other machines: "
        f"{status['sessions_pulled']} · other machines: {plain(', '.join(status['machines']) or 'none yet')}"
    )
    if status["sessions_deleted_here_on_remote"]:
        click.echo(
            f"deleted here, still on the remote: {status['sessions_deleted_here_on_remote']} session(s) "
            "(deletions do not sync: their refs stay on the remote and the copies other machines pulled stay)"
        )
