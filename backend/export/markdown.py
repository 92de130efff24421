"""A session as a Markdown transcript for a pull request or an issue: each turn a section, the
messages as text, tool calls as collapsible `<details>`, file edits as `diff` blocks.

Session text is untrusted here too. Outside code blocks `<`, `>` and `&` become entities, so a
message cannot open an HTML element (no `<img onerror>`, no `</details>` closing ours); a code
fence a message opens is closed where the message ends; code blocks this module writes use a
fence longer than any backtick run in what they hold. Long outputs are cut (the JSON export has
everything).
"""

from __future__ import annotations

import html
import re

from ..edits import tool_edits
from ..model import Node, Turn
from ..node_text import args_text, model_of, thinking_text
from .session import ExportedSession, iso_time, shown

MAX_LINES = 120
MAX_CHARS = 12_000
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _cut(text: str, lines: int = MAX_LINES, chars: int = MAX_CHARS) -> str:
    text = text.rstrip("\n")
    parts = text.split("\n")
    out = "\n".join(parts[:lines])
    if len(out) > chars:
        out = out[:chars]
    if len(out) < len(text):
        rest = text[len(out) :]
        more = rest.count("\n") + (0 if rest.startswith("\n") else 1)
        out += f"\n… {more:,} more line{'s' if more != 1 else ''}, {len(rest):,} characters (the JSON export has all)"
    return out


def fence(text: str, info: str = "") -> str:
    """`text` in a fenced code block whose fence no line of it can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def prose(text: str) -> str:
    """A message's Markdown with HTML made inert outside its code blocks, and its open fences closed."""
    out: list[str] = []
    open_fence = ""
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if open_fence:
            out.append(line)
            closes = m is not None and m.group(1)[0] == open_fence[0] and len(m.group(1)) >= len(open_fence)
            if closes and not line.strip()[len(m.group(1)) :].strip():
                open_fence = ""
            continue
        if m:
            open_fence = m.group(1)
            out.append(line)
            continue
        out.append(html.escape(line, quote=False))
    if open_fence:
        out.append(open_fence)
    return "\n".join(out)


def _summary(text: str) -> str:
    """Text for inside <summary>: one line, HTML-escaped."""
    line = " ".join(text.split())
    line = line if len(line) <= 120 else line[:119] + "…"
    return html.escape(line)


def _tool(node: Node) -> str:
    edits = tool_edits(node)
    name = shown(node.name or "tool")
    if edits:
        files = ", ".join(f"{shown(e.path)} +{e.additions} −{e.deletions}" for e in edits)
        head = f"✎ {_summary(name)}: {_summary(files)}"
    else:
        args_line = args_text(node.input)
        head = f"⚙ {_summary(name)}" + (f": <code>{_summary(shown(args_line))}</code>" if args_line else "")
    parts = [f"<details><summary>{head}</summary>", ""]
    if edits:
        for edit in edits:
            body = "\n".join(text if origin == "@" else f"{origin}{text}" for origin, text in edit.lines)
            path = shown(edit.path)
            parts += [
                f"`{path}`" if "`" not in path else html.escape(path),
                "",
                fence(shown(_cut(body, 400, 40_000)), "diff"),
                "",
            ]
    else:
        args = shown(args_text(node.input, pretty=True))
        if args:
            parts += [fence(_cut(args), "json" if not isinstance(node.input, str) else "text"), ""]
    result = shown(node.content)
    if result.strip():
        parts += ["result:", "", fence(_cut(result), "text"), ""]
    else:
        parts += ["result: (no output)", ""]
    parts.append("</details>")
    return "\n".join(parts)


def _message(node: Node) -> str:
    who = node.role
    model = model_of(node)
    head = f"**{who}**" + (f" · `{shown(model)}`" if model and "`" not in model else "")
    when = iso_time(node.created_at)
    if when:
        head += f" · {when}"
    parts = [head, ""]
    thinking = shown(thinking_text(node))
    if thinking:
        parts += ["<details><summary>thinking</summary>", "", fence(_cut(thinking), "text"), "", "</details>", ""]
    text = shown(node.content).strip("\n")
    if text:
        parts += [prose(_cut(text, 400, 40_000)), ""]
    return "\n".join(parts)


def _turn(turn: Turn) -> str:
    user = turn.user
    title = f"## Turn {turn.number}" if turn.number else "## Before the first prompt"
    when = iso_time(user.created_at) if user is not None else ""
    out = [title + (f" · {when}" if when else ""), ""]
    for node in turn.nodes:
        if node.is_tool:
            out += [_tool(node), ""]
        elif node.role == "system":
            body = shown(node.content)
            out += ["<details><summary>system message</summary>", "", fence(_cut(body), "text"), "", "</details>", ""]
        else:
            out.append(_message(node))
    return "\n".join(out)


def render_markdown(session: ExportedSession) -> str:
    meta = session.meta
    title = shown(session.title)
    lines = [f"# {html.escape(' '.join(title.split()), quote=False)}", ""]
    facts = [f"session `{meta.id}`"]
    if meta.source:
        facts.append(shown(meta.source))
    if meta.created_at:
        facts.append(f"started {iso_time(meta.created_at)}")
    facts.append(f"branch `{session.branch}`")
    numbers = [t.number for t in session.turns if t.number > 0]
    if numbers and (numbers[0] != 1 or numbers[-1] != session.total_turns):
        facts.append(f"turns {numbers[0]}–{numbers[-1]} of {session.total_turns}")
    else:
        facts.append(f"{session.total_turns} turn{'s' if session.total_turns != 1 else ''}")
    facts.append("secrets redacted" if session.redacted else "raw (not redacted)")
    lines += [" · ".join(facts), ""]
    others = [b for b in session.branches if b.name != session.branch]
    if others:
        listed = ", ".join(f"`{b.name}` ({b.turns} turns)" for b in others)
        lines += [f"Other branches: {listed}", ""]
    for turn in session.turns:
        lines.append(_turn(turn))
    lines.append("<sub>Exported by opmem.</sub>")
    return "\n".join(lines).rstrip("\n") + "\n"
