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
project the hook's `cwd` belongs to (projects/identity.py decides, as for `opmem core`), else
memory/core.md; a block with a pointer to the MCP tools follows. Secrets never leave: the
text passes backend/privacy's redact_text: when the core.md files are written (after a
distillation or sleep, and at `opmem connect claude`) the context is rendered and redacted
once into <home>/agents/context/<name>.json with the stamp (mtime, size, inode) of the core.md
it came from; the hook hands that back while the stamp matches, and renders and redacts the
file itself otherwise (a hand-edited core.md, no cache yet). It never fails the agent's start: any error prints
an empty additionalContext, one line on stderr, and exits 0.

Imported by opmem_tui/entry.py before anything else, so keep its imports to json, os, sys,
backend/privacy and backend/projects/identity (which loads pygit2 only for a folder outside every
bound project's folder; measured by bench/session_start_bench.py).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, TextIO

MAX_CONTEXT_CHARS = 8000
MAX_STDIN_BYTES = 1 << 20
MAX_CORE_BYTES = 64 * 1024
GLOBAL_CACHE = "_global"  # safe_name never starts with "_"
# recall.registry.tools_line(), spelt out: this module imports nothing of opmem (a test keeps them equal).
TOOLS_LINE = (
    "opmem memory tools (MCP server `opmem`): memory_open_session(session_id), memory_git_log(project_id), "
    "memory_git_show(commit), memory_timeline(entity), memory_graph_neighbors(entity), memory_search(query), "
    "memory_handoff(session_id), memory_usage(report)."
)


def _projects(home: str) -> list[dict[str, Any]]:
    try:
        with open(os.path.join(home, "projects", "projects.json"), "rb") as handle:
            data = json.loads(handle.read())
    except FileNotFoundError:
        return []
    items = data.get("projects") if isinstance(data, dict) else data
    return [p for p in items if isinstance(p, dict)] if isinstance(items, list) else []


def project_for(home: str, cwd: str) -> str:
    """The id of the project `cwd` belongs to, as `opmem core` decides (projects/identity.py): a
    bound project by folder or repository, else a folder project whose core.md the memory wrote."""
    from ..projects.identity import Bound, project_for_folder

    memory = os.path.join(home, "memory", "projects")
    projects = [
        Bound(p["id"], p["workdir"])
        for p in _projects(home)
        if isinstance(p.get("id"), str) and p["id"] and isinstance(p.get("workdir"), str) and p["workdir"]
    ]
    known = lambda pid: os.path.exists(os.path.join(memory, _file_name(pid), "core.md"))  # noqa: E731
    return project_for_folder(cwd, projects, known=known)


_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{0,99}")
_MAYBE_DEVICE = ("con", "prn", "aux", "nul", "com", "lpt", "clock", "conin", "conout")


def _file_name(project_id: str) -> str:
    """memory/slugs.safe_name(project_id): a plain lower-case id is its own name (checked here
    without loading hashlib); anything else, or anything near a device name, asks safe_name."""
    plain = _PLAIN_NAME.fullmatch(project_id) and ".." not in project_id and not project_id.endswith(".")
    if plain and not project_id.split(".", 1)[0].startswith(_MAYBE_DEVICE):
        return project_id
    from ..memory.slugs import safe_name

    return safe_name(project_id)


def core_file(home: str, cwd: str) -> tuple[str, str] | None:
    """(path, cache name) of the core.md for `cwd`: its project's, else the global one; None when
    neither exists yet."""
    memory = os.path.join(home, "memory")
    project = project_for(home, cwd)
    candidates = []
    if project:
        name = _file_name(project)
        candidates.append((os.path.join(memory, "projects", name, "core.md"), name))
    candidates.append((os.path.join(memory, "core.md"), GLOBAL_CACHE))
    for path, name in candidates:
        if os.path.exists(path):
            return path, name
    return None


def _stamp(path: str) -> list[int]:
    info = os.stat(path)
    return [info.st_mtime_ns, info.st_size, info.st_ino]


def cache_path(home: str, name: str) -> str:
    return os.path.join(home, "agents", "context", name + ".json")


def _cached(home: str, name: str, stamp: list[int]) -> str | None:
    try:
        with open(cache_path(home, name), "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("stamp") == stamp and isinstance(data.get("context"), str):
        return data["context"]
    return None


def render_context(core: str) -> str:
    """The additionalContext for a core block: redacted, plain text, the tools line, within the limit."""
    if not core.strip():
        return ""
    from ..privacy import redact_text
    from ..safe_text import plain

    body = plain(redact_text(core)).rstrip("\n")
    return fit(body + "\n" + TOOLS_LINE + "\n")


def _read_core(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read(MAX_CORE_BYTES).decode("utf-8", "replace")


def write_cache(home: str, path: str, name: str) -> None:
    """Keep the rendered context of one core.md (redacted now) with the stamp of the bytes it
    was made from, so the hook answers without loading the detector while core.md is unchanged."""
    stamp = _stamp(path)  # before reading: a write meanwhile changes it, and the hook renders anew
    context = render_context(_read_core(path))
    target = cache_path(home, name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"stamp": stamp, "context": context}, handle, ensure_ascii=False)
    os.replace(tmp, target)


def fit(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """`text` cut to at most `limit` characters at a line boundary."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1] if cut > 0 else ""


def context_for(home: str, cwd: str) -> str:
    found = core_file(home, cwd)
    if found is None:
        return ""
    path, name = found
    cached = _cached(home, name, _stamp(path))
    if cached is not None:
        return cached
    return render_context(_read_core(path))


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
