"""The shared reader: what a message is made of (sentences, fenced code, Markdown structure)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


def word_list(text: str) -> list[str]:
    """A list of names written as one string (long lists read better so)."""
    return text.split()


_SENT = re.compile(
    r"(?:[^.!?。！？；\n]|[.!?](?=[\w/`]))+[.!?。！？]*"
)  # `mix phx.server`, `v1.2`, the `1.` marker stay whole


CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)


# code in backticks: no space just inside them (with an odd count, the text between two spans is not one)
BACKTICK = re.compile(r"`([^`\s](?:[^`\n]{0,58}[^`\s])?)`")


def sentences(text: str) -> list[str]:
    text = CODE_BLOCK.sub(" ", text)
    out = []
    for m in _SENT.finditer(text):
        s = " ".join(m.group(0).split()).strip(" -*#>•")
        if 6 <= len(s) <= 400:
            out.append(s)
    return out


def is_marked(name: str, sentence: str) -> bool:
    return f"`{name.strip('`')}`" in sentence


# markdown emphasis around a convention's words ("**Error Handling**: Always ...")
_EMPHASIS = re.compile(r"\*\*|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


# a line of a stack trace or a log: "at foo (app.js:12:3)", "loadIcon @ main.js:23", 'File "x.py",
# line 3', "Traceback (most recent call last):", "    at com.x.Y.z(Y.java:42)"
_TRACE_LINE = re.compile(
    r"^\s*(?:at\s+\S.*[:(]\d+|\S.*\s@\s\S+:\d+|File \".+\", line \d+|Traceback \(most recent call last\)"
    r"|\(anonymous\)|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|(?:ERROR|WARN(?:ING)?|INFO|DEBUG)\b)"
)


def pasted_output(text: str) -> bool:
    """A message that is mostly a pasted trace or log (three lines of one at least)."""
    if text.count("\n") < 3:
        return False
    return sum(1 for line in text.splitlines()[:400] if _TRACE_LINE.match(line)) >= 3


def may_hold(text: str, literals: Sequence[str]) -> bool:
    """False only when a case-blind pattern needing one of these (lower-case, ASCII) literals
    cannot match: ASCII text lacking all of them. Other text is always searched (IGNORECASE
    folds the long s and the Kelvin sign to s and k, which lower() does not)."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(literal in low for literal in literals)


# -- Markdown structure --------------------------------------------------------------------------
# An answer is read as a teammate skims it: fenced blocks with the line that introduces them
# ("**Start the worker:**", "Run the tests with:"), and bullet lists under the heading or label
# they belong to ("## Stack", "Libraries:").


@dataclass(frozen=True, slots=True)
class Fenced:
    """A fenced code block: its info string (`bash`, `python`, `env`, ...), its code, and the
    line before it with the Markdown marks off (a bold label, a heading, a sentence ending ':')."""

    lang: str
    code: str
    label: str


@dataclass(frozen=True, slots=True)
class Bullet:
    """One item of a list, with the heading or label line the list sits under ("" when none)."""

    text: str
    heading: str


_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w.+#-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)
_MARKS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|^#{1,6}\s+|^>\s*")
_LIST_ITEM = re.compile(r"^[ \t]{0,6}(?:[-*+•]|\d{1,2}[.)])\s+(.+)$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
FENCE_CHARS = 4000  # a block longer than this is a file's content, not a command or a list


def unmarked(line: str) -> str:
    """A line without its Markdown marks: `**Start the worker:**` -> `Start the worker:`."""
    return " ".join(_MARKS.sub("", line.strip()).split())


def fenced(text: str) -> list[Fenced]:
    """The fenced blocks of a message, each with the non-blank line before it."""
    if "```" not in text and "~~~" not in text:
        return []
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip().rsplit("\n", 1)[-1]
        code = m.group(3)
        if len(code) <= FENCE_CHARS:
            out.append(Fenced(m.group(2).lower(), code, unmarked(before)))
    return out


def bullets(text: str) -> list[Bullet]:
    """List items outside code, each under its heading: a Markdown heading, or a short line
    ending with ':' (`Libraries:`, `**Stack:**`) right above the list, or a bold lead-in."""
    out: list[Bullet] = []
    heading = ""
    under = ""
    for raw in _FENCE.sub("\n", text).splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        head = _HEADING.match(line.strip())
        item = _LIST_ITEM.match(line)
        if head is not None:
            heading, under = unmarked(head.group(1)).rstrip(":"), ""
        elif item is not None:
            out.append(Bullet(item.group(1).strip(), under or heading))
        else:
            plain = unmarked(line)
            under = plain.rstrip(":") if plain.endswith(":") and len(plain) <= 80 else ""
    return out


def opening(text: str) -> str:
    """The first sentence of an answer (what a recommendation opens with)."""
    for sentence in sentences(text[:2000]):
        return sentence
    return ""


# an edit an answer proposes as a search/replace block (aider's format): the path on the line
# above, the new text between the divider and the replace marker
_EDIT_BLOCK = re.compile(
    r"^[ \t]*([^\s`<>=|]+\.?[\w-]*)[ \t]*\n(?:```+[\w-]*\n)?<{5,9} SEARCH[^\n]*\n.*?^={5,9}[ \t]*\n(.*?)^>{5,9} REPLACE",
    re.DOTALL | re.MULTILINE,
)
EDIT_CHARS = 40_000


def edit_blocks(text: str) -> list[tuple[str, str]]:
    """(path, new text) of each search/replace edit a message proposes."""
    if "<<<<<<< SEARCH" not in text:
        return []
    return [(m.group(1), m.group(2)) for m in _EDIT_BLOCK.finditer(text[:EDIT_CHARS])]


# files a user adds to the conversation (`/add src/app.py tests/test_app.py`, `/read CONVENTIONS.md`)
_ADDED = re.compile(r"^/(?:add|read|read-only)\s+(.+)$", re.MULTILINE)


def added_files(text: str) -> list[str]:
    if "/add" not in text and "/read" not in text:
        return []
    return [p for m in _ADDED.finditer(text[:4000]) for p in m.group(1).split() if "*" not in p]
