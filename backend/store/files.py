"""Atomic file writes and tolerant JSON reads for the state directory."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..model import CorruptFile

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; json alone writes the same bytes, slower
    orjson = None  # type: ignore[assignment]


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (os.write may write less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_atomic(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> None:
    """Write to a temp file beside `path`, fsync it, then rename over `path`.

    A reader sees the old file or the new one, never half of either. `mode`: the new file's
    permission bits (set before the rename, so a 0600 file is never readable by others).
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if mode is None else mode & 0o600)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    """JSON text as UTF-8. A lone surrogate (a transcript's `\\ud800` escape, read by json as
    it stands) cannot be UTF-8: it is written back as the same escape, which reads as it was."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # raw surrogates only occur inside JSON strings: escaping them is exact
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def fsync_dir(path: Path) -> None:
    """Make a rename or a new entry in `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def dump_json(data: Any) -> bytes:
    """json.dumps(data, ensure_ascii=False, indent=1, default=str), byte for byte (meta.json: once a
    turn commit, where json's indent is its slow pure-Python encoder): orjson's two-space indent
    made one-space, under dump_json_line's checks (else json writes it). A newline in orjson's
    output is always its own (one in a string is escaped), so only indentation follows one."""
    if orjson is not None:
        try:
            out = orjson.dumps(data, default=_refuse, option=_ORJSON_OPTIONS | orjson.OPT_INDENT_2)
        except TypeError:
            pass
        else:
            if b"0.0000" not in out and not _short_exponent(out) and orjson.loads(out) == data:
                return b"\n".join([line[(len(line) - len(line.lstrip(b" "))) // 2 :] for line in out.split(b"\n")])
    return _utf8(json.dumps(data, ensure_ascii=False, indent=1, default=str))


# What json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str) builds per call, made once.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def dump_compact_json(data: Any) -> bytes:
    """One line, through json's C encoder (indent forces the slow pure-Python one)."""
    return _utf8(_COMPACT.encode(data))


_ORJSON_OPTIONS = (
    0
    if orjson is None
    else orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _refuse(value: Any) -> Any:
    raise TypeError  # not a plain JSON value: json writes it (default=str, a subclass as json sees it)


def dump_json_line(data: Any, *, plain: bool = False) -> bytes:
    """dump_compact_json(data), byte for byte, mostly by orjson (node files; checks included, ~1.8x faster).

    orjson writes what json writes for plain values (str, int, float, bool, None, list, tuple,
    dict with str keys), except: floats under 1e-4 (`1e-7` and `0.00001` for json's `1e-07` and
    `1e-05`), NaN and infinities (null), integers past 64 bits and lone surrogates (it refuses
    them). A subclass, a datetime or a dataclass is refused here too (json may write it
    otherwise). What orjson writes is kept only when it holds no such float and reads back as
    equal to `data` (NaN is not equal to the null it became, an enum not to its value); else
    json writes it. `plain`: the caller knows `data` holds only dicts, lists, str, int, bool and
    None, of exactly those types, and floats that are 0 or finite from 1e-4 up: nothing orjson
    writes otherwise, so what it writes is kept unchecked (it still refuses big ints and lone
    surrogates).
    """
    if orjson is not None:
        try:
            out = orjson.dumps(data, default=_refuse, option=_ORJSON_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
        else:
            if plain or (b"0.0000" not in out and not _short_exponent(out) and orjson.loads(out) == data):
                return out
    return dump_compact_json(data)


def _short_exponent(out: bytes) -> bool:
    """Whether `out` may hold a float orjson writes as `1e-7` (json: `1e-07`): a digit, `e-`, one digit."""
    at, size = out.find(b"e-"), len(out)
    while at >= 0:
        end = at + 3
        digit_e = at and 48 <= out[at - 1] <= 57 and end <= size and 48 <= out[at + 2] <= 57
        if digit_e and (end == size or not 48 <= out[end] <= 57):
            return True
        at = out.find(b"e-", at + 2)
    return False


def write_json_atomic(path: Path, data: Any, *, durable: bool = True) -> None:
    write_atomic(path, dump_json(data), durable=durable)


def read_json(path: Path) -> Any:
    """Parse a JSON file; any problem becomes CorruptFile naming the path."""
    return parse_json(read_raw(path), path)


def read_raw(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CorruptFile(path, "file is missing") from None
    except OSError as exc:
        raise CorruptFile(path, f"cannot read ({exc.strerror})") from None


# 19 digits or more: an integer orjson may read as a float (past 64 bits), where json reads it exactly
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def parse_json(raw: bytes, path: Path) -> Any:
    """The JSON in `raw` (read from `path`); any problem becomes CorruptFile naming the path.

    By orjson where it reads what json reads: what it refuses (NaN, a lone surrogate, a BOM,
    deep nesting, bad bytes) and text with a long digit run go to json, which says what is wrong."""
    if orjson is not None and isinstance(raw, bytes) and _LONG_DIGITS.search(raw) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise CorruptFile(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise CorruptFile(path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise CorruptFile(path, "JSON nested too deeply to read") from None


def read_json_object(path: Path, raw: bytes | None = None) -> dict[str, Any]:
    """The JSON object in file `path` (or in `raw`, its bytes read already)."""
    data = read_json(path) if raw is None else parse_json(raw, path)
    if not isinstance(data, dict):
        raise CorruptFile(path, "expected a JSON object")
    return data
