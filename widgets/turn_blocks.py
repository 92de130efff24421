"""Blocks of a replayed turn beside messages and tool calls: system messages (injected context,
prefaces) collapsed to one line, and a file edit's diff. Plain lines; the replay draws them."""

from __future__ import annotations

import os
from collections.abc import Sequence

from opmem_tui.backend.model import Node

from .line_view import Line, wrap_text
from .safe_text import clean, one_line
from .tool_edits import FileEdit


def home_to_tilde(text: str) -> str:
    home = os.path.expanduser("~").rstrip(os.sep)
    if not home or os.sep not in text:
        return text
    return text.replace(home + os.sep, "~" + os.sep)


def system_label(node: Node) -> str:
    """What a system message is: injected context (AGENTS.md, environment, permissions,
    reminders), a command, a compact summary..."""
    meta = node.metadata or {}
    kind = meta.get("kind")
    if meta.get("injected") or kind == "injected":
        return "injected context"
    if isinstance(kind, str) and kind:
        return kind.replace("_", " ")
    return "system message"


def system_lines(lines: list[Line], item: int, node: Node, width: int, is_open: bool) -> None:
    """A system message (a preface, injected context): one line unless opened; a short one-line
    text is shown in that line whole."""
    append = lines.append
    if lines:
        append(Line("", "blank", -1))
    content = clean(node.content).strip("\n")
    head = f"system · {system_label(node)}"
    if "\n" not in content and len(head) + len(content) + 8 <= width:
        append(Line(f"▌ {head} · {content}" if content else f"▌ {head}", "system-header", item, 0))
        return
    size = f"{len(content) / 1000:.1f}k chars" if len(content) >= 1000 else f"{len(content)} chars"
    append(Line(f"{'▾' if is_open else '▸'} {head} · {size}", "system-header", item, 0))
    if is_open:
        for text in wrap_text(content, width - 2):
            append(Line(text, "system", item, 2))


def edit_lines(lines: list[Line], code_paths: dict[int, str], item: int, edits: Sequence[FileEdit], width: int) -> None:
    """Each file of an edit: a header, then its diff lines; `code_paths` maps each code line (by
    identity) to the file whose language colours it."""
    append = lines.append
    for edit in edits:
        path = clean(edit.path)
        shown = home_to_tilde(path)
        append(
            Line(one_line(f"{edit.status} {shown}  +{edit.additions} −{edit.deletions}", width - 6), "file", item, 4)
        )
        for origin, raw_text in edit.lines:
            if origin == "@":
                append(Line(one_line(raw_text, width - 6), "hunk", item, 4))
                continue
            style = "add" if origin == "+" else "del" if origin == "-" else "ctx"
            for index, part in enumerate(wrap_text(clean(raw_text), width - 7) or [""]):
                line = Line((origin if index == 0 else " ") + part, style, item, 4)
                code_paths[id(line)] = path
                append(line)
