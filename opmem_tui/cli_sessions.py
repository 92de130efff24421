"""`opmem sessions ...`: list, show, rename and delete sessions from the shell.

Ids are printed whole (they are what `show` takes), and `show`, `rename`, `delete` accept any
unique prefix of one. `--json` prints what a script needs; text output is plain (session text
is untrusted: escape sequences stripped).
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click
from rich.cells import cell_len, set_cell_size

from .backend import naming
from .backend.home import Home
from .backend.importers import ALIASES as IMPORT_ALIASES
from .backend.model import OpmemError, SessionMeta
from .backend.orchestration import set_private
from .backend.privacy import redact_text, redact_value
from .backend.privacy.exclusions import Exclusions, is_private
from .backend.safe_text import plain
from .cli_output import json_text
from .cli_recall import show_command

TITLE_MIN = 12  # narrower than this, a row leaves its title out rather than show a stub


def _home(ctx: click.Context) -> Home:
    return ctx.obj["home"]


def _fail(exc: Exception) -> None:
    click.echo(f"opmem: {plain(str(exc))}", err=True)
    sys.exit(1)


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _one_line(text: str) -> str:
    return " ".join(redact_text(plain(text)).split())


def _time(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def dump_json(value: Any) -> str:
    """`value` masked (backend/privacy) as JSON that cannot drive the terminal (cli_output)."""
    return json_text(redact_value(value), indent=2)


def resolve_session(home: Home, text: str) -> str:
    """The id of the session `text` names: its id, a unique prefix of one, or its title (backend/naming)."""
    return naming.session_id(home, text)


@click.group()
def sessions() -> None:
    """List, show, rename and delete sessions (ids or a unique prefix of one)."""


# -- list ------------------------------------------------------------------------------------


def _source_key(source: str) -> str:
    """A source as `opmem import` names it: "claude" for a session's "claude-code" (and "cc")."""
    return IMPORT_ALIASES.get(source, source)


def _project_matcher(home: Home, wanted: str) -> set[str]:
    """Project ids that `--project` names: an id, a name or a unique prefix (backend/naming), as
    `opmem core --project` takes it."""
    try:
        return {wanted, naming.project(home, wanted).id}
    except naming.AmbiguousName:
        raise
    except OpmemError:
        return {wanted}  # a broken registry, or a project no longer known: ids still match


def _fit(text: str, room: int | None) -> str:
    """`text` cut to `room` terminal cells (wide characters count two)."""
    if room is None or cell_len(text) <= room:
        return text
    return set_cell_size(text, max(room - 1, 0)) + "…"


PRIVATE_MARK = "[private] "
EXCLUDED_MARK = "[excluded] "


def privacy_mark(meta: SessionMeta, rules: Exclusions | None) -> str:
    """ "[private] " / "[excluded] " before the title of a session the memory never sees."""
    if is_private(meta):
        return PRIVATE_MARK
    if rules is not None and rules.reason(meta):
        return EXCLUDED_MARK
    return ""


def _table(
    rows: Sequence[SessionMeta],
    room: int | None,
    rules: Exclusions | None = None,
    machines: Mapping[str, str] | None = None,
) -> list[str]:
    """One line per session, id first and whole; the title is cut to `room` columns (None: a
    pipe, nothing cut). Ids too long to leave a title room get a line of their own, with the
    details indented under them. Private and excluded sessions are marked before their title.
    `machines`: {session id: machine} of sessions synced from another machine, shown after the
    source as `@machine`."""
    machines = machines or {}

    def title(meta: SessionMeta) -> str:
        return privacy_mark(meta, rules) + _one_line(meta.display_title)

    def source(meta: SessionMeta) -> str:
        where = machines.get(meta.id)
        return _one_line(meta.source) + (f" @{_one_line(where)}" if where else "")

    id_width = max(len(m.id) for m in rows)
    source_width = max(6, *(len(source(m)) for m in rows))

    def details(meta: SessionMeta) -> str:
        updated = _time(meta.updated_at or meta.created_at)
        return f"{updated:<16}  {meta.turn_count:>5}  {source(meta):<{source_width}}  "

    header = f"{'updated':<16}  {'turns':>5}  {'source':<{source_width}}  title"
    stacked = room is not None and room - (id_width + 2 + len(header) - 5) < TITLE_MIN
    if stacked:
        lines = [f"id / {header}"]
        for meta in rows:
            lines.append(meta.id)
            lead = "    " + details(meta)
            lines.append(lead + _fit(title(meta), room - len(lead) if room else None))
        return lines
    lines = [f"{'id':<{id_width}}  {header}"]
    for meta in rows:
        lead = f"{meta.id:<{id_width}}  {details(meta)}"
        lines.append(lead + _fit(title(meta), room - len(lead) if room else None))
    return lines


