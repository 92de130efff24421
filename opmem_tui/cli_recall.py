"""The memory on the command line: `opmem mcp`, `opmem core`, `opmem show`, `opmem search`,
`opmem timeline`, `opmem graph`. Every command calls the recall registry (or, for `core`, the
memory's one renderer), so it answers exactly what an agent would get; `--json` prints that
reply, the default is tables for people."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .backend.home import Home
from .backend.memory.records import EVENT_KINDS
from .backend.model import OpmemError
from .backend.privacy import redact_text
from .backend.recall.context import Recall, recall_for
from .backend.recall.core_block import blocks_index, core_block, has_content
from .backend.recall.injection import write_block
from .backend.recall.registry import call
from .backend.recall.search_tool import MAX_RESULTS
from .backend.safe_text import plain
from .cli_output import print_table

MAX_PROBLEMS_SHOWN = 5


def _out() -> Console:
    # Built per command, so the width follows the terminal (or COLUMNS) of this run; piped,
    # lines are never wrapped (tables go through print_table).
    console = Console(soft_wrap=False)
    console.soft_wrap = not console.is_terminal
    return console


def _err() -> Console:
    return Console(stderr=True, soft_wrap=True)


def _home(ctx: click.Context) -> Home:
    obj = ctx.find_object(dict) or {}
    home = obj.get("home")
    return home if isinstance(home, Home) else Home()


def _fail(message: str) -> None:
    _err().print(Text(f"opmem: {plain(message)}", style="red"))
    sys.exit(1)


def _recall(ctx: click.Context, project: str | None = None, agent: str | None = None) -> Recall:
    try:
        return recall_for(_home(ctx), cwd=Path.cwd(), project=project, agent=agent)
    except OpmemError as exc:
        _fail(str(exc))
        raise  # unreachable: _fail exits


def _ask(recall: Recall, name: str, as_json: bool, **args: Any) -> dict[str, Any]:
    """Call a tool; on an error reply print it (JSON or a message) and exit 1."""
    reply = call(recall, name, {k: v for k, v in args.items() if v is not None})
    if "error" in reply:
        if as_json:
            click.echo(json.dumps(reply, ensure_ascii=False))
            sys.exit(1)
        error = reply["error"]
        hint = f" (did you mean: {', '.join(error['did_you_mean'])}?)" if error.get("did_you_mean") else ""
        _fail(_as_options(name, error["message"]) + hint)
    if as_json:
        click.echo(json.dumps(reply, ensure_ascii=False))
    return reply


def _as_options(tool: str, message: str) -> str:
    """A tool's argument error in the command's words: "memory_open_session: turn: 0 is less
    than the minimum of 1" -> "--turn: 0 is less than the minimum of 1"."""
    if not message.startswith(f"{tool}: "):
        return message
    argument, _, rest = message[len(tool) + 2 :].partition(": ")
    return f"--{argument.replace('_', '-')}: {rest}" if rest and argument.isidentifier() else message[len(tool) + 2 :]


def _when(value: str | None) -> str:
    return value[:16].replace("T", " ") if value else "-"


def _text(value: Any) -> Text:
    """Untrusted text as plain rich Text: escapes stripped, never parsed as markup."""
    return Text(redact_text(plain(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))))


def _memory_problems(recall: Recall) -> None:
    """Lines of the memory logs that could not be used (skipped): named on stderr, file:line, so a
    damaged log is found rather than silently answering with less."""
    try:
        problems = recall.memory.problems()
    except OpmemError:
        return
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        _err().print(Text(f"opmem: warning: {plain(str(problem))} (skipped)", style="yellow"))
    if len(problems) > MAX_PROBLEMS_SHOWN:
        _err().print(Text(f"opmem: warning: … and {len(problems) - MAX_PROBLEMS_SHOWN} more", style="yellow"))


def _paging(reply: dict[str, Any]) -> None:
    if reply.get("next_page") is not None:
        _err().print(
            Text(f"page {reply['page'] + 1} of {reply['pages']}: --page {reply['next_page'] + 1} for more", style="dim")
        )


@click.command("mcp")
@click.option("--project", help="Answer for this project (default: the project of the current folder).")
@click.option("--agent", help="The agent id whose agent-scoped memory is visible too.")
@click.pass_context
def mcp_command(ctx: click.Context, project: str | None, agent: str | None) -> None:
    """Serve the memory tools over MCP (stdio), for Claude Code, Codex, Gemini CLI..."""
    from .mcp_server import serve

    serve(_recall(ctx, project, agent))


