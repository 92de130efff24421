"""Deterministic opmem ids for imported sessions and nodes.

- session id: ``<prefix>-<native id>`` when the native id is already a safe folder name (so
  stores written by earlier versions keep their sessions); otherwise the id made safe plus a
  short hash of the native id, so two native ids never share a session ("a/b" and "a-b",
  "../../etc" and "etc").
- node id: the source id when it is a valid node id, else ``h-`` + a hash of it.

`resolve_session_id` is what ingest uses: it also finds a session an earlier version stored
under another id (``legacy_session_id``) and never writes into a session that holds another
native id (one written before ids were injective).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from ..model import OpmemError
from ..store.session_repo import NODE_ID_RE
from ..store.sessions import SessionStore

MAX_SESSION_ID = 128
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SAFE = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?")


def _prefix(source: str) -> str:
    from .registry import ID_PREFIXES  # the importers' own declarations (registry imports them all)

    return ID_PREFIXES.get(source) or _UNSAFE.sub("-", source).strip("-._") or "import"


def _digest(source: str, native_id: str) -> str:
    return hashlib.sha1(f"{source}\0{native_id}".encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _hashed(prefix: str, body: str, source: str, native_id: str) -> str:
    readable = body[: MAX_SESSION_ID - len(prefix) - 14].rstrip("-.")
    return "-".join(part for part in (prefix, readable, _digest(source, native_id)) if part)


def session_id_for(source: str, native_id: str, *, hashed: bool = False) -> str:
    """A valid, stable session id for (source, native id); distinct native ids get distinct ids."""
    prefix = _prefix(source)
    sid = f"{prefix}-{native_id}"
    if not hashed and _SAFE.fullmatch(native_id) and len(sid) <= MAX_SESSION_ID:
        return sid
    body = _UNSAFE.sub("-", native_id).strip("-.")
    return _hashed(prefix, body, source, native_id)


def legacy_session_id(source: str, native_id: str) -> str:
    """The id versions before 2025-12 gave: "/" read as "-", leading/trailing "-." dropped, no hash."""
    prefix = _prefix(source)
    body = _UNSAFE.sub("-", native_id).strip("-.") or "session"
    sid = f"{prefix}-{body}"
    if len(sid) > MAX_SESSION_ID or body != native_id.replace("/", "-").strip("-."):
        digest = _digest(source, native_id)
        sid = f"{prefix}-{body[: MAX_SESSION_ID - len(prefix) - 15].rstrip('-.')}-{digest}"
    return sid


def node_id_for(source_id: str) -> str:
    """The source id itself when it is a valid node id, else a stable hash of it."""
    if NODE_ID_RE.fullmatch(source_id) and not source_id.startswith("h-"):
        return source_id
    return "h-" + hashlib.sha1(source_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _holder(store: SessionStore, sid: str) -> tuple[str, str] | None:
    """(source, native id) recorded by the session `sid`, ("", "") for a session of unknown
    origin, None when there is no such session."""
    try:
        if not store.exists(sid):
            return None
        meta = store.get_meta(sid)
    except OpmemError:
        return ("", "")
    ref = meta.source_ref
    native = ref.get("native_id") if isinstance(ref, Mapping) else None
    return (meta.source, native) if isinstance(native, str) else ("", "")


def resolve_session_id(store: SessionStore, source: str, native_id: str, aliases: Iterable[str] = ()) -> str:
    """The session that holds (source, native id) in `store`, or the id a new one gets.

    `aliases` are native ids an earlier version of the importer gave the same session.
    """
    names = {native_id, *aliases}
    sid = session_id_for(source, native_id)
    holder = _holder(store, sid)
    if holder is None:
        for name in sorted(names):
            for earlier in {session_id_for(source, name), legacy_session_id(source, name)} - {sid}:
                found = _holder(store, earlier)
                if found is not None and found[0] == source and found[1] in names:
                    return earlier
        return sid
    if holder[0] == source and holder[1] in names:
        return sid
    return session_id_for(source, native_id, hashed=True)  # taken by another native id
