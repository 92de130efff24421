"""What each file-writing tool call did to its file, told from the call's own arguments.

A write is a path (as the tool named it, joined with the tool's working folder) and an effect:
the whole new text (Write, create), string replacements (Edit, MultiEdit, Gemini `replace`,
str_replace_editor), a line insertion, an apply_patch update, a removal, or Opaque when the
arguments do not say what the file became (NotebookEdit, an editor's undo, a write without its
text). write_replay.py applies these effects to a turn's start content.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model import Node

# Argument keys that name the file a write/edit tool changes (Claude Code, Gemini, Cursor,
# MCP filesystem servers, str_replace_editor, ...).
PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "target_file", "file", "filepath")
# Keys naming the folder relative paths are resolved against (Codex shell `workdir`, ...).
WORKDIR_KEYS = ("workdir", "cwd", "working_directory")
# Move/rename tools name the new place with one of these.
DEST_KEYS = ("destination", "new_path", "target")

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
_STRONG_WRITER_WORDS = frozenset({"write", "edit", "patch", "replace", "create"})
# (old, new) argument names of string-replacing editors.
_REPLACE_PAIRS = (
    ("old_string", "new_string"),
    ("old_str", "new_str"),
    ("oldText", "newText"),
    ("old_text", "new_text"),
)

_PATCH_HEADER = re.compile(r"^\*\*\* (Update File|Add File|Delete File|Move to): (.+?)\s*$")
_PATCH_LINE = re.compile(r"^\*\*\* (Update File|Add File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)


# -- effects ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Put:
    """The file's whole new text."""

    text: str


@dataclass(frozen=True, slots=True)
class Replace:
    """String replacements in order: (old, new, every occurrence)."""

    edits: tuple[tuple[str, str, bool], ...]


@dataclass(frozen=True, slots=True)
class Insert:
    """`text` inserted after line `line` (0: at the top)."""

    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Chunk:
    """One `@@` section of an apply_patch update."""

    context: str | None  # the `@@ <line>` anchor, if any
    old: tuple[str, ...]
    new: tuple[str, ...]
    end_of_file: bool = False


@dataclass(frozen=True, slots=True)
class Patch:
    """An apply_patch update; with `source`, the file is `source` moved here, then patched."""

    chunks: tuple[Chunk, ...]
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Remove:
    pass


@dataclass(frozen=True, slots=True)
class Opaque:
    """The call changed the file in a way its arguments do not tell."""

    reason: str


Effect = Put | Replace | Insert | Patch | Remove | Opaque
_UNREAD: Effect = Opaque("not read: only the paths were asked for")


@dataclass(frozen=True, slots=True)
class FileWrite:
    path: str  # as the tool named it, joined with the tool's working folder
    effect: Effect


# -- reading a call's arguments -------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _words(name: str) -> frozenset[str]:
    """`mcp__fs__write_file` -> {mcp, fs, write, file}; `MultiEdit` -> {multi, edit, multiedit}.

    Cached: a session calls a handful of tools thousands of times."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", spaced) if p]
    words = set(parts)
    words.add(re.sub(r"[^a-z0-9]", "", name.lower()))
    return frozenset(words)


def arguments(node: Node) -> Any:
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


def strings(value: Any) -> list[str]:
    """Every string inside nested lists and mappings (a shell command may be a list), in order."""
    out: list[str] = []
    _collect_strings(value, out)
    return out


def _collect_strings(value: Any, out: list[str]) -> None:
    # a list filled by plain calls: a generator per level cost more than the walk (every tool node is walked)
    if isinstance(value, str):
        out.append(value)
    elif value.__class__ is dict or isinstance(value, Mapping):
        for item in value.values():
            _collect_strings(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_strings(item, out)


def is_writer_tool(name: str | None) -> bool:
    return bool(name) and bool(_words(name) & _WRITER_WORDS)


def _join(base: str | None, path: str) -> str:
    if base and not os.path.isabs(path):
        return os.path.join(base, path)
    return path


def _text_arg(args: Mapping[str, Any], *keys: str) -> str | None:
    return next((args[k].strip() for k in keys if isinstance(args.get(k), str) and args[k].strip()), None)


# -- apply_patch envelopes ------------------------------------------------------------------------


def patch_paths(text: str) -> list[str]:
    """Paths named by an apply_patch envelope (`*** Update File: x`, Add, Delete, `*** Move to:`)."""
    return [m.group(2) for m in _PATCH_LINE.finditer(text)]


def is_patch_text(text: str) -> bool:
    return "*** Begin Patch" in text or "*** Update File:" in text or "*** Add File:" in text


class _PatchFormatError(ValueError):
    pass


def _chunks(body: list[str]) -> tuple[Chunk, ...]:
    """The `@@` sections of an update, read the way Codex's apply_patch reads them."""
    found: list[tuple[str | None, list[str], list[str], list[bool]]] = []
    for line in body:
        if line.startswith("@@"):
            found.append((line[2:].strip() or None, [], [], [False]))
            continue
        if line.strip() == "*** End of File":
            if found:
                found[-1][3][0] = True
            continue
        if not found:
            found.append((None, [], [], [False]))
        _, old, new, _eof = found[-1]
        mark, rest = line[:1], line[1:]
        if mark in ("", " "):
            old.append(rest)
            new.append(rest)
        elif mark == "-":
            old.append(rest)
        elif mark == "+":
            new.append(rest)
        else:
            raise _PatchFormatError(f"unexpected patch line {line[:40]!r}")
    return tuple(Chunk(ctx, tuple(old), tuple(new), eof[0]) for ctx, old, new, eof in found)


