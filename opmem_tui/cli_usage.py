"""`opmem usage [daily|weekly|monthly|session|project|agent|model|blocks]`: tokens and cost.

The reports of ccusage, over every agent opmem imports, from the usage index (memory/usage.sqlite;
built with progress when missing). A rich table on a terminal, plain tab-separated lines when
piped, `--json` in ccusage's JSON shape (docs/usage.md).
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from .backend.home import Home
from .backend.model import OpmemError
from .backend.safe_text import plain
from .backend.usage.blocks import DEFAULT_AGENT, Block, block_json, blocks
from .backend.usage.labels import agent_source, labels, project_names
from .backend.usage.reports import JSON_KEYS, REPORTS, Filters, Usage, UsageReport, report, report_json

_DAY = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")


def _home(ctx: click.Context) -> Home:
    obj: Any = ctx.obj
    if isinstance(obj, dict) and isinstance(obj.get("home"), Home):
        return obj["home"]
    return Home()


def _day(value: str | None, flag: str) -> str:
    if not value:
        return ""
    match = _DAY.match(value.strip())
    if match is None:
        raise click.BadParameter(f"{value!r}: a day as YYYY-MM-DD or YYYYMMDD", param_hint=flag)
    return "-".join(match.groups())


def _project_id(home: Home, value: str | None) -> str:
    if not value:
        return ""
    names = project_names(home)
    if value in names:
        return value
    for pid, name in names.items():
        if name == value:
            return pid
    raise click.BadParameter(f"no project {value!r} (see `opmem projects list`)", param_hint="--project")


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        click.echo(f"\rusage index: {done:,}/{total:,} sessions", err=True, nl=done >= total)
    elif done >= total:
        click.echo(f"usage index: {total:,} sessions read", err=True)


def money(cost: float | None, complete: bool = True) -> str:
    if cost is None:
        return "unknown"
    return f"${cost:,.2f}" + ("" if complete else "+")


@click.command("usage")
@click.argument("kind", required=False, default="daily", type=click.Choice([*REPORTS, "blocks"]))
@click.option("--since", help="First day (YYYY-MM-DD or YYYYMMDD).")
@click.option("--until", help="Last day (YYYY-MM-DD or YYYYMMDD).")
@click.option("--project", help="Only this project (name or id).")
@click.option("--agent", help="Only this agent (claude-code or claude, codex, gemini, ...).")
@click.option("--json", "as_json", is_flag=True, help="ccusage's JSON shape (docs/usage.md).")
@click.option("--rebuild", is_flag=True, help="Read every stored session again first (the index is derived).")
@click.pass_context
def usage(
    ctx: click.Context,
    kind: str,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    as_json: bool,
    rebuild: bool,
) -> None:
    """Tokens and cost per day, week, month, session, project, agent or model; `blocks`: Claude's 5-hour blocks.

    Counts are what each agent recorded; costs come from the genai-prices table shipped with opmem
    (offline). A model the table lacks shows as unknown, and a total that misses some ends with "+".
    """
    home = _home(ctx)
    if not home.exists():
        raise click.ClickException(f"no opmem home at {plain(str(home.path))}")
    filters = Filters(
        _day(since, "--since"), _day(until, "--until"), _project_id(home, project), agent_source(agent or "")
    )
    try:
        if rebuild:
            home.usage.rebuild(progress=_progress)
        else:  # catch up with the store: sessions changed or deleted since the last import
            home.usage.refresh(home.sessions.list_sessions().sessions, progress=_progress)
        if kind == "blocks":
            now = time.time()
            if not agent:
                filters = Filters(filters.since, filters.until, filters.project, DEFAULT_AGENT)
            found = blocks(home.usage, now, filters)
            if as_json:
                click.echo(json.dumps({"blocks": [block_json(b, now) for b in found]}, indent=2))
            else:
                _print_blocks(found, now)
            return
        result = report(home.usage, kind, filters)
        names = labels(home, result)
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    if as_json:
        click.echo(json.dumps(report_json(result, names), indent=2))
    else:
        _print_report(result, names)


def _label(kind: str, key: str, names: dict[str, Any]) -> str:
    extra = names.get(key, {})
    if kind == "project":
        return plain(extra.get("projectName") or key or "(no project)")
    if kind == "session":
        return plain(f"{extra.get('title') or key}")
    return plain(key or "(unnamed)")


_HEAD = ("Input", "Output", "Cache Create", "Cache Read", "Total Tokens", "Cost (USD)")


def _cells(u: Usage) -> list[str]:
    return [
        f"{u.input:,}",
        f"{u.output:,}",
        f"{u.cache_write:,}",
        f"{u.cache_read:,}",
        f"{u.total:,}",
        money(u.cost, u.cost_complete),
    ]


def _print_report(result: UsageReport, names: dict[str, Any]) -> None:
    first = JSON_KEYS[result.kind][1]
    heading = {
        "date": "Date",
        "week": "Week",
        "month": "Month",
        "sessionId": "Session",
        "project": "Project",
        "agent": "Agent",
        "model": "Model",
    }[first]
    rows = [
        [_label(result.kind, r.key, names), ", ".join(plain(m) for m in r.models if m), *_cells(r.usage)]
        for r in result.rows
    ]
    total = ["Total", "", *_cells(result.total)]
    if not sys.stdout.isatty():
        click.echo("\t".join([heading, "Models", *_HEAD]))
        for row in [*rows, total]:
            click.echo("\t".join(row))
        return
    table = Table(title=f"opmem usage · {result.kind}", show_footer=False)
    for name in (heading, "Models", *_HEAD):
        table.add_column(name, justify="right" if name in _HEAD else "left", overflow="fold")
    for row in rows:
        table.add_row(*row)
    table.add_section()
    table.add_row(*total, style="bold")
    Console().print(table)
    if not result.total.cost_complete:
        click.echo(
            "+: some replies were of a model the price table lacks; their tokens are counted, their cost is unknown"
        )


def _print_blocks(found: tuple[Block, ...], now: float) -> None:
    def when(ts: float) -> str:
        return datetime.fromtimestamp(ts, UTC).astimezone().strftime("%Y-%m-%d %H:%M")

    lines = []
    for block in found:
        if block.gap:
            lines.append([when(block.start), "(gap)", "", "", ""])
            continue
        state = "ACTIVE" if block.active else ""
        rate = block.burn_rate() if block.active else None
        burn = f"{rate[0]:,.0f} tok/min, ${rate[1]:,.2f}/h" if rate else ""
        lines.append(
            [
                when(block.start),
                state,
                f"{block.usage.total:,}",
                money(block.usage.cost, block.usage.cost_complete),
                burn,
            ]
        )
    heads = ("Block Start", "Status", "Tokens", "Cost (USD)", "Burn Rate")
    if not sys.stdout.isatty():
        click.echo("\t".join(heads))
        for line in lines:
            click.echo("\t".join(line))
        return
    table = Table(title="opmem usage · 5-hour blocks")
    for name in heads:
        table.add_column(name, justify="right" if name in ("Tokens", "Cost (USD)") else "left")
    for line in lines:
        table.add_row(*line)
    Console().print(table)


def register(main: click.Group) -> None:
    main.add_command(usage)
