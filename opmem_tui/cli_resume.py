"""`opmem resume SESSION --in AGENT` (go on with a session in another agent) and `opmem handoff
SESSION` (a brief of it for a fresh agent, printed or handed to the agent as its first prompt).

Both hand out text derived from a session, so both pass the privacy gate: a resume is redacted
unless `--raw`, a brief always is. docs/resume.md.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import click

from .backend.handoff import AGENT_COMMANDS, DEFAULT_BUDGET, agent_command, handoff
from .backend.home import Home
from .backend.model import OpmemError
from .backend.recall.handoff_tool import core_for
from .backend.resume import TARGETS, resume
from .backend.safe_text import plain
from .cli_sessions import resolve_session


def _home(ctx: click.Context) -> Home:
    obj = ctx.find_root().obj
    home = obj.get("home") if isinstance(obj, dict) else None
    return home if isinstance(home, Home) else Home()


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(plain(str(exc)).replace("\n", " "))


def _shell(cwd: str, command: tuple[str, ...]) -> str:
    """The line to paste; the folder comes from the session, so it is made terminal-safe too."""
    return plain(f"cd {shlex.quote(cwd)} && {shlex.join(command)}" if cwd else shlex.join(command))


@click.command("resume")
@click.argument("session_id", metavar="SESSION")
@click.option("--in", "target", type=click.Choice(sorted(TARGETS)), required=True, help="The agent to go on in.")
@click.option("--turn", type=int, default=None, help="Up to this turn (default: all of them).")
@click.option(
    "--branch", default=None, help="Along this branch (main, retry-…, or a head node id); default: the current one."
)
@click.option("--cwd", "cwd", default=None, help="The folder to go on in (default: the session's own, else this one).")
@click.option("--raw", is_flag=True, help="Carry secrets as they are (default: [secret:kind#id] markers).")
@click.pass_context
def resume_cmd(
    ctx: click.Context, session_id: str, target: str, turn: int | None, branch: str | None, cwd: str | None, raw: bool
) -> None:
    """Write a session into another agent's own store, under a new id, and print the command that continues it."""
    try:
        home = _home(ctx)
        session_id = resolve_session(home, session_id)
        if not home.visible(session_id):  # its copy would come back as a session nobody marked private
            raise OpmemError(f"session {session_id} is private or excluded from the memory: it is not written out")
        written = resume(home.sessions, session_id, target, turn=turn, branch=branch, raw=raw, cwd=cwd)
    except OpmemError as exc:
        raise _fail(exc) from None
    note = " (raw: secrets carried)" if raw else ""
    click.echo(plain(f"wrote {written.path} for {target}{note}"), err=True)
    click.echo(_shell(written.cwd, written.command))


@click.command("handoff")
@click.argument("session_id", metavar="SESSION")
@click.option("--budget", type=int, default=DEFAULT_BUDGET, show_default=True, help="Most tokens (UTF-8 bytes / 3).")
@click.option(
    "--to",
    "agent",
    type=click.Choice(sorted(AGENT_COMMANDS)),
    default=None,
    help="Start this agent with the brief as its first prompt.",
)
@click.option("--dry-run", is_flag=True, help="With --to: print the agent's command instead of running it.")
@click.pass_context
def handoff_cmd(ctx: click.Context, session_id: str, budget: int, agent: str | None, dry_run: bool) -> None:
    """A brief of a session for a fresh agent: goal, done, files, decisions, failures, what is open."""
    try:
        home = _home(ctx)
        session_id = resolve_session(home, session_id)
        brief = handoff(home, session_id, budget, core_for(home, session_id))
        command = agent_command(agent, brief.text) if agent else None
    except OpmemError as exc:
        raise _fail(exc) from None
    left = f", {brief.left_out} lines left out" if brief.left_out else ""
    if command is None:
        sys.stdout.write(brief.text)
        sys.stdout.flush()
        click.echo(f"{brief.tokens} of {brief.budget} tokens{left}", err=True)
        return
    cwd = brief.cwd if brief.cwd and os.path.isdir(brief.cwd) else os.getcwd()
    if dry_run:
        click.echo(_shell(cwd, command))
        return
    program = shutil.which(command[0])
    if program is None:
        raise _fail(
            OpmemError(f"{command[0]} is not installed (not on PATH); `opmem handoff {session_id}` prints the brief")
        )
    click.echo(plain(f"starting {command[0]} in {cwd} with the brief ({brief.tokens} tokens{left})"), err=True)
    sys.exit(subprocess.call([program, *command[1:]], cwd=cwd))


def register(main: click.Group) -> None:
    main.add_command(resume_cmd)
    main.add_command(handoff_cmd)
