"""The merge rules of a sync, as pure functions: meta.json, memory log lines, exclusions.

- meta.json: a title the user gave (title_source "user") wins over an automatic one; between two
  of the same standing, the newer `updated_at`; a tie keeps the local copy.
- memory logs: the union of records by id (a patch line, which carries no id of its own, by its
  whole content), the lines another machine has and this one lacks appended in a deterministic
  order (ingestion time, then key), so two machines holding the same records fold to the same memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _rank(meta: Mapping[str, Any]) -> tuple[int, float]:
    updated = meta.get("updated_at")
    number = float(updated) if isinstance(updated, (int, float)) and not isinstance(updated, bool) else 0.0
    return (1 if meta.get("title_source") == "user" else 0, number)


def title_winner(local: Mapping[str, Any], remote: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The title fields remote brings (title, title_source), or None when the local ones stay."""
    if (local.get("title"), local.get("title_source")) == (remote.get("title"), remote.get("title_source")):
        return None
    if _rank(remote) > _rank(local):
        return {"title": remote.get("title", ""), "title_source": remote.get("title_source", "")}
    return None


def line_key(data: Mapping[str, Any]) -> str:
    """A record's identity: its id; a patch (`op`) has the id of what it patches, so its whole content."""
    if "op" in data:
        return "patch:" + json.dumps(data, sort_keys=True, ensure_ascii=False)
    return "record:" + str(data.get("id"))


def line_time(data: Mapping[str, Any]) -> float:
    prov = data.get("provenance")
    for value in ((prov or {}).get("ingestion_time") if isinstance(prov, Mapping) else None, data.get("at")):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return 0.0


def parse_lines(raw: bytes) -> list[tuple[bytes, dict[str, Any]]]:
    """The complete, parseable JSON-object lines of a log (a torn last line is left out)."""
    out: list[tuple[bytes, dict[str, Any]]] = []
    lines = raw.split(b"\n")
    for line in lines[:-1] if not raw.endswith(b"\n") else lines:
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            out.append((line, data))
    return out


def missing_lines(local: bytes, remote: bytes) -> list[bytes]:
    """The lines of `remote` whose record `local` lacks, in the deterministic append order."""
    have = {line_key(data) for _, data in parse_lines(local)}
    new: dict[str, tuple[float, bytes]] = {}
    for line, data in parse_lines(remote):
        key = line_key(data)
        if key not in have and key not in new:
            new[key] = (line_time(data), line)
    return [line for _, (_, line) in sorted(new.items(), key=lambda kv: (kv[1][0], kv[0]))]


def session_of(data: Mapping[str, Any]) -> str | None:
    prov = data.get("provenance")
    if isinstance(prov, Mapping) and isinstance(prov.get("session_id"), str):
        return prov["session_id"]
    return None
