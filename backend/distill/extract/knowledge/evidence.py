"""The shared reader: what a message is made of (sentences, fenced code, Markdown structure)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def _words(text: str) -> list[str]:
    """A list of names written as one string (long lists read better so)."""
    return text.split()


_SENT = re.compile(r"(?:[^.!?\n]|[.!?](?=[\w/]))+[.!?]*")  # `mix phx.server`, `v1.2` stay whole


_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)


_BACKTICK = re.compile(r"`([^`\n]{1,60})`")


def sentences(text: str) -> list[str]:
    text = _CODE_BLOCK.sub(" ", text)
    out = []
    for m in _SENT.finditer(text):
        s = " ".join(m.group(0).split()).strip(" -*#>•")
        if 6 <= len(s) <= 400:
            out.append(s)
    return out


def _marked(name: str, sentence: str) -> bool:
    return f"`{name.strip('`')}`" in sentence


# markdown emphasis around a convention's words ("**Error Handling**: Always ...")
_EMPHASIS = re.compile(r"\*\*|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


# a line of a stack trace or a log: "at foo (app.js:12:3)", "loadIcon @ main.js:23", 'File "x.py",
# line 3', "Traceback (most recent call last):", "    at com.x.Y.z(Y.java:42)"
_TRACE_LINE = re.compile(
    r"^\s*(?:at\s+\S.*[:(]\d+|\S.*\s@\s\S+:\d+|File \".+\", line \d+|Traceback \(most recent call last\)"
    r"|\(anonymous\)|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|(?:ERROR|WARN(?:ING)?|INFO|DEBUG)\b)"
)


def _pasted_output(text: str) -> bool:
    """A message that is mostly a pasted trace or log (three lines of one at least)."""
    if text.count("\n") < 3:
        return False
    return sum(1 for line in text.splitlines()[:400] if _TRACE_LINE.match(line)) >= 3


def _may_hold(text: str, literals: Sequence[str]) -> bool:
    """False only when a case-blind pattern needing one of these (lower-case, ASCII) literals
    cannot match: ASCII text lacking all of them. Other text is always searched (IGNORECASE
    folds the long s and the Kelvin sign to s and k, which lower() does not)."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(literal in low for literal in literals)
