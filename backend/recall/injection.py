"""The core block kept inside an agent's instruction file (CLAUDE.md, AGENTS.md, GEMINI.md).

The block sits between two marker comments; writing it again replaces only what lies between
them (markers included), so every byte the user wrote around it stays as it was. A file
without the markers gets the block appended; a missing file is created. Writes are atomic
(temp file + rename, the file's mode kept, a symlink written through) and skipped when
nothing changes.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..model import OpmemError

BEGIN = "<!-- opmem:core:begin (written by `opmem core --write`; edits inside are replaced) -->"
END = "<!-- opmem:core:end -->"
_BEGIN_PREFIX = "<!-- opmem:core:begin"


class InjectionError(OpmemError):
    """The file's markers are not one well-formed pair; nothing was written."""


def _marker_lines(text: str, path: Path) -> tuple[int, int] | None:
    """(start of the begin line, end of the end marker) or None when the file has no block."""
    begins: list[tuple[int, int]] = []  # (offset, line number)
    ends: list[tuple[int, int]] = []
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        stripped = line.strip()
        if stripped.startswith(_BEGIN_PREFIX):
            begins.append((offset, number))
        elif stripped.startswith(END):
            ends.append((offset + line.index(END) + len(END), number))
        offset += len(line)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1:
        where = ", ".join(f"line {n}" for _, n in sorted(begins + ends, key=lambda item: item[1]))
        raise InjectionError(
            f"{path}: expected one opmem core block, found {len(begins)} begin and {len(ends)} end markers ({where});"
            " fix the file by hand, nothing was written"
        )
    (start, begin_line), (end, end_line) = begins[0], ends[0]
    if end_line < begin_line:
        raise InjectionError(f"{path}:{end_line}: the opmem core end marker comes before its begin (line {begin_line})")
    return start, end


def splice(text: str, block: str, path: Path) -> str:
    """`text` with its core block replaced by `block` (or `block` appended when it has none)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = block.rstrip("\n").replace("\r\n", "\n")
    framed = newline.join([BEGIN, *body.split("\n"), END])
    found = _marker_lines(text, path)
    if found is not None:
        start, end = found
        return text[:start] + framed + text[end:]
    if not text:
        return framed + newline
    separator = "" if text.endswith(newline + newline) else newline if text.endswith(newline) else newline * 2
    return text + separator + framed + newline


def write_block(path: Path, block: str) -> bool:
    """Keep `block` in the file at `path`; True when the file changed."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        raw = b""
    except OSError as exc:
        raise InjectionError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InjectionError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); nothing was written"
        ) from None
    data = splice(text, block, path).encode("utf-8")
    if data == raw and target.exists():
        return False
    _replace(target, data)
    return True


def _replace(target: Path, data: bytes) -> None:
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    folder = target.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InjectionError(f"{target}: cannot write in {folder} ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