@click.command("core")
@click.option("--project", help="This project's block (default: the project of the current folder, else global).")
@click.option(
    "--write",
    "target",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the block in this file (CLAUDE.md, AGENTS.md, GEMINI.md) between marker comments.",
)
@click.pass_context
def core_command(ctx: click.Context, project: str | None, target: Path | None) -> None:
    """The core memory block agents get (core.md): printed, or kept in an instruction file."""
    recall = _recall(ctx, project)
    _memory_problems(recall)
    outside = target is None and not (project or recall.scope.project_id)
    try:
        block = core_block(recall)
        index = blocks_index(recall) if outside else ""  # outside any project: which blocks there are
    except OpmemError as exc:
        _fail(str(exc))
        return
    if target is None:
        if outside:
            if not has_content(block):
                click.echo(index, nl=False)
                return
            _err().print(Text(index.rstrip("\n"), style="dim"))
        click.echo(block, nl=not block.endswith("\n"))
        return
    try:
        changed = write_block(target, block)
    except OpmemError as exc:
        _fail(str(exc))
        return
    _err().print(Text(f"{'updated' if changed else 'unchanged'}: {target}", style="dim"))


@click.command("search")
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, MAX_RESULTS), default=10, show_default=True, help="How many hits.")
@click.option("--since", help="From this date: 2025-06-01, '2 weeks ago', 'yesterday'.")
@click.option("--until", help="Up to this date.")
@click.option("--project", help="Answer for this project (default: the project of the current folder).")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True, help="Which page (1: the first).")
@click.option("--json", "as_json", is_flag=True, help="Print the tool's JSON reply.")
@click.pass_context
def search_command(
    ctx: click.Context,
    query: str,
    k: int,
    since: str | None,
    until: str | None,
    project: str | None,
    page: int,
    as_json: bool,
) -> None:
    """Search sessions and the distilled memory, best first, each hit with its source (memory_search)."""
    recall = _recall(ctx, project)
    reply = _ask(recall, "memory_search", as_json, query=query, k=k, since=since, until=until, page=page - 1)
    if as_json:
        return
    table = Table(show_edge=False, expand=True)
    table.add_column("when", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("snippet", ratio=3, overflow="fold")  # shares the width: a long source cannot squeeze it
    table.add_column("source", ratio=2, overflow="fold")
    for hit in reply["hits"]:  # best first
        source = _source(hit)
        if hit.get("node"):
            source.append(f" node {plain(hit['node'])}", style="dim")
        table.add_row(_when(hit.get("time")), hit["kind"], _text(hit["snippet"]), source)
    print_table(_out(), table)
    if reply.get("note"):
        _err().print(Text(reply["note"], style="dim"))
    elif not reply["hits"]:
        _err().print(Text("no hits", style="dim"))
    _paging(reply)


@click.command("show")
@click.argument("session_id")
@click.option("--turn", type=click.IntRange(min=1), help="Show this turn's messages (default: the list of turns).")
@click.option("--branch", help="A branch name or head node id (default: the session's current branch).")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True, help="Which page (1: the first).")
@click.option("--json", "as_json", is_flag=True, help="Print the tool's JSON reply.")
@click.pass_context
def show_command(
    ctx: click.Context, session_id: str, turn: int | None, branch: str | None, page: int, as_json: bool
) -> None:
    """A session's turns, or one turn's messages with tool calls and results (memory_open_session)."""
    recall = _recall(ctx)
    reply = _ask(recall, "memory_open_session", as_json, session_id=session_id, turn=turn, branch=branch, page=page - 1)
    if as_json:
        return
    session = reply["session"]
    head = f"{session['title']}  ·  {session['id']}  ·  {session['source']}  ·  {session['turns']} turns"
    head += f"  ·  branch {session['branch']}" + (
        f"  ·  project {session['project']}" if session.get("project") else ""
    )
    _out().print(_text(head), style="bold")
    if turn is None:
        _print_turns(reply)
    else:
        _print_messages(reply)
    _paging(reply)


def _print_turns(reply: dict[str, Any]) -> None:
    table = Table(show_edge=False)
    for column in ("turn", "time", "user", "tools", "commit", "project commits"):
        table.add_column(column, overflow="fold", no_wrap=column != "user", ratio=1 if column == "user" else None)
    for line in reply["turn_list"]:
        table.add_row(
            str(line["turn"]),
            _when(line.get("time")),
            _text(line["user"]),
            str(line.get("tools", "")),
            line.get("commit", ""),
            ", ".join(line.get("project_commits", ())),
        )
    print_table(_out(), table)


def _print_messages(reply: dict[str, Any]) -> None:
    commits = ", ".join(f"{c['commit']} ({c['project']})" for c in reply.get("project_commits", ()))
    _out().print(
        Text(f"turn {reply['turn']}  ·  {_when(reply.get('time'))}" + (f"  ·  made {commits}" if commits else "")),
        style="cyan",
    )
    out = _out()
    if not out.is_terminal:  # piped: each message whole, under its speaker
        for message in reply["messages"]:
            if message["role"] == "tool":
                out.print(Text(f"tool {plain(message['tool'])}:"), highlight=False)
                if "input" in message:
                    out.print(_text(message["input"]), highlight=False)
                out.print(Text("→ ").append(_text(message.get("result", ""))), highlight=False)
            else:
                out.print(Text(f"{message['role']}:"), highlight=False)
                out.print(_text(message.get("text", "")), highlight=False)
        return
    table = Table(show_edge=False, show_lines=True, expand=True)
    table.add_column("who", no_wrap=True)
    table.add_column("message", overflow="fold", ratio=1)
    for message in reply["messages"]:
        if message["role"] == "tool":
            who = Text(f"tool {plain(message['tool'])}")
            body = Text()
            if "input" in message:
                body.append(_text(message["input"]))
                body.append("\n→ ", style="dim")
            body.append(_text(message.get("result", "")))
        else:
            who = Text(message["role"])
            body = _text(message.get("text", ""))
        table.add_row(who, body)
    print_table(_out(), table)


