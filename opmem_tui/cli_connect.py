"""`opmem connect AGENT`, `opmem disconnect AGENT`, `opmem connect --status`, and
`opmem hook session-start` (the SessionStart hook; `opmem_tui/entry.py` answers it before this
module is imported, this is the same function for `opmem --help` and odd argument orders)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from .backend.agents.connect import AGENTS, Change, FileChange, connect, disconnect, status
from .backend.home import Home
from .backend.model import OpmemError
from .backend.safe_text import plain

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def _home(ctx: click.Context) -> Home:
    obj = ctx.find_object(dict) or {}
    home = obj.get("home")
    return home if isinstance(home, Home) else Home()


def _fail(message: str) -> None:
    err_console.print(Text(f"opmem: {plain(message)}", style="red"))
    sys.exit(1)


# What a change did to a file, in words that cannot be misread ("removed ~/.claude.json" read as
# the file deleted): what opmem's part is, and the file it went into or out of.
_SAID = {
    "added": "added {what} to {path}",
    "updated": "updated {what} in {path}",
    "removed": "took {what} out of {path} (the rest of the file as it was)",
    "deleted": "deleted {path}: opmem had created it for {what}, and nothing else was in it",
    "unchanged": "{path}: {what} already as it should be",
}


def _said(change: FileChange) -> str:
    return _SAID.get(change.action, change.action + " {path} ({what})").format(what=change.what, path=change.path)


def _print_change(change: Change, verb: str) -> None:
    label = AGENTS[change.agent].label
    if not change.changed:
        console.print(Text(f"{label}: already {verb}; nothing changed"), highlight=False)
        return
    console.print(Text(f"{label}: {verb}"), highlight=False)
    for f in change.files:
        console.print(Text(f"  {_said(f)}"), highlight=False)
    backups = [f.backup for f in change.files if f.backup is not None]
    if backups:
        console.print(
            Text(
                f"  the files as they were before opmem first changed them: {', '.join(map(str, dict.fromkeys(backups)))}"
            ),
            highlight=False,
        )


def _offer_llm(home: Home) -> None:
    """A signed-in agent CLI found here (no LLM call made) and no LLM set up: say it can distil."""
    settings = home.config.llm
    if settings.via or settings.base_url.strip():
        return
    from .backend.llm_cli.detect import agent_clis

    ready = [f for f in agent_clis(settings=settings) if f.signed_in]
    if not ready:
        return
    first = ready[0]
    others = f" (also: {', '.join(f.via for f in ready[1:])})" if len(ready) > 1 else ""
    console.print(
        Text(
            f"  tip: {first.via} is signed in here ({first.how}){others}; it can distil a better memory: "
            f'set [llm] via = "{first.via}" and [distill] extractor = "llm" in {home.config.path} (docs/llm.md)'
        ),
        highlight=False,
    )


def _print_status(home: Home) -> None:
    for agent in status(home, Path.home()):
        state = "connected" if agent.connected else "not connected"
        found = "found" if agent.found else "not found"
        console.print(Text(f"{agent.id:<9} {agent.label:<12} {found:<10} {state}"), highlight=False)
        for part in agent.parts:
            mark = "✓" if part.present else "·"
            problem = f"  {part.problem}" if part.problem else ""
            console.print(Text(f"    {mark} {part.what:<12} {part.path}{problem}"), highlight=False)
        for repo_file in agent.in_repo:
            console.print(Text(f"    ✓ project block {repo_file}"), highlight=False)
        if agent.connected:
            console.print(Text(f"    session start: {agent.notes}"), highlight=False)


def _print_usage(home: Home) -> None:
    """What the agents recorded over the last 7 days, by agent: what `memory_usage` answers over MCP."""
    from datetime import date, timedelta

    from .backend.usage.reports import Filters, query

    console.print(
        Text("usage     last 7 days, by agent (memory_usage over MCP; opmem usage for more)"), highlight=False
    )
    index = home.usage
    if index.stale():
        console.print(
            Text("    no usage index yet: `opmem usage` builds it (imports keep it current)"), highlight=False
        )
        return
    since = (date.today() - timedelta(days=6)).isoformat()
    with index.read() as conn:
        result = query(conn, "agent", Filters(since=since))
    if not result.rows:
        console.print(Text("    nothing recorded"), highlight=False)
    for row in result.rows:
        u = row.usage
        cost = "cost unknown" if u.cost is None else f"${u.cost:,.2f}" + ("" if u.cost_complete else "+")
        console.print(Text(f"    {row.key:<14} {u.total:>14,} tokens  {cost}"), highlight=False)


@click.command("connect")
@click.argument("agent", required=False, type=click.Choice(list(AGENTS)))
@click.option("--status", "show_status", is_flag=True, help="Each agent: found, connected, what is registered where.")
@click.option(
    "--in-repo",
    "in_repo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Also write the project's block into this repo's CLAUDE.md / AGENTS.md / GEMINI.md.",
)
@click.pass_context
def connect_command(ctx: click.Context, agent: str | None, show_status: bool, in_repo: Path | None) -> None:
    """Give an agent the memory: the opmem MCP server in its config, the core block at session start."""
    home = _home(ctx)
    try:
        if show_status or agent is None:
            _print_status(home)
            _print_usage(home)
            _offer_llm(home)
            return
        found = next(s.found for s in status(home, Path.home()) if s.id == agent)
        change = connect(home, agent, Path.home(), in_repo=in_repo.absolute() if in_repo else None)
    except OpmemError as exc:
        _fail(str(exc))
        return
    _print_change(change, "connected")
    if not found:
        label = AGENTS[agent].label
        console.print(
            Text(f"  note: {label} was not found here; its config is ready for when it is installed"), highlight=False
        )
    if change.changed:
        console.print(Text(f"  undo: opmem disconnect {agent}"), highlight=False)
    _offer_llm(home)


@click.command("disconnect")
@click.argument("agent", type=click.Choice(list(AGENTS)))
@click.pass_context
def disconnect_command(ctx: click.Context, agent: str) -> None:
    """Remove exactly what `opmem connect AGENT` added to the agent's files."""
    try:
        change = disconnect(_home(ctx), agent, Path.home())
    except OpmemError as exc:
        _fail(str(exc))
        return
    _print_change(change, "disconnected")


@click.group("hook")
def hook() -> None:
    """Commands agents run as hooks (they read the hook's JSON on stdin)."""


@hook.command("session-start")
@click.pass_context
def session_start_command(ctx: click.Context) -> None:
    """Print the SessionStart hook JSON: the core block of the project of the hook's cwd."""
    from .backend.agents.session_start import run

    sys.exit(run(str(_home(ctx).path), sys.stdin, sys.stdout, sys.stderr))


def register(main: click.Group) -> None:
    main.add_command(connect_command)
    main.add_command(disconnect_command)
    main.add_command(hook)
