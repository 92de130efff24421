"""Which files a turn's tool calls wrote, and which texts record a `git commit`.

Plain functions over Nodes (backend/model.py) so the auto-commit and the commit linker can be
tested on hand-made turns. Paths come back as the tools gave them (absolute, or relative to the
tool's own working directory when it named one); ProjectGit maps them into a repository.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..model import Node

# Argument keys that name the file a write/edit tool changes (Claude Code, Gemini, Cursor,
# MCP filesystem servers, str_replace_editor, ...).
PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "target_file", "file", "filepath")
# Keys naming the folder relative paths are resolved against (Codex shell `workdir`, ...).
WORKDIR_KEYS = ("workdir", "cwd", "working_directory")

# A tool name counts as a writer when one of its words is here. "TodoWrite" matches too, but it
# has no path argument, so it yields nothing.
_WRITER_WORDS = frozenset(
    {
        "write",
        "edit",
        "multiedit",
        "notebookedit",
        "patch",
        "replace",
        "create",
        "insert",
        "append",
        "save",
        "delete",
        "remove",
        "move",
        "rename",
        "applypatch",
        "strreplace",
    }
)
# str_replace_editor-style tools carry a `command`; only these change the file.
_EDITOR_WRITE_COMMANDS = frozenset({"create", "str_replace", "insert", "undo_edit", "write", "append"})
_READ_ONLY_WORDS = frozenset({"read", "view", "list", "glob", "grep", "search", "find", "get", "fetch"})

_PATCH_LINE = re.compile(r"^\*\*\* (Update File|Add File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
_GIT_COMMIT = re.compile(r"\bgit\b(?:\s+(?:-[cC]\s+\S+|--?[\w.-]+(?:=\S+)?))*\s+commit\b")


def _words(name: str) -> set[str]:
    """`mcp__fs__write_file` -> {mcp, fs, write, file}; `MultiEdit` -> {multi, edit, multiedit}."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", spaced) if p]
    words = set(parts)
    words.add(re.sub(r"[^a-z0-9]", "", name.lower()))
    return words


def _arguments(node: Node) -> Any:
    """The tool's arguments; a JSON string (Codex function_call) is parsed."""
    value = node.input
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def _strings(value: Any) -> Iterator[str]:
    """Every string inside nested lists and mappings (a shell command may be a list)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def patch_paths(text: str) -> list[str]:
    """Paths named by an apply_patch envelope (`*** Update File: x`, Add, Delete, `*** Move to:`)."""
    return [m.group(2) for m in _PATCH_LINE.finditer(text)]


def is_writer_tool(name: str | None) -> bool:
    if not name:
        return False
    words = _words(name)
    return bool(words & _WRITER_WORDS)


def _join(base: str | None, path: str) -> str:
    if base and not os.path.isabs(path):
        return os.path.join(base, path)
    return path


def _node_paths(node: Node) -> list[str]:
    args = _arguments(node)
    name = node.name or ""
    base = None
    if isinstance(args, Mapping):
        base = next((args[k] for k in WORKDIR_KEYS if isinstance(args.get(k), str) and args[k]), None)

    found: list[str] = []
    # apply_patch text can sit anywhere: a freeform custom tool input, {"input": ...}, or a shell
    # command `apply_patch <<'PATCH' ...`. The envelope markers make it unambiguous.
    for text in _strings(args):
        if "*** Begin Patch" in text or "*** Update File:" in text or "*** Add File:" in text:
            found.extend(_join(base, p) for p in patch_paths(text))
    if found:
        return found

    if not is_writer_tool(name) or not isinstance(args, Mapping):
        return []
    words = _words(name)
    if words & _READ_ONLY_WORDS and not words & {"write", "edit", "patch", "replace", "create"}:
        return []
    command = args.get("command")
    lowered = name.lower()
    is_editor = "editor" in lowered or "str_replace" in lowered
    if isinstance(command, str) and is_editor and command not in _EDITOR_WRITE_COMMANDS:
        return []
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            found.append(_join(base, value.strip()))
            break
    for key in ("destination", "new_path", "target"):  # move/rename tools: both ends change
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            found.append(_join(base, value.strip()))
    source = args.get("source")
    if isinstance(source, str) and source.strip() and found:
        found.append(_join(base, source.strip()))
    edits = args.get("edits")  # MultiEdit-style batches that name a file per edit
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, Mapping):
                for key in PATH_KEYS:
                    value = edit.get(key)
                    if isinstance(value, str) and value.strip():
                        found.append(_join(base, value.strip()))
                        break
    return found


def tool_written_paths(nodes: Iterable[Node]) -> tuple[str, ...]:
    """Paths the tool nodes among `nodes` wrote, in first-seen order, without duplicates."""
    seen: dict[str, None] = {}
    for node in nodes:
        if not node.is_tool:
            continue
        for path in _node_paths(node):
            seen.setdefault(path, None)
    return tuple(seen)


def is_git_commit_call(node: Node) -> bool:
    """A tool node whose arguments run `git commit` (also `git -C dir commit`, `git -c k=v commit`)."""
    if not node.is_tool:
        return False
    return any(_GIT_COMMIT.search(text) for text in _strings(_arguments(node)))


def git_commit_texts(nodes: Iterable[Node]) -> list[str]:
    """Arguments and results of the `git commit` tool calls among `nodes`."""
    texts: list[str] = []
    for node in nodes:
        if is_git_commit_call(node):
            texts.extend(_strings(_arguments(node)))
            if node.content:
                texts.append(node.content)
    return texts