def _section_writes(kind: str, path: str, moved_to: str | None, body: list[str]) -> list[tuple[str, Effect]]:
    if kind == "Add File":
        if any(line and not line.startswith("+") for line in body):
            return [(path, Opaque("an Add File section holds lines that are not additions"))]
        return [(path, Put("".join(line[1:] + "\n" for line in body if line)))]
    if kind == "Delete File":
        return [(path, Remove())]
    try:
        chunks = _chunks(body)
    except _PatchFormatError as exc:
        return [(path, Opaque(str(exc))), *([(moved_to, Opaque(str(exc)))] if moved_to else [])]
    if moved_to is None:
        return [(path, Patch(chunks))]
    return [(path, Remove()), (moved_to, Patch(chunks, source=path))]


def patch_writes(text: str) -> list[tuple[str, Effect]]:
    """What an apply_patch envelope does, file by file, in the order its headers name the files."""
    out: list[tuple[str, Effect]] = []
    section: tuple[str, str] | None = None
    moved_to: str | None = None
    body: list[str] = []

    def flush() -> None:
        if section is not None:
            out.extend(_section_writes(section[0], section[1], moved_to, body))

    for line in text.replace("\r\n", "\n").split("\n"):
        header = _PATCH_HEADER.match(line)
        if header and header.group(1) == "Move to":
            if section is not None and section[0] == "Update File" and not body and moved_to is None:
                moved_to = header.group(2)
            else:
                out.append((header.group(2), Opaque("a `*** Move to:` line without its `*** Update File:`")))
            continue
        if header or line.strip() in ("*** End Patch", "*** Begin Patch"):
            flush()
            section, moved_to, body = None, None, []
            if header:
                section = (header.group(1), header.group(2))
            continue
        if section is not None:
            body.append(line)
    flush()
    return out


# -- one call -------------------------------------------------------------------------------------


def _replace_effect(args: Mapping[str, Any]) -> Effect | None:
    every = args.get("replace_all") is True
    count = args.get("expected_replacements")
    if isinstance(count, int) and not isinstance(count, bool) and count > 1:
        every = True
    for old_key, new_key in _REPLACE_PAIRS:
        old = args.get(old_key)
        if isinstance(old, str):
            new = args.get(new_key, "")
            return Replace(((old, new, every),)) if isinstance(new, str) else Opaque(f"{new_key} is not text")
    return None


def _edits_effect(edits: list[Any]) -> Effect:
    """MultiEdit / MCP edit_file batches of replacements."""
    found: list[tuple[str, str, bool]] = []
    for edit in edits:
        effect = _replace_effect(edit) if isinstance(edit, Mapping) else None
        if not isinstance(effect, Replace):
            return effect or Opaque("an edit in the batch names no old and new text")
        found.extend(effect.edits)
    return Replace(tuple(found))


