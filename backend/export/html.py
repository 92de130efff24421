"""A session as one self-contained HTML file: the replay, turn by turn, that works offline.

The page is the data plus one script. The session's nodes go into a `<script
type="application/json">` (never executed) with `<`, `>`, `&` and U+2028/U+2029 escaped, so no
text in a message can close the element; the script builds the page with `textContent` only,
so no text is ever read as markup. A Content-Security-Policy allows that one script (by its
hash) and inline styles, and nothing else: no request leaves the page, not even for an image.

A long turn stays light: only the open turn is drawn, tool calls are drawn when unfolded, and
long texts show their first lines with "show more" / "show all".
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import cache
from pathlib import Path
from typing import Any

from ..edits import tool_edits
from ..model import Node, Turn
from ..node_text import args_text, model_of, size_label, thinking_text
from .session import ExportedSession, first_line, iso_time, shown

SUMMARY_CHARS = 160


@cache
def _asset(name: str) -> str:
    return (Path(__file__).with_name(name)).read_text(encoding="utf-8")


def script_json(value: Any) -> str:
    """JSON that can sit inside a <script> element: nothing in it closes the element or starts a comment.

    A lone surrogate (possible in a Python string read from a broken transcript) becomes its
    JSON escape, so the file is always valid UTF-8.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    text = (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _depth(node: Node, by_id: dict[str, Node]) -> int:
    depth, cur, seen = 0, node, {node.id}
    while cur.called_by is not None and cur.called_by in by_id and cur.called_by not in seen:
        cur = by_id[cur.called_by]
        seen.add(cur.id)
        if cur.is_tool:
            depth += 1
    return depth


def _tool(node: Node, by_id: dict[str, Node]) -> dict[str, Any]:
    edits = tool_edits(node)
    summary = shown(_one_line(args_text(node.input), SUMMARY_CHARS))
    if edits:
        added, removed = sum(e.additions for e in edits), sum(e.deletions for e in edits)
        summary = _one_line(f"{', '.join(shown(e.path) for e in edits)}  +{added} −{removed}", SUMMARY_CHARS)
    text = shown(node.content)
    out: dict[str, Any] = {
        "kind": "tool",
        "name": shown(node.name or "tool"),
        "time": iso_time(node.created_at),
        "summary": summary,
        "args": shown(args_text(node.input, pretty=True)),
        "text": text,
        "size": size_label(text) if text else "no output",
        "depth": _depth(node, by_id),
    }
    if edits:
        out["edits"] = [
            {
                "path": shown(e.path),
                "status": e.status,
                "add": e.additions,
                "del": e.deletions,
                "lines": [[origin, shown(text)] for origin, text in e.lines],
            }
            for e in edits
        ]
    return out


def _turn(turn: Turn, fork_names: dict[str, str]) -> dict[str, Any]:
    by_id = {n.id: n for n in turn.nodes}
    nodes: list[dict[str, Any]] = []
    items = list(turn.nodes)
    for index, node in enumerate(items):
        if node.is_tool:
            nodes.append(_tool(node, by_id))
        elif node.role == "system":
            nodes.append({"kind": "system", "name": shown(node.name or ""), "text": shown(node.content)})
        else:
            calls = index + 1 < len(items) and items[index + 1].is_tool
            nodes.append(
                {
                    "kind": "message",
                    "role": node.role,
                    "model": shown(model_of(node)),
                    "time": iso_time(node.created_at),
                    "text": shown(node.content),
                    "thinking": shown(thinking_text(node)),
                    "calls": calls,
                }
            )
    user = turn.user
    return {
        "n": turn.number,
        "time": iso_time(user.created_at if user is not None else turn.nodes[0].created_at),
        "prompt": shown(first_line(user.content if user is not None else "", 90)),
        "commit": turn.commit or "",
        "forks": [shown(fork_names.get(head, head)) for head in turn.fork_heads],
        "nodes": nodes,
    }


def page_data(session: ExportedSession) -> dict[str, Any]:
    """What the page's script reads: every text already free of terminal escapes (and redacted
    unless the export is raw)."""
    fork_names = {b.head_id: b.name for b in session.branches}
    return {
        "title": shown(session.title),
        "session": session.meta.id,
        "branch": shown(session.branch),
        "total_turns": session.total_turns,
        "redacted": session.redacted,
        "branches": [
            {"name": shown(b.name), "turns": b.turns, "current": b.is_current, "exported": b.name == session.branch}
            for b in session.branches
        ],
        "turns": [_turn(turn, fork_names) for turn in session.turns],
    }


def _facts(session: ExportedSession) -> str:
    meta = session.meta
    parts = [f"session {meta.id}"]
    if meta.source:
        parts.append(meta.source)
    if meta.agent_id:
        parts.append(f"agent {meta.agent_id}")
    if meta.created_at:
        parts.append(f"started {iso_time(meta.created_at)}")
    parts.append(f"branch {session.branch}")
    numbers = [t.number for t in session.turns if t.number > 0]
    if numbers and (numbers[0] != 1 or numbers[-1] != session.total_turns):
        parts.append(f"turns {numbers[0]}–{numbers[-1]} of {session.total_turns}")
    else:
        parts.append(f"{session.total_turns} turn{'s' if session.total_turns != 1 else ''}")
    parts.append("secrets redacted" if session.redacted else "raw: not redacted")
    return " · ".join(shown(p) for p in parts)


def content_security_policy(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def render_html(session: ExportedSession) -> str:
    """The whole page as one string (UTF-8 when written)."""
    script = _asset("page.js")
    esc = html.escape
    title = shown(session.title)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(content_security_policy(script))}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="opmem export">
<title>{esc(_one_line(title, 120))} · opmem</title>
<style>
{_asset("page.css")}</style>
</head>
<body>
<header id="top">
<h1 id="title">{esc(title)}</h1>
<div id="facts">{esc(_facts(session))}</div>
<nav id="bar">
<button id="prev" type="button" title="previous turn (← or k)">←</button>
<span id="counter" aria-live="polite">turn</span>
<button id="next" type="button" title="next turn (→ or j)">→</button>
<button id="tools-toggle" type="button" title="open or close every tool call of the turn (o)">tool calls</button>
<button id="thinking-toggle" type="button" title="show or hide the thinking (t)">thinking</button>
<span class="hint">← → or j k: turns · o: tool calls · t: thinking</span>
</nav>
</header>
<main>
<aside>
<h2>Turns</h2>
<ol id="turn-list"></ol>
<h2>Branches</h2>
<ul id="branch-list"></ul>
</aside>
<section id="turn"><noscript>This replay needs JavaScript; `opmem export --format md` writes a plain transcript.</noscript></section>
</main>
<footer>Exported by opmem from session {esc(session.meta.id)}. This file makes no network request.</footer>
<script type="application/json" id="opmem-data">{script_json(page_data(session))}</script>
<script>{script}</script>
</body>
</html>
"""
