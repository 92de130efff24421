"""The words opmem writes into a session repo: turn commit messages, and titles and previews cut from prompts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Node
from ..safe_text import plain

TITLE_CHARS = 50
PREVIEW_CHARS = 80


def excerpt(text: str, limit: int) -> str:
    """First non-empty line, whitespace collapsed, cut at `limit` chars with an ellipsis."""
    for line in plain(text).splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= limit else line[:limit].rstrip() + "…"
    return ""


def one_line(text: str, limit: int) -> str:
    """Session text for a commit message: no control bytes or terminal escapes (git refuses NUL, and
    `git log` prints to a terminal), whitespace collapsed."""
    return " ".join(plain(text).split())[:limit]


def commit_message(turn_no: int, end: str, chain: Sequence[Node], tools: Sequence[Node]) -> str:
    """`turn N: <prompt>`, the reply, the tools, a [meta: ...] line and the Opmem- trailers (ARCHITECTURE §3)."""
    user = next((n for n in chain if n.role == "user"), None)
    replies = [n for n in chain if n.role == "assistant" and n.content.strip()]
    names: Counter[str] = Counter()
    order: list[str] = []
    for tool in sorted(tools, key=lambda n: n.seq):
        label = one_line(tool.name or "", 40) or "tool"
        if label not in names:
            order.append(label)
        names[label] += 1
    tool_line = ", ".join(f"{n} × {names[n]}" if names[n] > 1 else n for n in order)
    took = max(0.0, chain[-1].created_at - chain[0].created_at) if chain else 0.0
    tokens = sum(token_count(node.metadata) for node in chain)
    subject = one_line(user.content, 60) if user else one_line(chain[0].content if chain else "", 60)
    lines = [f"turn {turn_no}: {subject}".rstrip(), ""]
    if replies:
        lines.append(f"assistant: {one_line(replies[-1].content, 80)}")
    if tool_line:
        lines.append(f"tools: {tool_line}")
    if lines[-1] != "":
        lines.append("")
    meta_line = f"[meta: turn took {took:.1f}s, {len(tools)} tools"
    meta_line += f", {tokens} tokens]" if tokens else "]"
    lines += [meta_line, "", f"Opmem-Turn: {turn_no}", f"Opmem-Head: {end}"]
    return "\n".join(lines) + "\n"


def trailers(message: str) -> tuple[str | None, int]:
    """(Opmem-Head, Opmem-Turn) of a commit message; (None, 0) for a commit opmem did not write."""
    head, turn = None, 0
    for line in reversed(message.splitlines()):
        if line.startswith("Opmem-Head: "):
            head = line[12:].strip()
        elif line.startswith("Opmem-Turn: "):
            try:
                turn = int(line[12:].strip())
            except ValueError:
                turn = 0
        elif line and not line.startswith("Opmem-"):
            break
    return head, turn


def token_count(metadata: Mapping[str, Any]) -> int:
    value = metadata.get("tokens")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    usage = metadata.get("usage")
    if isinstance(usage, Mapping):
        total = 0
        for key in ("input_tokens", "output_tokens"):
            part = usage.get(key)
            if isinstance(part, int) and not isinstance(part, bool):
                total += part
        return total
    return 0
