"""Detection and redaction that leave markers alone: a `[secret:kind#fp]` already in the text is
never taken for a secret again (the first detector reads `secret:github-token#a826]` as a
secret-named assignment, so redacting twice nested markers). Markers are blanked out before
`find_secrets` runs, keeping every other offset; once the detector skips markers itself these
are `find_secrets` / `redact_text` / `redact_value` again."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from .detect import Finding, find_secrets
from .redact import MARKER, marker_for


def find_unmarked(text: str) -> list[Finding]:
    if not text:
        return []
    if "[secret:" in text:
        text = MARKER.sub(lambda m: " " * len(m.group()), text)
    return find_secrets(text)


def redact_unmarked(text: str) -> str:
    """redact_text, markers left as they are; the same object when nothing changes."""
    findings = find_unmarked(text)
    if not findings:
        return text
    out: list[str] = []
    at = 0
    for f in findings:
        out.append(text[at : f.start])
        out.append(marker_for(f.kind, text[f.start : f.end]))
        at = f.end
    out.append(text[at:])
    return "".join(out)


def redact_unmarked_value(value: Any) -> Any:
    """redact_value, markers left as they are; the same object when nothing changes."""
    if isinstance(value, str):
        return redact_unmarked(value)
    if isinstance(value, list | tuple):
        items = [redact_unmarked_value(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
    if isinstance(value, dict | MappingProxyType):
        pairs = {
            redact_unmarked_value(k) if isinstance(k, str) else k: redact_unmarked_value(v) for k, v in value.items()
        }
        if len(pairs) == len(value) and all(k in value and pairs[k] is value[k] for k in pairs):
            return value
        return MappingProxyType(pairs) if isinstance(value, MappingProxyType) else pairs
    return value
