"""`opmem export SESSION` (a session, by its id or a unique prefix, as HTML, Markdown or JSON to share) and `opmem blame PATH`
(which session turn wrote each line of a file in a bound project).

Both hand out text derived from sessions, so both pass the privacy gate: an export is redacted
unless `--raw`, blame's prompts always are.
"""

from __future__ import annotations

import sys
from itertools import groupby
from pathlib import Path

import click

from .backend.export import FORMATS, export_session, write_export
from .backend.export.session import iso_time
from .backend.home import Home
from .backend.model import OpmemError
from .backend.projects.blame import blame_path, parse_spec
from .backend.projects.blame_records import BlameLine, BlameReport
from .backend.safe_text import plain
from .cli_sessions import dump_json, resolve_session

SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


def _home(ctx: click.Context) -> Home:
    obj = ctx.find_root().obj
    home = obj.get("home") if isinstance(obj, dict) else None
    return home if isinstance(home, Home) else Home()


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(plain(str(exc)).replace("\n", " "))


@click.command("export")
@click.argument("session_id", metavar="SESSION")
@click.option("--turns", "turns", default=None, metavar="A..B", help="Only these turns: A..B, A.., ..B or N.")
@click.option(
    "--branch",
    default=None,
    help="The branch to export: its name (main, retry-…, as the export lists them) or a head node id; default: the current one.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="html: an offline replay in one file; md: a transcript for a pull request; json: the nodes. "
    "Default: from the -o file's suffix, else html.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here (default: stdout).",
)
@click.option("--raw", is_flag=True, help="Do not redact secrets (the export holds them as the session does).")
@click.pass_context
def export_cmd(
    ctx: click.Context,
    session_id: str,
    turns: str | None,
    branch: str | None,
    fmt: str | None,
    output: Path | None,
    raw: bool,
) -> None:
    """Export a session to share: a self-contained HTML replay, a Markdown transcript or JSON.

    Secrets are replaced by [secret:kind#id] markers unless --raw."""
    if fmt is None:
        fmt = SUFFIX_FORMATS.get(output.suffix.lower(), "html") if output is not None else "html"
    try:
        home = _home(ctx)
        session_id = resolve_session(home, session_id)
        text = export_session(home.sessions, session_id, fmt, turns=turns, branch=branch, raw=raw)
        if output is None:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        written = write_export(text, output, private=raw)  # a raw export holds secrets: 0600
    except OpmemError as exc:
        raise _fail(exc) from None
    note = "" if not raw else " (raw: secrets not redacted)"
    click.echo(f"wrote {written} ({len(text.encode('utf-8')):,} bytes, {fmt}){note}", err=True)


def _origin_line(first: BlameLine) -> str:
    o = first.origin
    short = first.commit[:8] if first.commit else "--------"
    if first.commit is None:
        return f"{short}  not committed yet"
    if o is None:
        when = iso_time(first.commit_time)[:16] + " UTC" if first.commit_time else "?"
        return f"{short}  {plain(first.author)} · {when} · not from a session turn"
    facts = [f"session {o.session_id}", f"turn {o.turn}"]
    if o.model:
        facts.append(o.model)
    if o.time:
        facts.append(iso_time(o.time)[:16] + " UTC")
    if o.confidence != "high":
        facts.append(f"{o.confidence} confidence: {o.reason}")
    head = f"{short}  {' · '.join(facts)}"
    if o.prompt:
        head += f"\n          “{o.prompt}”"
    return head


def print_blame(report: BlameReport) -> None:
    width = len(str(report.lines[-1].line)) if report.lines else 1
    for _, group in groupby(report.lines, key=lambda item: (item.commit, item.origin)):
        items = list(group)
        click.echo(_origin_line(items[0]))
        for item in items:
            click.echo(f"    {item.line:>{width}} │ {plain(item.text)}")


@click.command("blame")
@click.argument("spec", metavar="PATH[:LINE[-LINE]]")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print JSON: {"lines": [{"line", "commit", "session", "turn", "prompt", ...}]}.',
)
@click.pass_context
def blame_cmd(ctx: click.Context, spec: str, as_json: bool) -> None:
    """Which session turn wrote each line of a file: its commit (git blame, following moved
    lines) and, for a commit an agent turn made, the session, turn, prompt, model and time."""
    home = _home(ctx)
    try:
        path, first, last = parse_spec(spec)
        report = blame_path(home.projects, home.sessions, path, first, last)
    except OpmemError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(
            dump_json(
                {
                    "project": report.project_id,
                    "path": report.path,
                    "lines": [line.to_json() for line in report.lines],
                    "problems": list(report.problems),
                }
            )
        )
        return
    print_blame(report)
    for problem in report.problems:
        click.echo(f"note: {plain(problem)}", err=True)


def register(main: click.Group) -> None:
    main.add_command(export_cmd)
    main.add_command(blame_cmd)