def _source(item: dict[str, Any]) -> Text:
    text = item.get("source", "")
    if item.get("turn") is not None:
        text += f" turn {item['turn']}"
    elif item.get("commit"):  # a project commit with no session behind it
        text += f" commit {item['commit']}"
    return Text(plain(text), style="dim")


@click.command("timeline")
@click.option("--entity", help="Only events about this entity (id, name or alias).")
@click.option("--since", help="From this date: 2025-06-01, '2 weeks ago', 'yesterday'.")
@click.option("--until", help="Up to this date.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(EVENT_KINDS), help="Event kinds (repeatable).")
@click.option("--project", help="Answer for this project (default: the project of the current folder).")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True, help="Which page (1: the first).")
@click.option("--json", "as_json", is_flag=True, help="Print the tool's JSON reply.")
@click.pass_context
def timeline_command(
    ctx: click.Context,
    entity: str | None,
    since: str | None,
    until: str | None,
    kinds: tuple[str, ...],
    project: str | None,
    page: int,
    as_json: bool,
) -> None:
    """What happened, newest first, from the distilled memory (memory_timeline)."""
    recall = _recall(ctx, project)
    _memory_problems(recall)
    args = {"entity": entity, "since": since, "until": until, "kinds": list(kinds) or None, "page": page - 1}
    reply = _ask(recall, "memory_timeline", as_json, **args)
    if as_json:
        return
    table = Table(show_edge=False, expand=True)
    table.add_column("when", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    # both flexible: a long source (session ids run to 80 characters) must not squeeze the text to one letter
    table.add_column("what", ratio=3, overflow="fold")
    table.add_column("source", ratio=2, overflow="fold")
    for event in reply["events"]:
        table.add_row(_when(event["time"]), event["kind"], _text(event["summary"]), _source(event))
    print_table(_out(), table)
    if not reply["events"]:
        _err().print(Text("no events in memory for this question", style="dim"))
    _hidden(reply)
    _paging(reply)


@click.command("graph")
@click.argument("entity")
@click.option("--hops", type=click.IntRange(1, 3), default=2, show_default=True)
@click.option("--as-of", "as_of", help="The graph as it stood at this date.")
@click.option("--project", help="Answer for this project (default: the project of the current folder).")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True, help="Which page (1: the first).")
@click.option("--json", "as_json", is_flag=True, help="Print the tool's JSON reply.")
@click.pass_context
def graph_command(
    ctx: click.Context, entity: str, hops: int, as_of: str | None, project: str | None, page: int, as_json: bool
) -> None:
    """What is known about an entity: its relations in the knowledge graph (memory_graph_neighbors)."""
    recall = _recall(ctx, project)
    _memory_problems(recall)
    reply = _ask(recall, "memory_graph_neighbors", as_json, entity=entity, hops=hops, as_of=as_of, page=page - 1)
    if as_json:
        return
    center = reply["entity"]
    head = f"{center['name']}  ({center['type']}, {center['id']})"
    if center.get("aliases"):
        head += "  also: " + ", ".join(center["aliases"])
    _out().print(_text(head), style="bold")
    table = Table(show_edge=False, expand=True)
    table.add_column("hop", no_wrap=True)
    table.add_column("fact", ratio=3, overflow="fold")  # shares the width with the source, as above
    table.add_column("conf", no_wrap=True)
    table.add_column("since", no_wrap=True)
    table.add_column("source", ratio=2, overflow="fold")
    for edge in reply["edges"]:
        table.add_row(
            str(edge["hop"]), _text(edge["fact"]), f"{edge['confidence']:.2f}", _when(edge["since"]), _source(edge)
        )
    print_table(_out(), table)
    _hidden(reply)
    _paging(reply)


def _hidden(reply: dict[str, Any]) -> None:
    if reply.get("hidden_superseded"):
        _err().print(Text(f"{reply['hidden_superseded']} superseded record(s) hidden", style="dim"))
    for key in ("more_events", "more_edges"):
        if reply.get(key):
            _err().print(Text(reply[key], style="dim"))


def register(group: click.Group) -> None:
    """Add the recall commands to the `opmem` command group."""
    for command in (mcp_command, core_command, show_command, search_command, timeline_command, graph_command):
        group.add_command(command)
