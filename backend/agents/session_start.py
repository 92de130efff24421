"""`opmem hook session-start`: Claude Code's SessionStart hook, printing the project's core block.

Claude Code runs the hook with JSON on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name: "SessionStart"`, `source: startup|resume|clear|compact`) and adds
`hookSpecificOutput.additionalContext` of the JSON printed on stdout to the model's context
(hooks reference, code.claude.com/docs/en/hooks, "SessionStart"). Output over 10,000
characters is saved to a file and only a 2 KB preview reaches the model (documented cap; see
anthropics/claude-code#91614, #42369), and additionalContext is reported cut at 8,000 characters
(danielmiessler/LifeOS#2138, measured on the binary): the context is kept under MAX_CONTEXT_CHARS,
cut at a line boundary.

It runs before every session, so it is a light path: no click, no textual, no store. The
block is the precomputed file the distillation writes, memory/projects/<id>/core.md for the
project whose folder holds the hook's `cwd` (the innermost of projects/projects.json), else
memory/core.md; a block with a pointer to the MCP tools follows. Secrets never leave: the
text passes backend/privacy's redact_text. It never fails the agent's start: any error prints
an empty additionalContext, one line on stderr, and exits 0.

Imported by opmem_tui/entry.py before anything else, so keep its imports to json, os, sys
and backend/privacy (measured by bench/session_start_bench.py).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

MAX_CONTEXT_CHARS = 8000
MAX_STDIN_BYTES = 1 << 20
MAX_CORE_BYTES = 64 * 1024
TOOLS_LINE = (
    "opmem memory tools (MCP server `opmem`): memory_search(query), memory_timeline(since), "
    "memory_open_session(session_id, turn), memory_git_log(project_id), memory_graph_neighbors(entity)."
)


def _projects(home: str) -> list[dict[str, Any]]:
    try:
        with open(os.path.join(home, "projects", "projects.json"), "rb") as handle:
            data = json.loads(handle.read())
    except FileNotFoundError:
        return []
    items = data.get("projects") if isinstance(data, dict) else data
    return [p for p in items if isinstance(p, dict)] if isinstance(items, list) else []


def project_for(home: str, cwd: str) -> dict[str, Any] | None:
    """The bound project whose folder holds `cwd` (the innermost), as registry.find decides."""
    target = os.path.realpath(cwd)
    best: dict[str, Any] | None = None
    for project in _projects(home):
        root, pid = project.get("workdir"), project.get("id")
        if not isinstance(root, str) or not root or not isinstance(pid, str) or not pid:
            continue
        inside = target == root or target.startswith(root.rstrip(os.sep) + os.sep)
        if inside and (best is None or len(root) > len(best["workdir"])):
            best = project
    return best


def _file_name(project_id: str) -> str:
    from ..memory.slugs import safe_name  # light (hashlib, re, unicodedata)

    return safe_name(project_id)


def core_text(home: str, cwd: str) -> str:
    """The core block for `cwd`: its project's core.md, else the global one; "" when neither exists."""
    memory = os.path.join(home, "memory")
    project = project_for(home, cwd)
    paths = []
    if project is not None:
        paths.append(os.path.join(memory, "projects", _file_name(project["id"]), "core.md"))
    paths.append(os.path.join(memory, "core.md"))
    for path in paths:
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_CORE_BYTES)
        except FileNotFoundError:
            continue
        return data.decode("utf-8", "replace")
    return ""


def fit(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """`text` cut to at most `limit` characters at a line boundary."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1] if cut > 0 else ""


def context_for(home: str, cwd: str) -> str:
    core = core_text(home, cwd)
    if not core.strip():
        return ""
    from ..privacy import redact_text
    from ..safe_text import plain

    body = plain(redact_text(core)).rstrip("\n")
    return fit(body + "\n" + TOOLS_LINE + "\n")


def output(context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}})


def _default_home() -> str:
    env = os.environ.get("OPMEM_HOME")
    if env:
        return os.path.expanduser(env)
    import platformdirs

    return platformdirs.user_data_dir("opmem", appauthor=False)


def run(home: str | None, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    context = ""
    try:
        raw = stdin.read(MAX_STDIN_BYTES)
        data = json.loads(raw) if raw.strip() else {}
        cwd = data.get("cwd") if isinstance(data, dict) else None
        if not isinstance(cwd, str) or not cwd:
            cwd = os.getcwd()
        context = context_for(home or _default_home(), cwd)
    except Exception as exc:  # never fail the agent's start
        message = " ".join(str(exc).split())[:300]
        stderr.write(f"opmem hook session-start: {type(exc).__name__}: {message}\n")
        context = ""
    stdout.write(output(context) + "\n")
    stdout.flush()
    return 0


def main(argv: list[str], home: str | None = None) -> int:
    """`[--home H] hook session-start` (argv without the program name) → exit status, always 0."""
    return run(home, sys.stdin, sys.stdout, sys.stderr)
