"""A tool node as a list of actions: what it edited, read, searched, ran, installed or fetched.

Tool names of Claude Code, Codex, Gemini CLI, Aider, OpenProgram and MCP servers are mapped to
a few kinds; shell calls go through shell.py; which files a call wrote comes from the store's
own reading of tool arguments (backend/projects/tool_paths.py), the one the auto-commit uses.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...model import Node
from ...projects.tool_paths import PATH_KEYS, WORKDIR_KEYS, patch_paths, tool_written_paths
from . import patterns
from .shell import SimpleCommand, command_line, command_text, parse_script

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "exec_command",
        "run_shell_command",
        "local_shell",
        "terminal",
        "execute_command",
        "run_terminal_cmd",
        "run_command",
        "container.exec",
        "sh",
        "powershell",
    }
)
READ_TOOLS = frozenset({"read", "read_file", "readfile", "notebookread", "view", "read_many_files", "open_file", "cat"})
SEARCH_TOOLS = frozenset(
    {"grep", "glob", "search_file_content", "codebase_search", "file_search", "grep_search", "find", "search_files"}
)
LIST_TOOLS = frozenset({"ls", "list_directory", "list_dir", "list_files", "listdirectory"})
FETCH_TOOLS = frozenset({"webfetch", "web_fetch", "fetch", "fetch_url", "browser", "open_url"})
WEBSEARCH_TOOLS = frozenset({"websearch", "web_search", "google_web_search", "search_web", "web_search_call"})
PLAN_TOOLS = frozenset({"todowrite", "update_plan", "todoread", "exitplanmode", "write_todos"})
TASK_TOOLS = frozenset({"task", "agent", "spawn_agent", "dispatch_agent"})
_CREATED = re.compile(r"\b(created successfully|new file|created and wrote|file created)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ToolAction:
    node: Node
    kind: str  # edit create delete read search list run test install git fetch websearch plan task other
    tool: str  # the tool's name as the agent called it
    paths: tuple[str, ...] = ()
    command: str = ""  # the whole command line, for shell calls
    program: str = ""  # the simple command, e.g. `pytest`, `git commit`
    pattern: str = ""
    packages: tuple[str, ...] = ()
    url: str = ""
    failed: bool = False
    output: str = ""


def tool_key(name: str | None) -> str:
    """`mcp__fs__read_file` -> `read_file`; lower case."""
    key = (name or "").strip().lower()
    if key.startswith("mcp__"):
        key = key.split("__")[-1]
    return key


def arguments(node: Node) -> Any:
    value = node.input
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def failed(node: Node) -> bool:
    meta = node.metadata
    if meta.get("is_error") is True or meta.get("success") is False:
        return True
    code = meta.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return True
    if str(meta.get("status", "")).lower() in ("error", "failed", "failure"):
        return True
    content = node.content or ""
    return content.startswith("Exit code ") and bool(_EXIT_CODE.match(content[:40]))


_EXIT_CODE = re.compile(r"Exit code [1-9]\d*\b")

# A call the user turned down never ran: Claude Code's "The user doesn't want to proceed with
# this tool use", Codex's "exec command rejected by user", OpenCode's "The user rejected
# permission to use this specific tool call", Cline's "The user denied this operation", a
# Gemini-style "cancelled by user"; and statuses that say the same.
_REJECTED = re.compile(
    r"\b(?:the user (?:doesn't|does not|didn't|did not) (?:want to proceed|allow|approve)"
    r"|(?:the )?user (?:has )?(?:rejected|denied|declined|refused|cancel+ed)\b"
    r"|(?:rejected|denied|declined|cancel+ed|aborted) by (?:the )?user\b)",
    re.IGNORECASE,
)
_REJECTED_STATUS = frozenset({"rejected", "denied", "declined", "cancelled", "canceled"})


def _says_rejected(text: str) -> re.Match[str] | None:
    """_REJECTED.search(text), skipped where it cannot match: every form names the user, and a
    case-blind "user" is "user" once lowercased, or has U+017F (long s, which lower() keeps) for its s."""
    low = text.lower()
    if "user" not in low and "u\u017fer" not in low:
        return None
    return _REJECTED.search(text)


def rejected(node: Node) -> bool:
    """A tool call the user turned down (or cancelled) before it ran: no action of the session."""
    meta = node.metadata
    for key in ("status", "tool_use_result"):  # a status an importer kept; Claude Code's "User rejected tool use"
        value = meta.get(key)
        if isinstance(value, str) and (value.lower() in _REJECTED_STATUS or _says_rejected(value[:200])):
            return True
    content = node.content or ""
    head = content[:240].strip()  # a tool's output may be megabytes: its opening says it
    found = _says_rejected(head[:200])
    if found is None:
        return False
    # in the text: what a failed call said, a result that opens with it or is no more than it
    # (a file read that merely mentions a rejection is not one)
    short = len(content) <= 240 and len(head) <= 160 and "\n" not in head
    return found.start() <= 4 or short or failed(node)


def _workdir(args: Any) -> str:
    if isinstance(args, Mapping):
        for key in WORKDIR_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                return value
    return ""


def _first_path(args: Any) -> str:
    if isinstance(args, Mapping):
        for key in (*PATH_KEYS, "absolute_path", "notebook_path", "dir_path"):
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return ""


def _join(base: str, path: str) -> str:
    return path if not base or path.startswith(("/", "~")) else posixpath.join(base, path)


def read_tool(node: Node) -> list[ToolAction]:
    """The actions of one tool node (a shell call may hold several)."""
    key = tool_key(node.name)
    args = arguments(node)
    output = node.content or ""
    bad = failed(node)
    base = _workdir(args)
    action = _action_kind(key, args)
    if key in SHELL_TOOLS or (action == "" and isinstance(args, Mapping) and ("command" in args or "cmd" in args)):
        return _shell_actions(node, key, args, output, bad, base)
    if key == "aider" and isinstance(args, Mapping):
        return _aider_actions(node, args, output)
    written = tool_written_paths([node])
    if written:
        return _edit_actions(node, key, args, written, output, bad)
    if action == "read":
        paths = [_first_path(args)] if _first_path(args) else []
        if isinstance(args, Mapping) and isinstance(args.get("paths"), list):
            paths += [str(p) for p in args["paths"] if isinstance(p, str)]
        return [ToolAction(node, "read", node.name or key, paths=tuple(_join(base, p) for p in paths), failed=bad)]
    if action in ("search", "list"):
        pattern = ""
        if isinstance(args, Mapping):
            pattern = str(args.get("pattern") or args.get("query") or args.get("glob") or "")
        path = _first_path(args)
        return [ToolAction(node, action, node.name or key, paths=(path,) if path else (), pattern=pattern, failed=bad)]
    if action == "fetch":
        url = str(args.get("url") or "") if isinstance(args, Mapping) else ""
        if not url:
            found = patterns.urls(json.dumps(args) if args is not None else "")
            url = found[0] if found else ""
        return [ToolAction(node, "fetch", node.name or key, url=url, failed=bad)]
    if action == "websearch":
        query = str(args.get("query") or args.get("q") or "") if isinstance(args, Mapping) else str(args or "")
        return [ToolAction(node, "websearch", node.name or key, pattern=query or output[:120], failed=bad)]
    return [ToolAction(node, action or "other", node.name or key, failed=bad, output=output)]


def _action_kind(key: str, args: Any) -> str:
    if key in READ_TOOLS:
        command = args.get("command") if isinstance(args, Mapping) else None
        return "read" if command in (None, "view") else ""
    if "editor" in key and isinstance(args, Mapping) and args.get("command") == "view":
        return "read"
    return _KIND_OF_TOOL.get(key, "")


def _tool_kinds() -> dict[str, str]:
    """A tool's kind by its key (a name in two sets takes the first set's kind, as a walk of them did)."""
    kinds: dict[str, str] = {}
    for kind, names in (
        ("search", SEARCH_TOOLS),
        ("list", LIST_TOOLS),
        ("fetch", FETCH_TOOLS),
        ("websearch", WEBSEARCH_TOOLS),
        ("plan", PLAN_TOOLS),
        ("task", TASK_TOOLS),
    ):
        for name in names:
            kinds.setdefault(name, kind)
    return kinds


_KIND_OF_TOOL = _tool_kinds()


def _edit_actions(
    node: Node, key: str, args: Any, written: tuple[str, ...], output: str, bad: bool
) -> list[ToolAction]:
    texts = [v for v in _strings(args)]
    created: set[str] = set()
    deleted: set[str] = set()
    for text in texts:
        if "*** Add File:" in text or "*** Delete File:" in text:
            created.update(re.findall(r"^\*\*\* Add File: (.+?)\s*$", text, re.MULTILINE))
            deleted.update(re.findall(r"^\*\*\* Delete File: (.+?)\s*$", text, re.MULTILINE))
    command = args.get("command") if isinstance(args, Mapping) else None
    whole_create = command == "create" or (key in ("write", "write_file", "create_file") and _CREATED.search(output))
    base = _workdir(args)
    out = []
    for path in written:
        rel = path
        if base and path.startswith(base.rstrip("/") + "/"):
            rel = path[len(base.rstrip("/")) + 1 :]
        kind = "edit"
        if rel in created or path in created or whole_create:
            kind = "create"
        elif rel in deleted or path in deleted:
            kind = "delete"
        out.append(ToolAction(node, kind, node.name or key, paths=(path,), failed=bad))
    return out


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _aider_actions(node: Node, args: Mapping[str, Any], output: str) -> list[ToolAction]:
    out = [ToolAction(node, "edit", "aider", paths=(str(p),)) for p in args.get("paths") or () if isinstance(p, str)]
    for commit in args.get("commits") or ():
        if isinstance(commit, Mapping) and isinstance(commit.get("sha"), str):
            out.append(ToolAction(node, "git", "aider", program="git commit", pattern=commit["sha"], output=output))
    return out


def _shell_actions(node: Node, key: str, args: Any, output: str, bad: bool, base: str) -> list[ToolAction]:
    script = command_text(args)
    if not script.strip():
        return []
    line = command_line(script)
    name = node.name or key
    actions: list[ToolAction] = []
    written = tool_written_paths([node])
    if "*** Begin Patch" in script or written:
        created = set(re.findall(r"^\*\*\* Add File: (.+?)\s*$", script, re.MULTILINE))
        deleted = set(re.findall(r"^\*\*\* Delete File: (.+?)\s*$", script, re.MULTILINE))
        for path in written or tuple(_join(base, p) for p in patch_paths(script)):
            rel = path[len(base.rstrip("/")) + 1 :] if base and path.startswith(base.rstrip("/") + "/") else path
            kind = "create" if rel in created else "delete" if rel in deleted else "edit"
            actions.append(ToolAction(node, kind, name, paths=(path,), command=line, program="apply_patch", failed=bad))
    cwd = base
    commands = parse_script(script)
    for simple in commands:
        if simple.kind == "cd":
            cwd = _join(cwd, simple.files[0]) if simple.files else cwd
            continue
        actions.append(_simple_action(node, name, simple, line, cwd, output, bad, len(commands) == 1))
    if not actions:
        actions.append(ToolAction(node, "run", name, command=line, program=line.split(" ", 1)[0], failed=bad))
    return actions


def _simple_action(
    node: Node, name: str, simple: SimpleCommand, line: str, cwd: str, output: str, bad: bool, alone: bool
) -> ToolAction:
    paths = tuple(_join(cwd, p) for p in simple.files)
    kind = simple.kind
    if kind == "edit" and simple.program == "apply_patch":
        kind = "patch"  # the paths came from the envelope above
    return ToolAction(
        node,
        kind,
        name,
        paths=paths,
        command=line,
        program=simple.program,
        pattern=simple.pattern,
        packages=simple.packages,
        failed=bad,
        output=output if alone or kind in ("test", "run", "git", "install") else "",
    )


@lru_cache(maxsize=8192)  # a session names the same files over and over, and this runs per mention
@lru_cache(maxsize=8192)  # a session names its files again and again: two normpaths each time
def normalize_path(path: str, root: str) -> str:
    """A path as the memory names it: relative to the session root when under it, `./` dropped."""
    text = path.strip()
    if not text:
        return ""
    if root and not text.startswith(("/", "~")):
        text = posixpath.join(root, text)
    text = posixpath.normpath(text)
    if root:
        base = posixpath.normpath(root)
        if text == base:
            return "."
        if text.startswith(base.rstrip("/") + "/"):
            return text[len(base.rstrip("/")) + 1 :]
    return text[2:] if text.startswith("./") else text


@lru_cache(maxsize=8192)
def absolute_path(path: str, root: str) -> str:
    """The absolute form of a path named relative to a session root ("" when it cannot be known)."""
    if path.startswith("/"):
        return posixpath.normpath(path)
    if root.startswith("/"):
        return posixpath.normpath(posixpath.join(root, path))
    return ""
