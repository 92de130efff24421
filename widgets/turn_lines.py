"""A turn as plain lines: chat messages (header, thinking, text), tool calls (a summary line,
or arguments and result; a file edit as its diff) and system messages, at a given width.

Pure, so it can be tested and timed alone; `TurnView` (replay_view.py) draws the lines. Tool
results and thinking stay collapsed until asked for, so a turn with hundreds of tool calls and
megabytes of output costs few lines.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from opmem_tui.backend.model import Node, Turn
from opmem_tui.backend.node_text import args_text, model_of, size_label, thinking_text

from .line_view import Line, wrap_text
from .safe_text import clean, one_line
from .tool_edits import tool_edits
from .turn_blocks import edit_lines, home_to_tilde, system_lines

ROLE_LABEL = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}


def clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts)) if ts else "--:--:--"


def _size_label(text: str) -> str:
    return size_label(text.rstrip("\n"))  # a final newline ends the last line, it does not start one


def node_text(node: Node) -> str:
    """What `y` copies: the message as plain text (a tool call: name, arguments, result)."""
    if node.is_tool:
        args = args_text(node.input, pretty=True)
        return f"{node.name or 'tool'} {args}\n\n{node.content}".strip() if args else node.content
    return node.content


@dataclass
class TurnRender:
    """What build_turn_lines produced: the lines and, per item, the node it shows; the lines of
    an edit's diff map (by identity) to the file whose language colours them."""

    lines: list[Line]
    nodes: list[Node] = field(default_factory=list)
    code_paths: dict[int, str] = field(default_factory=dict)


def build_turn_lines(
    turn: Turn,
    width: int,
    *,
    expanded: frozenset[str] | set[str] = frozenset(),
    show_thinking: bool = False,
    raw: frozenset[str] | set[str] = frozenset(),
) -> TurnRender:
    """Plain lines for one turn at `width` cells; item i of a line is turn.nodes[i].
    `expanded`: tool calls and system messages shown whole; `raw`: edits shown as JSON."""
    width = max(width, 20)
    render = TurnRender([], list(turn.nodes))
    nodes = render.nodes
    for item, node in enumerate(nodes):
        if node.is_tool:
            _tool_lines(render, item, node, width, node.id in expanded, node.id in raw)
        elif node.role == "system":
            system_lines(render.lines, item, node, width, node.id in expanded)
        else:
            calls = item + 1 < len(nodes) and nodes[item + 1].is_tool
            _message_lines(render.lines, item, node, width, show_thinking, calls_tools=calls)
    return render


def _tool_lines(render: TurnRender, item: int, node: Node, width: int, is_open: bool, raw: bool) -> None:
    """A tool call: one summary line and its result's size, or (open) arguments and result; a
    file edit's arguments as a diff (`J` shows them as JSON)."""
    lines = render.lines
    append = lines.append
    edits = tool_edits(node)
    head = f"{'▾' if is_open else '▸'} {'✎' if edits else '⚙'} {one_line(node.name or 'tool', 40)}"
    args = home_to_tilde(args_text(node.input))  # the one-line summary; enter shows them exact
    if edits:
        added, removed = sum(e.additions for e in edits), sum(e.deletions for e in edits)
        args = f"{', '.join(home_to_tilde(e.path) for e in edits)}  +{added} −{removed}"
    room = width - len(head) - 5
    if args and room > 8:
        head = f"{head}  {one_line(args, room)}"
    append(Line(head, "tool", item, 2))
    if not is_open:
        result = node.content
        label = f"result: {_size_label(result)}" if result else "result: (no output)"
        hint = "  (enter shows the diff)" if edits else "  (enter expands)"
        if (result or edits) and len(label) + len(hint) + 4 <= width:
            label += hint
        append(Line(label, "dim", item, 4))
        return
    if edits and not raw:
        edit_lines(lines, render.code_paths, item, edits, width)
        append(Line("J: the arguments as JSON", "dim", item, 4))
    else:
        pretty = clean(args_text(node.input, pretty=True))
        if pretty:
            for text in wrap_text(pretty, width - 6):
                append(Line(text, "args", item, 6))
    result = clean(node.content).rstrip("\n")
    append(Line(f"result ({_size_label(result)})" if result else "result: (no output)", "dim", item, 4))
    if result:
        for text in wrap_text(result, width - 6):
            append(Line(text, "output", item, 6))


def _message_header(node: Node) -> tuple[str, str]:
    """(role, header line) of a chat message: role, the assistant's model, the time."""
    role = node.role if node.role in ROLE_LABEL else "system"
    header = f"▌ {ROLE_LABEL[role]}"
    if role == "assistant":
        model = model_of(node)
        if model:
            header += f" · {one_line(model, 40)}"
    return role, f"{header} · {clock(node.created_at)}"


def _message_lines(
    lines: list[Line], item: int, node: Node, width: int, show_thinking: bool, *, calls_tools: bool = False
) -> None:
    """A chat message: header, thinking (or a line saying it is hidden), the text; a reply that
    only calls tools has just its header, its calls follow under it."""
    append = lines.append
    body_width = width - 2
    role, header = _message_header(node)
    if lines:
        append(Line("", "blank", -1))
    append(Line(header, f"{role}-header", item, 0))
    thinking = thinking_text(node)
    if thinking and show_thinking:
        append(Line("∴ thinking", "thinking", item, 2))
        for text in wrap_text(clean(thinking), body_width - 2):
            append(Line(text, "thinking", item, 4))
    elif thinking:
        label = f"∴ thinking hidden ({_size_label(thinking)}; t shows it)"
        if len(label) + 2 > width:
            label = "∴ thinking hidden (t shows it)"
        append(Line(label, "dim", item, 2))
    content = clean(node.content)
    if content:
        for text in wrap_text(content, body_width):
            append(Line(text, role, item, 2))
    elif not thinking and not calls_tools:
        append(Line("(empty)", "dim", item, 2))


def abbreviate_path(path: str, limit: int = 40) -> str:
    """~ for the home folder, then the middle elided: ~/…/project/app."""
    if not path:
        return ""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        path = "~" + path[len(home) :]
    if len(path) <= limit:
        return path
    parts = path.split(os.sep)
    tail = parts[-1]
    for index in range(len(parts) - 2, 0, -1):
        candidate = os.sep.join(parts[index:])
        if len(parts[0]) + len(candidate) + 3 > limit:
            break
        tail = candidate
    head = parts[0] or ""
    short = f"{head}{os.sep}…{os.sep}{tail}"
    return short if len(short) <= limit else "…" + path[-(limit - 1) :]
