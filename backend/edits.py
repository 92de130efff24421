"""File edits made by tool calls, as diffs: Claude Code's Edit, MultiEdit and Write, and Codex's
apply_patch (as its own tool or inside a shell command). Pure functions over a tool node's
arguments; the replay and the exports draw what they return. Anything else is not an edit (None)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .model import Node
from .projects.tool_writes import strings  # every string in the arguments (a shell command is a list)

EDIT_TOOLS = {"edit", "multiedit", "write", "str_replace_based_edit_tool", "apply_patch"}
PATCH_BEGIN = "*** Begin Patch"
PATCH_FILE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")
MAX_DIFF_LINES = 4000  # a larger edit is cut (the JSON view has all of it)


@dataclass(frozen=True, slots=True)
class FileEdit:
    path: str
    status: str  # "A" a new file, "M" changed, "D" deleted
    lines: tuple[tuple[str, str], ...]  # (origin, text): "+", "-", " " or "@" (a hunk header)

    @property
    def additions(self) -> int:
        return sum(1 for origin, _ in self.lines if origin == "+")

    @property
    def deletions(self) -> int:
        return sum(1 for origin, _ in self.lines if origin == "-")


def _text(args: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def _replace_diff(old: str, new: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
    for line in diff:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            out.append(("@", line))
        else:
            out.append((line[:1] or " ", line[1:]))
    return out


def _cut(lines: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], ("@", f"… {len(lines) - MAX_DIFF_LINES:,} more lines (J: the JSON)")]
    return tuple(lines)


def parse_patch(text: str) -> list[FileEdit]:
    """The files of an apply_patch text (`*** Begin Patch` ... `*** End Patch`)."""
    start = text.find(PATCH_BEGIN)
    if start < 0:
        return []
    edits: list[FileEdit] = []
    path, status, lines = "", "", []

    def close() -> None:
        if path:
            edits.append(FileEdit(path, status, _cut(lines)))

    for raw in text[start + len(PATCH_BEGIN) :].splitlines():
        header = next((prefix for prefix in PATCH_FILE if raw.startswith(prefix)), None)
        if header is not None:
            close()
            path, status, lines = raw[len(header) :].strip(), "AMD"[PATCH_FILE.index(header)], []
        elif raw.startswith("*** End Patch"):
            break
        elif raw.startswith("*** Move to: ") and path:
            path = f"{path} → {raw[len('*** Move to: ') :].strip()}"
        elif path:
            if raw.startswith("@@"):
                lines.append(("@", raw))
            elif raw[:1] in ("+", "-", " "):
                lines.append((raw[0], raw[1:]))
            elif raw:
                lines.append((" ", raw))
    close()
    return edits


def tool_edits(node: Node) -> list[FileEdit]:
    """The file edits a tool call made, as diffs; [] when it is not an edit."""
    name = (node.name or "").casefold()
    args = node.input
    if name not in EDIT_TOOLS:
        # Codex runs apply_patch through its shell tool too
        patch = next((s for s in strings(args) if PATCH_BEGIN in s), None)
        return parse_patch(patch) if patch else []
    if name == "apply_patch":
        patch = next((s for s in strings(args) if PATCH_BEGIN in s), None)
        return parse_patch(patch) if patch else []
    if not isinstance(args, Mapping):
        return []
    path = _text(args, "file_path", "path", "filename") or "?"
    if name == "write" or (name == "str_replace_based_edit_tool" and args.get("command") == "create"):
        content = _text(args, "content", "file_text")
        if content is None:
            return []
        return [FileEdit(path, "A", _cut([("+", line) for line in content.splitlines()]))]
    if name == "multiedit":
        edits = args.get("edits")
        if not isinstance(edits, list):
            return []
        lines: list[tuple[str, str]] = []
        for edit in edits:
            if isinstance(edit, Mapping):
                old, new = _text(edit, "old_string", "old"), _text(edit, "new_string", "new")
                if old is not None and new is not None:
                    lines.extend(_replace_diff(old, new))
        return [FileEdit(path, "M", _cut(lines))] if lines else []
    old, new = _text(args, "old_string", "old", "old_str"), _text(args, "new_string", "new", "new_str")
    if old is None or new is None:
        return []
    return [FileEdit(path, "M", _cut(_replace_diff(old, new)))]
