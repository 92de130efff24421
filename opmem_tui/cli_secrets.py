"""`opmem secrets scan|purge`: where the sessions hold secrets, and redacting them in place.

Nothing here ever prints a value: a finding is its place, its kind and a fingerprint.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import click

from .backend.home import Home
from .backend.model import OpmemError
from .backend.privacy.scan import SecretFinding, scan
from .backend.safe_text import plain
from .backend.secrets_purge import plan_purge, purge


def _home(ctx: click.Context) -> Home:
    obj: Any = ctx.obj
    home = obj["home"] if isinstance(obj, dict) and isinstance(obj.get("home"), Home) else Home()
    if not home.exists():
        raise click.ClickException(f"no opmem home at {plain(str(home.path))}")
    return home


def _warn(problems: list[str]) -> None:
    for problem in problems[:20]:
        click.echo(f"warning: {plain(problem)}", err=True)
    if len(problems) > 20:
        click.echo(f"warning: ... and {len(problems) - 20} more", err=True)


def _kinds(findings: list[SecretFinding]) -> str:
    counts = Counter(f.kind for f in findings)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _table(findings: list[SecretFinding]) -> list[str]:
    head = ("SESSION", "TURN", "NODE", "FIELD", "KIND", "FINGERPRINT")
    rows = [
        (
            plain(f.session),
            "" if f.turn is None else str(f.turn),
            plain(f.node or ""),
            plain(f.field),
            f.kind,
            f.fingerprint,
        )
        for f in findings
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]


@click.group("secrets")
def secrets() -> None:
    """Secrets stored in the sessions: find them (scan) and redact them in place (purge)."""


@secrets.command("scan")
@click.option("--session", "session_id", help="Only this session.")
@click.option("--json", "as_json", is_flag=True, help='{"findings": [{session, turn, node, field, kind, fingerprint}]}')
@click.pass_context
def scan_cmd(ctx: click.Context, session_id: str | None, as_json: bool) -> None:
    """Every secret in the node files and meta.json of the sessions: where, what kind, a
    fingerprint (the same value has the same one everywhere). Values are never shown."""
    home = _home(ctx)
    problems: list[str] = []
    try:
        findings = list(scan(home.sessions, session_id, problems, memory_dir=home.memory_dir))
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    _warn(problems)
    if as_json:
        click.echo(json.dumps({"findings": [f.to_json() for f in findings]}, indent=1))
        return
    if not findings:
        click.echo("no secrets found")
        return
    for line in _table(findings):
        click.echo(line)
    sessions = len({f.session for f in findings})
    click.echo(f"\n{len(findings)} finding(s) in {sessions} session(s): {_kinds(findings)}")
    click.echo("`opmem secrets purge` redacts them in the sessions and their git history")


@secrets.command("purge")
@click.option("--session", "session_id", help="Only this session.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def purge_cmd(ctx: click.Context, session_id: str | None, yes: bool) -> None:
    """Redact every secret found in place: the node files and meta.json of the sessions that
    hold one, and their git history on every branch (old commits and objects are deleted).
    Other sessions and files are left as they are. This cannot be undone."""
    home = _home(ctx)
    try:
        plan = plan_purge(home, session_id)
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    _warn(plan.problems)
    if not plan:
        click.echo("no secrets found: nothing to purge")
        return
    if plan.sessions:
        names = ", ".join(plain(s.session) for s in plan.sessions[:10])
        if len(plan.sessions) > 10:
            names += f", ... ({len(plan.sessions) - 10} more)"
        click.echo(
            f"purge will redact {plan.findings} finding(s) in {plan.nodes} node file(s) of "
            f"{len(plan.sessions)} session(s): {names}"
        )
        click.echo(
            "and rewrite the git history of those sessions on every branch: the old commits and every "
            "object holding a value are deleted (this cannot be undone)"
        )
    if plan.memory is not None and plan.memory_findings:
        click.echo(
            f"purge will redact {plan.memory_findings} finding(s) in {len(plan.memory.affected)} "
            "memory file(s) (the lines holding them are rewritten)"
        )
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("not purging without confirmation: stdin is not a terminal (give --yes)")
        if not click.confirm("Purge?", default=False):
            click.echo("nothing changed")
            sys.exit(1)
    try:
        report = purge(home, plan, progress=lambda sid: click.echo(f"purging {plain(sid)}"))
    except OpmemError as exc:
        raise click.ClickException(plain(str(exc))) from None
    click.echo(
        f"purged: {report.findings} finding(s) in {report.nodes} node file(s) of {report.sessions} session(s); "
        f"{report.commits_rewritten} commit(s) rewritten, {report.refs_moved} branch(es) moved"
        + (f"; {report.memory_files} memory file(s) rewritten" if report.memory_files else "")
        + ("; search index rebuilt" if report.index_rebuilt else "")
    )
    _warn(report.problems)