def _effect(words: frozenset[str], args: Mapping[str, Any]) -> Effect:
    """What a single-file write call did, from its arguments."""
    if args.get("dryRun") is True or args.get("dry_run") is True:
        return Replace(())
    command = args.get("command")
    if command == "undo_edit":
        return Opaque("an undo restores text the call does not show")
    if command == "insert":
        line, text = args.get("insert_line"), args.get("new_str", args.get("insert_text"))
        if isinstance(line, int) and not isinstance(line, bool) and isinstance(text, str):
            return Insert(line, text)
        return Opaque("an insert without its line and text")
    content = next((args[k] for k in ("content", "file_text") if isinstance(args.get(k), str)), None)
    if content is not None:
        return Opaque("an append adds to text the call does not show") if "append" in words else Put(content)
    replaced = _replace_effect(args)
    if replaced is not None:
        return replaced
    edits = args.get("edits")
    if isinstance(edits, list):
        return _edits_effect(edits)
    if words & {"delete", "remove"}:
        return Remove()
    return Opaque("the call's arguments do not say what it wrote")


def _batch_writes(args: Mapping[str, Any], base: str | None, effects: bool) -> list[FileWrite]:
    """Batches that name a file per edit."""
    out: list[FileWrite] = []
    edits = args.get("edits")
    for edit in edits if isinstance(edits, list) else ():
        if isinstance(edit, Mapping):
            path = _text_arg(edit, *PATH_KEYS)
            if path is not None:
                effect = (_replace_effect(edit) or Opaque("an edit without its text")) if effects else _UNREAD
                out.append(FileWrite(_join(base, path), effect))
    return out


def _call_writes(name: str, args: Mapping[str, Any], base: str | None, effects: bool) -> list[FileWrite]:
    """The writes of a named write tool whose arguments are a mapping."""
    words = _words(name)
    if words & _READ_ONLY_WORDS and not words & _STRONG_WRITER_WORDS:
        return []
    command = args.get("command")
    lowered = name.lower()
    is_editor = "editor" in lowered or "str_replace" in lowered
    if isinstance(command, str) and is_editor and command not in _EDITOR_WRITE_COMMANDS:
        return []
    path = _text_arg(args, *PATH_KEYS)
    dests = [value for key in DEST_KEYS if (value := _text_arg(args, key)) is not None]
    source = _text_arg(args, "source")
    moving = bool(dests) and bool(words & {"move", "rename"})
    origin = source or path
    out: list[FileWrite] = []
    if path is not None:
        effect = Remove() if moving and origin == path else _effect(words, args) if effects else _UNREAD
        out.append(FileWrite(_join(base, path), effect))
    for dest in dests:
        effect = Patch((), source=_join(base, origin)) if moving and origin else Opaque("a copy or link target")
        out.append(FileWrite(_join(base, dest), effect))
    if source is not None and out:
        out.append(FileWrite(_join(base, source), Remove() if moving else Opaque("a move's source")))
    return out + _batch_writes(args, base, effects)


def _writes(node: Node, effects: bool) -> list[FileWrite]:
    if not node.is_tool:
        return []
    args = arguments(node)
    base = None
    mapping = args.__class__ is dict or isinstance(args, Mapping)  # (the ABC check is slow; most are dicts)
    if mapping:
        for key in WORKDIR_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                base = value
                break
    # apply_patch text can sit anywhere: a freeform custom tool input, {"input": ...}, or a shell
    # command `apply_patch <<'PATCH' ...`. The envelope markers make it unambiguous.
    patches = [text for text in strings(args) if is_patch_text(text)]
    if patches:
        if not effects:
            return [FileWrite(_join(base, path), _UNREAD) for text in patches for path in patch_paths(text)]
        return [FileWrite(_join(base, path), effect) for text in patches for path, effect in patch_writes(text)]
    name = node.name or ""
    if not is_writer_tool(name) or not mapping:
        return []
    return _call_writes(name, args, base, effects)


def node_writes(node: Node) -> list[FileWrite]:
    """The files one tool node wrote and what it did to each; [] for other nodes."""
    return _writes(node, True)


def node_paths(node: Node) -> list[str]:
    """Only the paths node_writes would name (an apply_patch's headers are not parsed further)."""
    return [write.path for write in _writes(node, False)]
