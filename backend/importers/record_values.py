"""Reading values out of transcript records: times, the text of content parts, image counts."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from .base import ImportFormatError


def load_object(line: str | bytes) -> dict[str, Any]:
    """One line of a JSON-lines file as a JSON object; ImportFormatError saying what is wrong otherwise."""
    try:
        value = json.loads(line)
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
