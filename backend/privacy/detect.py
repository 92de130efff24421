"""Where secrets are in a text: provider tokens, secret-named assignments, auth headers,
URLs with a password, PEM private keys, JWTs. One compiled pass; spans never overlap."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    kind: str  # e.g. "github-token", "aws-secret-key", "password"
    start: int  # the value's span in the text: only the value is redacted, never its name
    end: int


_RULES: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        r"-----BEGIN[A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b"),
    ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
_PROVIDERS = re.compile("|".join(f"(?P<r{i}>{p})" for i, (_, p) in enumerate(_RULES)))

_SECRET_NAME = r"[A-Za-z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH|CREDENTIALS?)[A-Za-z0-9_]*"
_ASSIGN = re.compile(
    rf"(?i)\b(?P<name>{_SECRET_NAME})[\"']?\s*(?::=|=|:)\s*(?P<q>[\"']?)(?P<value>[^\s\"',;`]{{6,}})(?P=q)"
)
_HEADER = re.compile(
    r"(?i)\b(?:authorization|proxy-authorization)\s*:\s*(?:bearer|basic|token)?\s*(?P<value>[A-Za-z0-9._~+/=-]{8,})"
)
_API_HEADER = re.compile(r"(?i)\bx-api-key\s*:\s*(?P<value>[A-Za-z0-9._~+/=-]{8,})")
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:(?P<value>[^\s@/]{3,})@")


def entropy(value: str) -> float:
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_secret(value: str) -> bool:
    if value.startswith(("$", "<", "{", "%")) or value.lower() in {"true", "false", "null", "none", "changeme"}:
        return False
    return entropy(value) >= 3.0


def find_secrets(text: str) -> list[Finding]:
    """The secrets in `text`, in order, none overlapping."""
    if not text:
        return []
    found: list[Finding] = []
    for m in _PROVIDERS.finditer(text):
        kind = _RULES[int(m.lastgroup[1:])][0]  # type: ignore[index]
        found.append(Finding(kind, m.start(), m.end()))
    for m in _ASSIGN.finditer(text):
        if _looks_secret(m.group("value")):
            name = m.group("name").lower()
            kind = "password" if "pass" in name or "pwd" in name else "secret-assignment"
            found.append(Finding(kind, m.start("value"), m.end("value")))
    for rx, kind in ((_HEADER, "auth-header"), (_API_HEADER, "api-key-header"), (_URL_PASSWORD, "url-password")):
        for m in rx.finditer(text):
            found.append(Finding(kind, m.start("value"), m.end("value")))
    return _disjoint(found)


def _disjoint(found: list[Finding]) -> list[Finding]:
    """The findings in text order; where two overlap, the wider span wins (a provider token
    inside an assignment is one finding, named by the provider)."""
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    for f in found:
        if out and f.start < out[-1].end:
            if f.end > out[-1].end:
                out[-1] = Finding(out[-1].kind, out[-1].start, f.end)
            continue
        out.append(f)
    return out
