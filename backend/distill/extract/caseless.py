"""Case-blind patterns searched the fast way: ASCII text lowercased, against the pattern compiled case-sensitive.

Python's IGNORECASE folds every character it compares, and a long alternation of words (the
cue patterns of the rules: "use|using|uses|add|...") costs 3-5x more than the same pattern
matched case-sensitively. For ASCII text, IGNORECASE folds exactly as `str.lower()` does, so a
pattern written in lower case finds the same matches, at the same places, in `text.lower()`:
where it finds one, the case-blind pattern is matched at that place in the text itself, so the
caller gets the very match object it would have had. Other text (U+017F long s and the Kelvin
sign fold to s and k under IGNORECASE, which lower() keeps) goes to the case-blind pattern.

Only patterns for which this holds are accepted (checked when the module that builds one is
imported): no upper-case letter outside an escape (`\\S`, `\\W`, `\\B` keep their meaning) and no
inline flags; `[A-Z]` would match nothing in lower-case text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ESCAPES_OK = frozenset("bBwWsSdDAZ\\.^$*+?()[]{}|-'\"`/#&:!<>=,;@%~ \t\nrntfv")


def _lowercase_only(pattern: str) -> str | None:
    """Why `pattern` cannot be matched lowercased (None: it can)."""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped not in _ESCAPES_OK:
                return f"escape \\{escaped} (a code point or a group number may name an upper-case letter)"
            i += 2
            continue
        if pattern.startswith("(?", i):
            head = pattern[i + 2 : i + 3]
            if head == "P":
                end = pattern.find(">", i) if pattern.startswith("(?P<", i) else pattern.find(")", i)
                i = end + 1  # a group's name may have capitals
                continue
            if head not in (":", "=", "!", "<"):
                return f"inline flags at {i}"
        if char.isascii() and char.isupper():
            return f"upper-case {char!r} at {i}"
        if not char.isascii() and _folds_to_ascii(char):
            return f"{char!r} at {i} matches an ASCII letter when case-blind"
        i += 1
    return None


def _folds_to_ascii(char: str) -> bool:
    """U+017F long s matches s and U+212A Kelvin matches k under IGNORECASE (and lower() keeps them)."""
    return any(re.fullmatch(re.escape(char), letter, re.IGNORECASE) for letter in "abcdefghijklmnopqrstuvwxyz")


class Caseless:
    """An IGNORECASE pattern with `search`, `finditer` and `found` that give what the pattern gives."""

    __slots__ = ("_lower", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        if not pattern.flags & re.IGNORECASE:
            raise ValueError(f"not a case-blind pattern: {pattern.pattern[:60]!r}")
        why = _lowercase_only(pattern.pattern)
        if why is not None:
            raise ValueError(f"cannot be matched lowercased ({why}): {pattern.pattern[:60]!r}")
        self.pattern = pattern
        self._lower = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        if not text.isascii():
            return self.pattern.search(text, pos)
        found = self._lower.search(text.lower(), pos)
        return None if found is None else self.pattern.match(text, found.start())

    def found(self, text: str) -> bool:
        """`search(text) is not None`, without building the match."""
        if not text.isascii():
            return self.pattern.search(text) is not None
        return self._lower.search(text.lower()) is not None

    def finditer(self, text: str, pos: int = 0) -> Iterator[re.Match[str]]:
        if not text.isascii():
            yield from self.pattern.finditer(text, pos)
            return
        for found in self._lower.finditer(text.lower(), pos):
            match = self.pattern.match(text, found.start())
            if match is not None:  # always (same place, same pattern): a guard, not a branch
                yield match
