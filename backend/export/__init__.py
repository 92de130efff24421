"""A session as a file to share (ARCHITECTURE §1, backend/export/): one job per module.

    session.py   what an export holds: the branch, the turns, redacted unless raw (the one gate)
    html.py      the self-contained offline replay (page.js and page.css inlined)
    markdown.py  a transcript for a pull request or an issue
    json.py      the nodes as opmem stores them

`export_session` picks the format; `write_export` writes the file whole (a temp file renamed).
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from .html import render_html
from .json import render_json
from .markdown import render_markdown
from .session import FORMATS, ExportedSession, ExportError, parse_turn_range, select

if TYPE_CHECKING:
    from ..store.sessions import SessionStore

RENDERERS = {"html": render_html, "md": render_markdown, "json": render_json}

__all__ = [
    "FORMATS",
    "ExportError",
    "ExportedSession",
    "export_session",
    "parse_turn_range",
    "render",
    "select",
    "write_export",
]


def render(session: ExportedSession, fmt: str) -> str:
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise ExportError(f"unknown export format {fmt!r} (html, md or json)") from None
    # A lone surrogate (a broken transcript's text) cannot be written as UTF-8: "?" (the HTML's
    # data and the JSON carry it as its \\u escape already).
    return renderer(session).encode("utf-8", "replace").decode("utf-8")


def export_session(
    store: SessionStore,
    session_id: str,
    fmt: str = "html",
    *,
    turns: str | None = None,
    branch: str | None = None,
    raw: bool = False,
) -> str:
    """The session (its chosen branch and turns) in `fmt`; redacted unless `raw`."""
    if fmt not in RENDERERS:
        raise ExportError(f"unknown export format {fmt!r} (html, md or json)")
    return render(select(store, session_id, turns=turns, branch=branch, raw=raw), fmt)


def write_export(text: str, path: str | os.PathLike[str], *, private: bool = False) -> Path:
    """Write `text` to `path` whole: a reader never sees half a file, a failure leaves no half file.

    The file's mode is what any new file gets here (0666 less the umask, 0644 typically): an
    export is made to be shared, and it is redacted. `private` (a `--raw` export, which holds
    the session's secrets): 0600 at most, readable by its owner only, whatever the umask."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise ExportError(f"{target}: is a folder; give a file name")
    if not target.parent.is_dir():
        raise ExportError(f"{target.parent}: no such folder")
    try:
        fd, tmp = _temp_beside(target, 0o600 if private else 0o666)
    except OSError as exc:  # a read-only folder: the error names the file asked for, not the temp file
        raise ExportError(f"{target}: cannot write there ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ExportError(f"{target}: not written ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _temp_beside(target: Path, mode: int) -> tuple[int, Path]:
    """A new, unique temp file beside `target`, opened for writing, created with `mode` (the
    kernel takes the umask off, as for any new file; tempfile.mkstemp would force 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(target.parent))
