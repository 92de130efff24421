"""Compact JSON replies that never exceed a byte budget: cut texts, pages of items, a last guard.

Tools build their replies with `cut_text` (long outputs end in "... (+N more lines)") and
`page_of` (items packed into pages that fit the budget); `encode` is the last guard every
reply goes through, so no reply exceeds `max_bytes` whatever a tool did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Room kept free in a page for the paging fields themselves ("page", "pages", "next_page").
_PAGE_SLACK = 96


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def size(data: Any) -> int:
    """Bytes of `data` as a compact UTF-8 JSON reply."""
    return len(dumps(data).encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Cut:
    text: str
    more_lines: int = 0  # lines not shown (a line cut in the middle counts as one)
    more_chars: int = 0  # characters not shown

    @property
    def complete(self) -> bool:
        return not self.more_chars


def more_marker(more_lines: int, more_chars: int) -> str:
    if more_lines > 1:
        return f"... (+{more_lines} more lines)"
    return f"... (+1 more line, {more_chars} characters)"


def cut_text(text: str, *, max_lines: int, max_chars: int, offset: int = 0) -> Cut:
    """`text[offset:]` cut to at most `max_lines` lines and `max_chars` characters.

    A cut text ends with a marker line saying how much is left ("... (+N more lines)").
    """
    rest = text[offset:] if offset else text
    if len(rest) <= max_chars and rest.count("\n") < max_lines:
        return Cut(rest)
    end = min(len(rest), max_chars)
    newlines = 0
    pos = -1
    while newlines < max_lines:
        pos = rest.find("\n", pos + 1, end)
        if pos < 0:
            break
        newlines += 1
    if newlines >= max_lines:
        end = pos + 1  # keep whole lines when the line count is what stops us
    shown = rest[:end]
    left = rest[end:]
    if not left:
        return Cut(shown)
    more_lines = left.count("\n") + (0 if left.endswith("\n") else 1)
    body = shown if shown.endswith("\n") or not shown else shown + "\n"
    return Cut(body + more_marker(more_lines, len(left)), more_lines, len(left))


def page_bounds(sizes: Sequence[int], room: int) -> list[tuple[int, int]]:
    """Greedy pages [start, end) of items whose JSON sizes are `sizes`, each page within `room`.

    Every page holds at least one item (callers cut items to fit alone). Deterministic.
    """
    pages: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, item in enumerate(sizes):
        cost = item + (1 if i > start else 0)
        if i > start and used + cost > room:
            pages.append((start, i))
            start, used = i, item
        else:
            used += cost
    if start < len(sizes) or not pages:
        pages.append((start, len(sizes)))
    return pages


def page_of(
    envelope: dict[str, Any], key: str, items: Sequence[Any], page: int, max_bytes: int
) -> tuple[dict[str, Any], int]:
    """`envelope` with `key` set to page `page` of `items`, plus page / pages / next_page.

    Returns (reply, number of pages). A page past the end gets an empty list.
    """
    room = max_bytes - size({**envelope, key: []}) - _PAGE_SLACK
    bounds = page_bounds([size(item) for item in items], max(room, 1))
    reply = dict(envelope)
    if 0 <= page < len(bounds):
        start, end = bounds[page]
        reply[key] = list(items[start:end])
    else:
        reply[key] = []
    if len(bounds) > 1 or page:
        reply["page"] = page
        reply["pages"] = len(bounds)
        reply["next_page"] = page + 1 if page + 1 < len(bounds) else None
    return reply, len(bounds)


def text_chunk(text: str, offset: int, room: int) -> str:
    """The longest text[offset:offset+n] whose JSON string fits `room` bytes, ending at a line
    break when one lies in its last quarter (so pages split between lines)."""
    n = min(len(text) - offset, room)
    while n > 1:
        cost = len(json.dumps(text[offset : offset + n], ensure_ascii=False).encode("utf-8"))
        if cost <= room:
            break
        n = max(1, min(n - 1, n * room // cost - 8))
    piece = text[offset : offset + n]
    if offset + n < len(text):
        cut = piece.rfind("\n")
        if cut >= n * 3 // 4:
            piece = piece[: cut + 1]
    return piece


def encode(reply: dict[str, Any], max_bytes: int) -> str:
    """The reply as compact JSON, at most `max_bytes` UTF-8 bytes.

    A reply over budget (a tool's own paging should prevent it) keeps what fits in order:
    whole items first, then the one that overflows cut down, and says so with "truncated": true.
    """
    text = dumps(reply)
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    fitted = _fit(json.loads(text), max_bytes - len(',"truncated":true'))
    data = fitted if isinstance(fitted, dict) else {}
    data["truncated"] = True
    text = dumps(data)
    if len(text.encode("utf-8")) > max_bytes:  # only when max_bytes is absurdly small
        text = dumps({"error": {"code": "reply_too_large", "message": f"the reply exceeds {max_bytes} bytes"}})
    return text


_MIN_PART = 32  # a value cut smaller than this is dropped instead


def _fit(value: Any, budget: int) -> Any:
    """`value` cut to serialise within `budget` bytes, or _DROP when nothing useful fits."""
    if size(value) <= budget:
        return value
    if isinstance(value, str):
        marker = "... (cut)"
        room = budget - size(marker) + 2
        return text_chunk(value, 0, room)[:-1] + marker if room > _MIN_PART else _DROP
    if isinstance(value, list):
        return _fit_list(value, budget)
    if isinstance(value, dict):
        return _fit_dict(value, budget)
    return _DROP


def _fit_list(items: list[Any], budget: int) -> list[Any]:
    out: list[Any] = []
    used = 2
    for item in items:
        comma = 1 if out else 0
        cost = size(item) + comma
        if used + cost <= budget:
            out.append(item)
            used += cost
            continue
        room = budget - used - comma
        if room >= _MIN_PART:
            part = _fit(item, room)
            if part is not _DROP:
                out.append(part)
        break
    return out


def _fit_dict(data: dict[str, Any], budget: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    used = 2
    for key, value in data.items():
        key_cost = size(key) + 1 + (1 if out else 0)
        cost = key_cost + size(value)
        if used + cost <= budget:
            out[key] = value
            used += cost
            continue
        room = budget - used - key_cost
        if room >= _MIN_PART:
            part = _fit(value, room)
            if part is not _DROP:
                out[key] = part
                used += key_cost + size(part)
    return out


_DROP = object()
