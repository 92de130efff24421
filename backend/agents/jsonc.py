"""Edit a JSON (or JSONC) config file as text: what is not touched keeps every byte.

Agents' config files are the user's. Loading them into dicts and dumping them again would
re-indent the file, reorder nothing but still change bytes, and drop JSONC comments. So the
file is parsed into a tree of spans (where each value starts and ends in the text), and an
edit splices text in or out at those spans:

    doc = parse(text, path, comments=True)      # JsonSyntaxError names the file, line, column
    text = insert_entry(text, obj, key, value)  # appended after the last entry, in its indent
    text = remove_entry(text, container, index) # the entry, its comma and what insert added

Inserting an entry then removing it gives back the text byte for byte: insert adds
`,\\n<indent>"key": value` after the last entry (or fills an empty `{}`), and removal takes out
exactly that range when only whitespace and the comma lie between the two entries. Comments
stay where they are (JSONC mode: `//` and `/* */`, and trailing commas, as OpenCode's
opencode.jsonc and VS Code-style files allow).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from ..model import OpmemError

MAX_DEPTH = 256
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_DECODER = json.JSONDecoder()


class JsonSyntaxError(OpmemError):
    pass


class Node:
    """One value: its span [start, end) in the text, and for containers their entries (read on
    first use for a strict JSON file: json's own C scanner finds the value and its end)."""

    __slots__ = ("_entries", "_parser", "data", "end", "kind", "start")

    def __init__(self, kind: str, start: int, end: int, data: Any = None, parser: _Parser | None = None) -> None:
        self.kind = kind  # "object", "array" or "scalar"
        self.start = start
        self.end = end
        self.data = data
        self._parser = parser  # set: the entries are not read yet
        self._entries: list[Entry] = []

    @property
    def entries(self) -> list[Entry]:
        if self._parser is not None:
            parser, self._parser = self._parser, None
            parser.pos = self.start
            self._entries = parser.container(0, self.kind, "}" if self.kind == "object" else "]").entries
        return self._entries

    def get(self, key: str) -> Node | None:
        for entry in self.entries:
            if entry.key == key:
                return entry.value
        return None

    def index(self, key: str) -> int | None:
        for i, entry in enumerate(self.entries):
            if entry.key == key:
                return i
        return None


@dataclass(slots=True)
class Entry:
    """An object member (key set) or an array item (key None); start is the key's or the value's."""

    key: str | None
    start: int
    value: Node


class _Parser:
    def __init__(self, text: str, path: Path, comments: bool, lazy: bool = False) -> None:
        self.text = text
        self.path = path
        self.comments = comments
        self.lazy = lazy  # strict JSON known valid: nested containers via json's C scanner
        self.pos = 0

    def fail(self, message: str, pos: int | None = None) -> JsonSyntaxError:
        at = self.pos if pos is None else pos
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return JsonSyntaxError(f"{self.path}: invalid JSON at line {line}, column {column}: {message}; not changed")

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif self.comments and text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif self.comments and text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            elif ch == "/" and not self.comments:
                raise self.fail("comments are not allowed in this file")
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail("nested too deeply")
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        ch = self.text[self.pos]
        if ch in "{[" and self.lazy and depth > 0:
            start = self.pos
            data, self.pos = _DECODER.raw_decode(self.text, start)
            return Node("object" if ch == "{" else "array", start, self.pos, data, parser=self)
        if ch == "{":
            return self.container(depth, "object", "}")
        if ch == "[":
            return self.container(depth, "array", "]")
        start = self.pos
        if ch == '"':
            data = self.string()
            return Node("scalar", start, self.pos, data)
        match = _NUMBER.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return Node("scalar", start, self.pos, json.loads(match.group()))
        for word, data in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return Node("scalar", start, self.pos, data)
        raise self.fail(f"unexpected character {ch!r}")

    def string(self) -> str:
        try:
            data, self.pos = scanstring(self.text, self.pos + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None
        return data

    def container(self, depth: int, kind: str, close: str) -> Node:
        node = Node(kind, self.pos, self.pos, {} if kind == "object" else [])
        self.pos += 1
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise self.fail(f"missing {close!r}")
            if self.text[self.pos] == close:
                break
            if node.entries:
                if self.text[self.pos] != ",":
                    raise self.fail(f"expected ',' or {close!r}")
                self.pos += 1
                self.skip()
                if self.pos < len(self.text) and self.text[self.pos] == close:
                    if not self.comments:
                        raise self.fail("trailing comma")
                    break
            start = self.pos
            key = None
            if kind == "object":
                if self.pos >= len(self.text) or self.text[self.pos] != '"':
                    raise self.fail("expected a quoted key")
                key = self.string()
                self.skip()
                if self.pos >= len(self.text) or self.text[self.pos] != ":":
                    raise self.fail("expected ':' after the key")
                self.pos += 1
            value = self.value(depth + 1)
            node._entries.append(Entry(key, start, value))
            if kind == "object":
                node.data[key] = value.data
            else:
                node.data.append(value.data)
        self.pos += 1
        node.end = self.pos
        return node


def parse(text: str, path: Path, *, comments: bool = False) -> Node:
    """The tree of `text`; a JsonSyntaxError naming the file, line and column otherwise."""
    lazy = False
    if not comments:  # json's C parser checks it; a failure is re-read here for the message
        try:
            json.loads(text)
            lazy = True
        except (ValueError, RecursionError):
            pass
    parser = _Parser(text, path, comments, lazy)
    node = parser.value(0)
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the end of the JSON value")
    return node


# -- layout -------------------------------------------------------------------------------------


def indent_unit(text: str) -> str:
    """The file's own indent step (the first indented line's), else two spaces."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def line_indent(text: str, pos: int) -> str | None:
    """The whitespace before `pos` on its line, or None when something else precedes it there."""
    line_start = text.rfind("\n", 0, pos) + 1
    before = text[line_start:pos]
    return before if before.strip() == "" else None


def render(value: Any, unit: str, base: str) -> str:
    """`value` as JSON laid out like the file: `unit` per level, continuation lines at `base`."""
    if isinstance(value, (dict, list)) and value:
        return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + base)
    return json.dumps(value, ensure_ascii=False)


def _entry_text(key: str | None, value: Any, unit: str, indent: str) -> str:
    body = render(value, unit, indent)
    return body if key is None else f"{json.dumps(key, ensure_ascii=False)}: {body}"


def _has_comment(segment: str) -> bool:
    return "//" in segment or "/*" in segment


# -- edits --------------------------------------------------------------------------------------


def insert_entry(text: str, container: Node, key: str | None, value: Any) -> str:
    """`text` with a new last entry in `container` (a key for objects, None for arrays)."""
    unit = indent_unit(text)
    if container.entries:
        last = container.entries[-1]
        indent = line_indent(text, last.start)
        if indent is None:  # a one-line container: stay on the line
            return text[: last.value.end] + ", " + _entry_text(key, value, "", "") + text[last.value.end :]
        addition = ",\n" + indent + _entry_text(key, value, unit, indent)
        return text[: last.value.end] + addition + text[last.value.end :]
    outer = line_indent(text, container.start)
    if outer is None:
        outer = re.match(r"[ \t]*", text[text.rfind("\n", 0, container.start) + 1 :]).group()
    indent = outer + unit
    inner = text[container.start + 1 : container.end - 1]
    entry = _entry_text(key, value, unit, indent)
    if inner.strip() == "":
        return text[: container.start + 1] + "\n" + indent + entry + "\n" + outer + text[container.end - 1 :]
    # only comments inside: the entry goes first, before them (JSONC allows the trailing comma)
    return text[: container.start + 1] + "\n" + indent + entry + "," + text[container.start + 1 :]


def remove_entry(text: str, container: Node, index: int) -> str:
    """`text` without entry `index` of `container`, and the comma and whitespace that came with it."""
    entries = container.entries
    entry = entries[index]
    if index + 1 < len(entries):  # not the last: up to where the next one starts
        return text[: entry.start] + text[entries[index + 1].start :]
    end = entry.value.end
    after = _skip_space(text, end)
    comma_end = after + 1 if after < len(text) and text[after] == "," and not _has_comment(text[end:after]) else end
    if index > 0:
        prev_end = entries[index - 1].value.end
        if not _has_comment(text[prev_end : entry.start]):
            return text[:prev_end] + text[end:]  # its own trailing comma (JSONC) stays for the one before
        comma = _comma_after(text, prev_end)
        start = len(text[: entry.start].rstrip(" \t\r\n"))
        return text[:comma] + text[comma + 1 : start] + text[comma_end:]
    inner_before = text[container.start + 1 : entry.start]
    inner_after = text[comma_end : container.end - 1]
    if (inner_before + inner_after).strip() == "":
        return text[: container.start + 1] + text[container.end - 1 :]
    start = len(text[: entry.start].rstrip(" \t\r\n"))
    return text[:start] + text[comma_end:]


def _comma_after(text: str, pos: int) -> int:
    """The separating comma after a value ending at `pos`, past whitespace and comments."""
    while pos < len(text):
        if text.startswith("//", pos):
            pos = text.find("\n", pos)
            pos = len(text) if pos < 0 else pos
        elif text.startswith("/*", pos):
            pos = text.find("*/", pos) + 2
        elif text[pos] == ",":
            return pos
        else:
            pos += 1
    raise ValueError("no comma between two entries")


def replace_value(text: str, node: Node, value: Any, indent: str) -> str:
    return text[: node.start] + render(value, indent_unit(text), indent) + text[node.end :]


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def at_path(root: Node, path: tuple[str, ...]) -> Node | None:
    node: Node | None = root
    for key in path:
        if node is None or node.kind != "object":
            return None
        node = node.get(key)
    return node


def set_path(text: str, root: Node, path: tuple[str, ...], value: Any, where: Path) -> tuple[str, tuple[str, ...]]:
    """`text` with `value` at `path` (objects made on the way); returns (text, the first path made,
    or () when the key existed and only its value was replaced, or text unchanged when equal)."""
    node = root
    for depth, key in enumerate(path):
        if node.kind != "object":
            shown = ".".join(path[:depth]) or "the top level"
            raise JsonSyntaxError(f"{where}: {shown} is not a JSON object; not changed")
        child = node.get(key)
        if child is None:
            nested: Any = value
            for inner in reversed(path[depth + 1 :]):
                nested = {inner: nested}
            return insert_entry(text, node, key, nested), path[: depth + 1]
        if depth == len(path) - 1:
            if child.data == value:
                return text, ()
            entry = node.entries[node.index(key)]
            indent = line_indent(text, entry.start) or ""
            return replace_value(text, child, value, indent), ()
        node = child
    raise ValueError("empty path")
