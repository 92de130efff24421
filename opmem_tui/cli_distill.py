"""`opmem distill`, `opmem sleep`, `opmem flush`, `opmem hooks install|uninstall claude`, `opmem memory unmerge`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from .backend.agents.claude_hooks import (
    HooksError,
    flush_command,
    install,
    installed_commands,
    read_hook_input,
    uninstall,
)
from .backend.distill.model import Progress, RunReport
from .backend.distill.pipeline import RunOptions, run
from .backend.distill.pipeline import flush as flush_sessions
from .backend.distill.sleep import sleep as run_sleep
from .backend.home import Home
from .backend.importers import run_import
from .backend.importers.session_ids import legacy_session_id, session_id_for
from .backend.model import OpmemError, check_session_id
from .backend.safe_text import plain
from .cli_signals import stop_on_terminate

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def _home(ctx: click.Context) -> Home:
    obj = ctx.find_object(dict) or {}
    home = obj.get("home")
    return home if isinstance(home, Home) else Home()


def _fail(message: str, code: int = 1) -> None:
    err_console.print(Text(f"opmem: {plain(message)}", style="red"))
    sys.exit(code)


_last_shown = [0.0]


def _progress(step: Progress) -> None:
    """A line on stderr now and then (at most one a second, and the last one of each stage)."""
    if not step.total or step.stage not in ("distil", "project", "relink", "reconcile"):
        return
    now = time.monotonic()
    if step.done < step.total and now - _last_shown[0] < 1.0:
        return
    _last_shown[0] = now
    err_console.print(Text(f"  {step.stage} {step.done}/{step.total} {plain(step.detail)[:60]}"), highlight=False)


def _check_sessions(home: Home, sessions: tuple[str, ...]) -> None:
    for sid in sessions:
        check_session_id(sid)
        if not home.sessions.exists(sid):
            raise OpmemError(f"no session {sid!r} in {home.sessions_dir}")


def _print_report(report: RunReport) -> None:
    console.print(Text(report.line()), highlight=False)
    for note in report.notes:
        console.print(Text(f"  {plain(note)}"), highlight=False)


@click.command("distill")
@click.option("--session", "sessions", multiple=True, metavar="ID", help="Only this session (repeatable).")
@click.option("--llm/--rules", "llm", default=None, help="Extractor for this run (default: [distill] extractor).")
@click.option("--again", is_flag=True, help="Re-distil from the first node; newer copies supersede older ones.")
@click.option("--wait", type=float, default=30.0, show_default=True, help="Seconds to wait for a running distillation.")
@click.option("--quiet", "-q", is_flag=True, help="Only the summary line.")
@click.option(
    "--dry-run-llm",
    is_flag=True,
    help="Print what the LLM extractor would send (one JSON request a line, redacted); send and write nothing.",
)
@click.pass_context
@stop_on_terminate
def distill(
    ctx: click.Context,
    sessions: tuple[str, ...],
    llm: bool | None,
    again: bool,
    wait: float,
    quiet: bool,
    dry_run_llm: bool,
) -> None:
    """Distil what is new in the sessions (and project commits) into the memory."""
    home = _home(ctx)
    if dry_run_llm:
        _dry_run(home, sessions)
        return
    try:
        _check_sessions(home, sessions)
        options = RunOptions(sessions=sessions or None, llm=llm, again=again, lock_timeout=wait)
        report = run(home, options, progress=None if quiet else _progress)
    except OpmemError as exc:
        _fail(str(exc))
        return
    except KeyboardInterrupt:
        _fail("interrupted; what was written stays, the rest is distilled next time", 130)
        return
    _print_report(report)


def _dry_run(home: Home, sessions: tuple[str, ...]) -> None:
    from .backend.distill.llm_dry_run import dry_run
    from .backend.llm_cli.runner import dumps_request

    try:
        _check_sessions(home, sessions)
        result = dry_run(home, sessions or None)
    except OpmemError as exc:
        _fail(str(exc))
        return
    for request in result.requests:
        click.echo(plain(dumps_request(request)))
    summary = (
        f"dry run: {len(result.requests)} LLM calls via {result.via} for {result.sessions} sessions, "
        f"{result.prompt_bytes:,} bytes of prompt, about {result.tokens:,} tokens with the replies' caps; nothing sent"
    )
    err_console.print(Text(summary + (f"; a real run would stop: {result.stopped}" if result.stopped else "")))


@click.command("sleep")
@click.option("--wait", type=float, default=30.0, show_default=True, help="Seconds to wait for a running distillation.")
@click.pass_context
@stop_on_terminate
def sleep_command(ctx: click.Context, wait: float) -> None:
    """Consolidate now: distil, re-link, reconcile, rebuild core.md and views, pack session repos."""
    try:
        report = run_sleep(_home(ctx), progress=_progress, lock_timeout=wait)
    except OpmemError as exc:
        _fail(str(exc))
        return
    console.print(Text(report.line()), highlight=False)
    for note in report.notes:
        console.print(Text(f"  {plain(note)}"), highlight=False)


def _hook_sessions(home: Home, raw: str) -> list[str]:
    """The opmem sessions of the Claude Code session a hook names, imported first so nothing is missed."""
    native, transcript = read_hook_input(raw)
    if transcript and Path(transcript).is_file():
        report = run_import(home, "claude", [transcript])
        for warning in report.warnings:
            err_console.print(Text(f"opmem: {plain(str(warning))}", style="yellow"))
    trunk = _stored_id(home, native)
    if trunk is None:
        raise OpmemError(f"Claude Code session {native} is not in the store (transcript {transcript or 'not given'})")
    ids = [trunk]
    children = home.sessions.get_meta(trunk).extra.get("children")
    if isinstance(children, dict):
        ids += [c for c in (_stored_id(home, str(k)) for k in children) if c is not None]
    return ids


def _stored_id(home: Home, native: str) -> str | None:
    """The opmem id a Claude Code session was imported under (this version's, or an earlier one's)."""
    for sid in (session_id_for("claude-code", native), legacy_session_id("claude-code", native)):
        if home.sessions.exists(sid):
            return sid
    return None


@click.command("flush")
@click.option("--session", "sessions", multiple=True, metavar="ID", help="The session to distil now (repeatable).")
@click.option("--hook", type=click.Choice(["claude"]), help="Called by an agent hook: read its JSON on stdin.")
@click.option("--wait", type=float, default=60.0, show_default=True, help="Seconds to wait for a running distillation.")
@click.pass_context
def flush(ctx: click.Context, sessions: tuple[str, ...], hook: str | None, wait: float) -> None:
    """Distil a session now, before its agent compacts or ends it (the pre-compress flush)."""
    home = _home(ctx)
    try:
        ids = list(sessions)
        if hook:
            ids += _hook_sessions(home, sys.stdin.read())
        if not ids:
            raise OpmemError(
                "name a session: opmem flush --session ID (or --hook claude with the hook's JSON on stdin)"
            )
        _check_sessions(home, tuple(ids))
        report = flush_sessions(home, ids, lock_timeout=wait)
    except OpmemError as exc:
        _fail(str(exc))
        return
    _print_report(report)


@click.group("hooks")
def hooks() -> None:
    """Agent hooks that call `opmem flush` before a conversation is compacted or ended."""


@hooks.command("install")
@click.argument("agent", type=click.Choice(["claude"]))
@click.option("--settings", type=click.Path(dir_okay=False, path_type=Path), help="settings.json to change.")
@click.pass_context
def hooks_install(ctx: click.Context, agent: str, settings: Path | None) -> None:
    """Register `opmem flush` as Claude Code's PreCompact and SessionEnd hooks (user settings.json)."""
    home = _home(ctx)
    try:
        change = install(flush_command(home.path), settings)
    except HooksError as exc:
        _fail(str(exc))
        return
    if not change.changed:
        console.print(Text(f"already installed in {change.settings}"), highlight=False)
        return
    console.print(Text(f"installed in {change.settings}: {', '.join(change.added)}"), highlight=False)
    if change.backup is not None:
        console.print(Text(f"  the file as it was: {change.backup}"), highlight=False)


