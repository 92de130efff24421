"""core.md's session pointers, `↪ session:<id>`, with the id as short as git's short hashes.

A pointer names its session by the shortest prefix of the id that no other session the store
holds starts with, and never shorter than SHORT_ID_CHARS characters past a `<source>-` prefix
(`specstory-b7eb0f5d`, `cc-5f1c2a9e`). Uniqueness is checked at each render against every session
id known then, so a later session sharing the prefix lengthens it. What reads a pointer back
resolves the prefix (backend/naming.session_id): a prefix two sessions share is an error that
names both.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

from .model import OpmemError

POINTER_PREFIX = "session:"  # core.md's pointer form, accepted as typed wherever a session id is
SHORT_ID_CHARS = 8
_SOURCE = re.compile(r"[A-Za-z]+-(?=.)")  # an importer's id prefix (cc-, specstory-, aider-)
_CUT_AFTER = "-._"  # a prefix ending on a separator reads as cut: it takes the next character too


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def short_session_ids(wanted: Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """{id: its shortest pointer form} for each id of `wanted`, unique among `known` and `wanted`."""
    wanted = set(wanted)
    everyone = sorted(set(known) | wanted)
    short: dict[str, str] = {}
    for sid in wanted:
        source = _SOURCE.match(sid)
        n = (source.end() if source else 0) + SHORT_ID_CHARS
        at = bisect_left(everyone, sid)
        for other in (everyone[at - 1] if at else "", everyone[at + 1] if at + 1 < len(everyone) else ""):
            n = max(n, _common(sid, other) + 1)  # past what a neighbour in sort order shares
        while n < len(sid) and sid[n - 1] in _CUT_AFTER:
            n += 1
        short[sid] = sid[:n]
    return short


def known_session_ids(store: Any) -> list[str] | None:
    """Every session id `store` (a SessionStore) holds, private ones too, for short pointers; None
    when the store cannot be listed (the pointers then keep whole ids: never a prefix another
    session may share)."""
    try:
        return [meta.id for meta in store.list_sessions().sessions]
    except OpmemError:
        return None
