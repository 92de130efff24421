"""Dates the tools accept: ISO dates and times, and relative forms ("2 weeks ago", "yesterday")."""

from __future__ import annotations

import datetime as dt
import time

from .errors import BAD_ARGUMENT, RecallError


def parse_when(text: str, field: str, *, now: float | None = None) -> float:
    """Unix seconds for `text`: ISO 8601 first (naive means local time), then dateparser.

    Relative forms count back from `now` (default: the current time). An unreadable date is a
    RecallError naming the argument.
    """
    value = text.strip() if isinstance(text, str) else ""
    if not value:
        raise RecallError(BAD_ARGUMENT, f"{field}: empty date")
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        parsed = _relative(value, now)
    if parsed is None:
        raise RecallError(
            BAD_ARGUMENT,
            f"{field}: cannot read {value!r} as a date (use 2025-06-01, 2025-06-01T14:30, '3 days ago', 'yesterday')",
        )
    try:
        return parsed.timestamp()
    except (ValueError, OverflowError, OSError):  # year 1 in a timezone ahead of UTC, and the like
        raise RecallError(BAD_ARGUMENT, f"{field}: {value!r} is outside the dates opmem can compare") from None


def _relative(value: str, now: float | None) -> dt.datetime | None:
    import dateparser  # slow to import: only when a date is not ISO

    base = dt.datetime.fromtimestamp(time.time() if now is None else now).astimezone()
    return dateparser.parse(
        value,
        languages=["en"],
        settings={
            "RELATIVE_BASE": base.replace(tzinfo=None),
            "PREFER_DATES_FROM": "past",
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )


def iso(ts: float | None) -> str | None:
    """Local ISO time to the second, as replies show it (None stays None)."""
    if not ts:
        return None
    local = time.localtime(ts)
    offset = local.tm_gmtoff // 60
    sign = "-" if offset < 0 else "+"
    return time.strftime("%Y-%m-%dT%H:%M:%S", local) + f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