@hooks.command("uninstall")
@click.argument("agent", type=click.Choice(["claude"]))
@click.option("--settings", type=click.Path(dir_okay=False, path_type=Path), help="settings.json to change.")
@click.pass_context
def hooks_uninstall(ctx: click.Context, agent: str, settings: Path | None) -> None:
    """Remove exactly the hook entries `opmem hooks install claude` added."""
    home = _home(ctx)
    removed: list[str] = []
    try:
        for command in dict.fromkeys([flush_command(home.path), *installed_commands(settings)]):
            change = uninstall(command, settings)
            removed += change.removed
    except HooksError as exc:
        _fail(str(exc))
        return
    if not removed:
        console.print(Text("no opmem hooks were installed"), highlight=False)
        return
    console.print(Text(f"removed: {', '.join(dict.fromkeys(removed))}"), highlight=False)


@click.command("unmerge")
@click.argument("alias_id")
@click.pass_context
def unmerge(ctx: click.Context, alias_id: str) -> None:
    """Undo an alias merge (its id is shown in the entity's view and by the graph explorer)."""
    home = _home(ctx)
    try:
        record = home.memory.unmerge(alias_id, reason="opmem memory unmerge")
    except OpmemError as exc:
        _fail(str(exc))
        return
    if record is None:
        console.print(Text(f"{alias_id} was already undone"), highlight=False)
        return
    console.print(Text(f"undone: {alias_id} (the two entities are apart again; it will not be merged again)"))


def register(main: click.Group) -> None:
    main.add_command(distill)
    main.add_command(sleep_command)
    main.add_command(flush)
    main.add_command(hooks)
    memory = main.commands.get("memory")
    if not isinstance(memory, click.Group):
        memory = click.Group("memory", help="Maintain the memory: undo alias merges, ...")
        main.add_command(memory)
    memory.add_command(unmerge)
