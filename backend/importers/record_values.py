"""Reading values out of transcript records: times, the text of content parts, image counts."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from .base import ImportFormatError

try:
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - a dependency; json.loads alone is the same, slower
    _orjson_loads = json.loads


# bytes.translate table: every digit stays a b"0", every other byte becomes a space.
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19


def loads_exact(line: str | bytes) -> Any:
    """json.loads(line), faster: orjson parses it when its value is sure to be json's.

    orjson refuses (and json.loads then reads, or raises, as it always did) everything json
    reads differently: NaN/Infinity, 1e400, lone surrogates, bad UTF-8, a BOM, deep nesting.
    The one value it reads differently without refusing is an integer outside [-2**63, 2**64),
    which it makes a float: any such literal has a run of 19 digits, and a line holding one is
    left to json.loads (a float with a 19-digit mantissa too; shorter ones parse the same).
    """
    data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if _LONG_RUN not in data.translate(_DIGITS):
        try:
            return _orjson_loads(data)
        except ValueError:  # orjson.JSONDecodeError is a ValueError: json says what is wrong
            pass
    return json.loads(line)


def load_object(line: str | bytes) -> dict[str, Any]:
    """One line of a JSON-lines file as a JSON object; ImportFormatError saying what is wrong otherwise."""
    try:
        value = loads_exact(line)
    except RecursionError:
        raise ImportFormatError("record nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ImportFormatError(f"invalid JSON: {short(str(exc))}") from None
    if not isinstance(value, dict):
        raise ImportFormatError(f"expected a JSON object, got {type(value).__name__}")
    return value


def parse_time(value: Any) -> float:
    """ISO-8601 text or epoch seconds/milliseconds -> unix seconds; 0.0 when unknown."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        if not math.isfinite(number) or number <= 0:
            return 0.0
        return number / 1000.0 if number > 1e11 else number
    if not isinstance(value, str) or not value:
        return 0.0
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text)  # 3.11 reads a trailing Z
    except ValueError:
        if not text.endswith("z"):
            return 0.0
        try:
            moment = datetime.fromisoformat(text[:-1] + "Z")
        except ValueError:
            return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return 0.0


def as_text(value: Any, _depth: int = 0) -> str:
    """Flatten message content (a string, a list of parts, a part) to plain text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if _depth > 20:
        return "[...]"  # absurdly nested content: not worth a RecursionError
    if isinstance(value, list):
        texts = [as_text(part, _depth + 1) for part in value]
        return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        for key in ("text", "output", "content"):
            inner = value.get(key)
            if isinstance(inner, (str, list)):
                return as_text(inner, _depth + 1)
        if value.get("type") in ("input_image", "image", "output_image") or "inlineData" in value:
            return "[image]"
        return dumps(value)
    return str(value)


def dumps(value: Any, *, sort_keys: bool = True) -> str:
    """JSON text of a value kept as text; its repr when it is not JSON-able."""
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str)
    except (ValueError, TypeError, RecursionError):
        return repr(value)


def count_images(value: Any) -> int:
    if not isinstance(value, list):
        return 0
    return sum(
        1
        for part in value
        if isinstance(part, dict) and (part.get("type") in ("input_image", "image") or "inlineData" in part)
    )


def short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
