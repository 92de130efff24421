"""What a turn's own writes make of each file: its tool calls replayed on the turn-start content.

Auto-commit commits a file only when its content is exactly what the agent's writes produce, so
a line the user adds to that file during the turn is never committed under the agent's name.
Texts are compared with line endings normalised (an editor may keep a file's CRLF endings).
A failed call (an error result) changed nothing; a replay that cannot be worked out from the
calls' arguments is Unknown, one whose edit does not apply to what the agent's own writes left
is Diverged (the file was changed outside the agent before that edit).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..model import Node
from .tool_writes import Chunk, Effect, Insert, Opaque, Patch, Put, Remove, Replace, node_writes


@dataclass(frozen=True, slots=True)
class Expected:
    text: str | None  # None: the agent's writes leave no file here


@dataclass(frozen=True, slots=True)
class Unknown:
    reason: str


@dataclass(frozen=True, slots=True)
class Diverged:
    reason: str


Outcome = Expected | Unknown | Diverged


class _NoApply(Exception):
    pass


def normalise(text: str) -> str:
    return text.replace("\r\n", "\n")


def decode(data: bytes | None) -> str | None:
    """A file's bytes as text with LF endings; raises UnicodeDecodeError for binary data."""
    return None if data is None else normalise(data.decode("utf-8"))


def failed(node: Node) -> bool:
    """The call reported an error: it changed nothing."""
    meta = node.metadata or {}
    if meta.get("is_error") is True or meta.get("success") is False:
        return True
    code = meta.get("exit_code")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


# -- applying one effect --------------------------------------------------------------------------


def _replace(text: str | None, edits: Sequence[tuple[str, str, bool]]) -> str:
    for old, new, every in edits:
        old, new = normalise(old), normalise(new)
        if not old:
            if text:
                raise _NoApply("an edit with no old text on a file that is not empty")
            text = new
            continue
        if text is None or old not in text:
            raise _NoApply("its old text is not in the file")
        text = text.replace(old, new) if every else text.replace(old, new, 1)
    if text is None:
        raise _NoApply("no file to edit")
    return text


def _insert(text: str | None, line: int, new: str) -> str:
    lines = (text or "").split("\n")
    if not 0 <= line <= len(lines):
        raise _NoApply(f"line {line} is past the end of the file")
    return "\n".join(lines[:line] + normalise(new).split("\n") + lines[line:])


def _norm_unicode(line: str) -> str:
    return unicodedata.normalize("NFKC", line).strip()


def _seek(lines: list[str], pattern: Sequence[str], start: int, eof: bool) -> int | None:
    """Where `pattern` sits in `lines` from `start`: exact, then ignoring trailing, then all
    surrounding whitespace, then unicode look-alikes (as Codex's apply_patch seeks)."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if eof else start
    for same in (
        lambda a, b: a == b,
        lambda a, b: a.rstrip() == b.rstrip(),
        lambda a, b: a.strip() == b.strip(),
        lambda a, b: _norm_unicode(a) == _norm_unicode(b),
    ):
        for i in range(first, len(lines) - len(pattern) + 1):
            if all(same(lines[i + k], pattern[k]) for k in range(len(pattern))):
                return i
    return None


def _patch(text: str | None, chunks: Sequence[Chunk]) -> str:
    """An apply_patch update (Codex's rules: chunks in order, the result ends with a newline)."""
    if text is None:
        raise _NoApply("no file to update")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    found: list[tuple[int, int, list[str]]] = []
    index = 0
    for chunk in chunks:
        if chunk.context is not None:
            at = _seek(lines, [chunk.context], index, False)
            if at is None:
                raise _NoApply(f"its context line {chunk.context[:40]!r} is not in the file")
            index = at + 1
        if not chunk.old:
            found.append((len(lines), 0, list(chunk.new)))
            continue
        old, new = list(chunk.old), list(chunk.new)
        at = _seek(lines, old, index, chunk.end_of_file)
        if at is None and old[-1] == "":
            old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
            at = _seek(lines, old, index, chunk.end_of_file)
        if at is None:
            raise _NoApply("its old lines are not in the file")
        found.append((at, len(old), new))
        index = at + len(old)
    for at, size, new in sorted(found, reverse=True):
        lines[at : at + size] = new
    return "\n".join([*lines, ""])


def _apply(effect: Effect, text: str | None) -> str | None:
    if isinstance(effect, Put):
        return normalise(effect.text)
    if isinstance(effect, Remove):
        return None
    if isinstance(effect, Replace):
        return _replace(text, effect.edits)
    if isinstance(effect, Insert):
        return _insert(text, effect.line, effect.text)
    if isinstance(effect, Patch):
        return _patch(text, effect.chunks)
    raise AssertionError(effect)


# -- a whole turn ---------------------------------------------------------------------------------


class _Replay:
    def __init__(self, base: Callable[[str], bytes | None]) -> None:
        self.base = base
        self.state: dict[str, Outcome] = {}

    def current(self, rel: str) -> Outcome:
        if rel not in self.state:
            try:
                self.state[rel] = Expected(decode(self.base(rel)))
            except UnicodeDecodeError:
                self.state[rel] = Unknown("its turn-start content is not UTF-8 text")
        return self.state[rel]

    def step(self, rel: str, effect: Effect, moved: dict[str, Outcome], what: str) -> Outcome:
        if isinstance(effect, Opaque):
            return Unknown(f"{what}: {effect.reason}")
        if isinstance(effect, (Put, Remove)):
            return Expected(_apply(effect, None))  # whatever was there before
        start = moved[effect.source] if isinstance(effect, Patch) and effect.source else self.current(rel)
        if not isinstance(start, Expected):
            return start
        try:
            return Expected(_apply(effect, start.text))
        except _NoApply as exc:
            return Diverged(f"{what} does not apply to the text the agent's own writes left ({exc})")


def replay_writes(
    nodes: Iterable[Node],
    *,
    relative: Callable[[str], str | None],
    base: Callable[[str], bytes | None],
) -> dict[str, Outcome]:
    """Each repo-relative path the turn's tool calls wrote -> what their writes make of it.

    base(rel) is the file's content at turn start (None: no file), read only for the paths an
    edit needs. Paths `relative` maps to None (outside the repository) are left out.
    """
    replay = _Replay(base)
    for node in nodes:
        writes = [(rel, w.effect) for w in node_writes(node) if (rel := relative(w.path)) is not None]
        if not writes or failed(node):
            continue
        # a move reads its source as it was before the call (the call also removes it)
        moved: dict[str, Outcome] = {}
        for effect in (e for _, e in writes if isinstance(e, Patch) and e.source):
            src = relative(effect.source)
            moved[effect.source] = replay.current(src) if src else Unknown("moved from outside the repository")
        what = f"its {node.name or 'tool'} call"
        for rel, effect in writes:
            replay.state[rel] = replay.step(rel, effect, moved, what)
    return replay.state
