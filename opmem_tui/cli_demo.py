"""`opmem demo [DIR]`: the app on a demo store built on the spot.

The demo never touches your own store: `OPMEM_HOME` and `--home` name that store, so the demo is
built in DIR (kept, reopened by the same command) or in a temporary folder that is removed when
the app quits.
"""

from __future__ import annotations

import gc
import shlex
import shutil
import tempfile
from pathlib import Path

import click

from .backend.demo import build_demo, is_demo
from .backend.home import Home
from .backend.model import OpmemError
from .cli_sessions import _fail


def _store_option_given(ctx: click.Context) -> Path | None:
    """The store folder `--home` / OPMEM_HOME named, if either did."""
    parent = ctx.parent
    value = parent.params.get("home_path") if parent is not None else None
    return Path(value) if value is not None else None


def _build(directory: Path) -> Home:
    if is_demo(directory):
        return Home(directory / "home")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise OpmemError(f"{directory}: not empty and not an opmem demo; give an empty or new folder")
    click.echo("building the demo store…", err=True)
    return build_demo(directory)


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--no-app",
    "--no-open",
    "no_app",
    is_flag=True,
    help="Build the demo store in DIRECTORY, say how to open it and exit (for scripts and tests).",
)
@click.pass_context
def demo(ctx: click.Context, directory: Path | None, no_app: bool) -> None:
    """Open the app on a demo store: built in DIRECTORY and kept, else in a temporary folder
    removed when you quit. Your own store ($OPMEM_HOME, --home) is never used."""
    own = _store_option_given(ctx)
    if own is not None:
        click.echo(f"note: the demo does not use your store ({own}); it gets a folder of its own", err=True)
    if directory is None and no_app:
        _fail(OpmemError("--no-app needs a folder to keep the demo in: opmem demo DIR --no-app (or --no-open)"))
        return
    temporary = directory is None
    folder = Path(tempfile.mkdtemp(prefix="opmem-demo-")) if directory is None else directory.expanduser()
    try:
        _open(folder, temporary=temporary, no_app=no_app)
    finally:
        if temporary:
            _remove(folder)


def _open(folder: Path, *, temporary: bool, no_app: bool) -> None:
    from .cli import run_app

    try:
        home = _build(folder)
    except OpmemError as exc:
        _fail(exc)
        return
    if temporary:
        click.echo(f"demo store: {home.path} (temporary: removed when you quit; `opmem demo DIR` keeps one)")
    else:
        click.echo(f"demo store: {home.path}  (projects in {folder / 'projects'})")
        click.echo(f"open it again: opmem demo {shlex.quote(str(folder))}")
        click.echo(f"          or: opmem --home {shlex.quote(str(home.path))}")
    if not no_app:
        run_app(home, start_tab="memory")  # the first screen shows what opmem is for


def _remove(folder: Path) -> None:
    # A session store flushes its open sessions when it is collected (taking their lock files):
    # collect the demo's store and app first, so nothing writes into the folder once it is gone.
    gc.collect()
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():
        click.echo(f"opmem: could not remove the temporary demo store {folder}; remove it by hand", err=True)
