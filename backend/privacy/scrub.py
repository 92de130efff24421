"""A session's secret values found again in text cut from it (commit messages, titles,
previews, memory records), and a node file redacted: what backend/secrets_purge.py and sync's redacted push apply."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..safe_text import plain
from ..store.files import dump_compact_json
from .detect import find_secrets
from .redact import marker_for, redact_text, redact_value
from .scan import (
    NODE_FIELDS,
    strings_of,
)

FRAGMENT_MIN = 4  # the shortest cut-off start of a value that is replaced too
FULL_MIN = 6  # values this long are replaced wherever they occur in derived text (messages, meta)


def redacted_node_bytes(data: Mapping[str, Any]) -> bytes | None:
    """The node file redacted (its fields through redact_value, markers kept), or None when it holds no secret."""
    out = dict(data)
    changed = False
    for name in NODE_FIELDS:
        if name in out:
            value = redact_value(out[name])
            if value is not out[name]:
                out[name] = value
                changed = True
    return dump_compact_json(out) if changed else None


class Values:
    """The secret values of one session (never shown, never written), to find them again in text
    that was cut from the node text: commit messages, titles, previews."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}  # value -> kind
        self._forms: list[tuple[str, str]] | None = None
        self._done: dict[str, str] = {}  # text -> scrubbed (meta.json strings repeat in every commit)

    def collect(self, data: Any) -> None:
        for text in strings_of(data):
            for f in find_secrets(text):
                value = text[f.start : f.end]
                if value not in self.kinds:
                    self.kinds[value] = f.kind
                    self._forms = None
                    self._done = {}

    def forms(self) -> list[tuple[str, str]]:
        """(form, original value), longest first: the value and its one-line form (whitespace
        collapsed, control bytes out), as commit messages and excerpts cut it."""
        if self._forms is None:
            seen: dict[str, str] = {}
            for value in self.kinds:
                seen.setdefault(value, value)
                seen.setdefault(" ".join(plain(value).split()), value)
            self._forms = sorted(((f, v) for f, v in seen.items() if f), key=lambda fv: -len(fv[0]))
        return self._forms

    def scrub(self, text: str) -> str:
        """`text` without the session's values: whole ones, a start of one cut off at a line's end
        (or before "…"), and whatever else the detector finds. A value counts where it starts a
        word (not after a letter or digit), so an id that ends like the start of one stays."""
        if not text:
            return text
        done = self._done.get(text)
        if done is not None:
            return done
        out = text
        for form, value in self.forms():
            if len(form) >= FULL_MIN and form in out:
                out = _replace_words(out, form, marker_for(self.kinds[value], value))
        out = redact_text(self._cut_offs(out))
        if len(self._done) < 100_000:
            self._done[text] = out
        return out

    def _cut_offs(self, text: str) -> str:
        ends = sorted({len(text)} | {i for i, ch in enumerate(text) if ch in "\n…"}, reverse=True)
        for end in ends:  # right to left: a replacement never moves an end still to be looked at
            for form, value in self.forms():
                for size in range(min(len(form) - 1, end), FRAGMENT_MIN - 1, -1):
                    if text.startswith(form[:size], end - size) and _word_start(text, end - size):
                        text = text[: end - size] + marker_for(self.kinds[value], value) + text[end:]
                        break
                else:
                    continue
                break
        return text

    def scrub_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(v) for v in value]
        if isinstance(value, dict):
            return {self.scrub(k) if isinstance(k, str) else k: self.scrub_value(v) for k, v in value.items()}
        return value


def _word_start(text: str, at: int) -> bool:
    return at == 0 or not text[at - 1].isalnum()


def _replace_words(text: str, form: str, marker: str) -> str:
    out: list[str] = []
    at = 0
    while True:
        i = text.find(form, at)
        if i < 0:
            break
        if _word_start(text, i):
            out.append(text[at:i] + marker)
        else:
            out.append(text[at : i + len(form)])
        at = i + len(form)
    out.append(text[at:])
    return "".join(out)
