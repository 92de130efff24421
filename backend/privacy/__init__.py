"""Secret detection and redaction: the one gate every derived layer and every output passes.

`find_secrets(text)` finds credentials in text (provider tokens, secret-named assignments,
auth headers, URLs with a password, PEM private keys, JWTs); `redact_text` replaces each value
with a marker naming its kind and a short fingerprint (`[secret:github-token#3f9a]`), so the
same secret reads the same everywhere while its value stays unknown; `redact_value` does the
same through JSON-like values (dicts, lists, tuples, mapping proxies).
"""

from __future__ import annotations

from .detect import Finding, find_secrets
from .redact import MARKER, fingerprint, map_strings, marker_for, redact_node, redact_text, redact_value
from .shown import RedactedSession, redact_commit, redact_meta

__all__ = [
    "MARKER",
    "Finding",
    "RedactedSession",
    "find_secrets",
    "fingerprint",
    "map_strings",
    "marker_for",
    "redact_commit",
    "redact_meta",
    "redact_node",
    "redact_text",
    "redact_value",
]