@sessions.command("list")
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many (0: all).")
@click.option("--source", "sources", multiple=True, help="Only sessions of this agent source (repeatable).")
@click.option("--project", "projects", multiple=True, help="Only sessions bound to this project (id or name).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: sessions with their turn counts.")
@click.pass_context
def sessions_list(
    ctx: click.Context, limit: int, sources: tuple[str, ...], projects: tuple[str, ...], as_json: bool
) -> None:
    """Sessions, most recently updated first; ids whole, titles cut to the terminal."""
    home = _home(ctx)
    try:
        listing = home.sessions.list_sessions()
        rows = list(listing.sessions)
        if sources:
            wanted_sources = {_source_key(s) for s in sources}
            rows = [m for m in rows if _source_key(m.source) in wanted_sources]
        if projects:
            wanted: set[str] = set()
            for project in projects:
                wanted |= _project_matcher(home, project)
            rows = [m for m in rows if m.project_id in wanted]
    except OpmemError as exc:
        _fail(exc)
        return
    matched = len(rows)
    shown = rows[:limit] if limit > 0 else rows
    rules = home.exclusions()
    for problem in listing.problems:
        click.echo(f"skipped: {plain(problem)}", err=True)
    if sources and not matched and listing.sessions:
        here = sorted({m.source for m in listing.sessions if m.source})
        click.echo(f"no session has source {', '.join(sources)} (sources here: {plain(', '.join(here))})", err=True)
    if as_json:
        click.echo(
            dump_json(
                {
                    "sessions": [
                        dict(
                            m.to_json(),
                            turns=m.turn_count,
                            path=m.path,
                            private=is_private(m),
                            excluded=rules.reason(m),
                        )
                        for m in shown
                    ],
                    "matched": matched,
                    "total": len(listing.sessions),
                    "skipped": listing.skipped,
                }
            )
        )
        return
    total = plural(len(listing.sessions), "session")
    summary = f"{matched:,} of {total}" if sources or projects else total
    if listing.skipped:
        summary += f", {listing.skipped:,} skipped"
    if len(shown) < matched:
        summary += f" (the newest {len(shown):,}; --limit 0 for all)"
    click.echo(summary)
    if not shown:
        return
    room = shutil.get_terminal_size().columns if sys.stdout.isatty() else None  # a pipe gets every title whole
    from .backend.sync import machine_names, origins  # sessions recorded on other machines (opmem sync)

    names = machine_names(home) if (home.path / "sync").is_dir() else {}
    pulled = {sid: names.get(m, m) for sid, m in origins(home).items()} if names else {}
    for line in _table(shown, room, rules, pulled):
        click.echo(line)


# -- show ------------------------------------------------------------------------------------

# One command, two spellings: `opmem sessions show` is `opmem show` (cli_recall.show_command).
sessions.add_command(show_command, "show")


# -- rename, delete --------------------------------------------------------------------------


@sessions.command("rename")
@click.argument("session_id")
@click.argument("title")
@click.pass_context
def sessions_rename(ctx: click.Context, session_id: str, title: str) -> None:
    """Give a session a title of your own (never overwritten)."""
    home = _home(ctx)
    try:
        meta = home.sessions.rename_session(resolve_session(home, session_id), title)
    except OpmemError as exc:
        _fail(exc)
        return
    click.echo(f"renamed {meta.id}: {_one_line(meta.title)}")


@sessions.command("delete")
@click.argument("session_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def sessions_delete(ctx: click.Context, session_id: str, yes: bool) -> None:
    """Delete a session folder for good."""
    home = _home(ctx)
    store = home.sessions
    try:
        session_id = resolve_session(home, session_id)
        meta = store.get_meta(session_id)
    except OpmemError as exc:
        _fail(exc)
        return
    if not yes and not click.confirm(f"Delete session {session_id} ({_one_line(meta.display_title)})?"):
        click.echo("kept")
        return
    try:
        store.delete_session(session_id)
    except OpmemError as exc:
        _fail(exc)
        return
    click.echo(f"deleted {session_id}")


# -- private ---------------------------------------------------------------------------------


@sessions.command("private")
@click.argument("session_id")
@click.option("--off", is_flag=True, help="Make it public again: the next distillation takes it from scratch.")
@click.pass_context
def sessions_private(ctx: click.Context, session_id: str, off: bool) -> None:
    """Keep a session out of the memory: never distilled, indexed or recalled (still listed and
    replayable). What it gave already is withdrawn: its search rows dropped, core.md and the
    entity views rebuilt without it. --off makes it eligible again."""
    home = _home(ctx)
    try:
        session_id = resolve_session(home, session_id)
        change = set_private(home, session_id, not off)
    except OpmemError as exc:
        _fail(exc)
        return
    state = "private" if not off else "public"
    verb = f"made {session_id} {state}" if change.changed else f"{session_id} was already {state}"
    click.echo(verb)
    if off and change.reason:
        click.echo(f"still kept out of the memory: {plain(change.reason)}")
    elif off and change.changed:
        click.echo("the next distillation (opmem distill) takes it from its first turn")
    for note in change.notes:
        click.echo(f"  {plain(note)}")
