"""The session list of one store: every session folder's meta.json, re-read only where something changed.

Cold, it is one scandir and one open+read per session; warm, a few stats: the store's change
token, the folder and locations.json decide whether anything needs reading again, and each
meta.json is re-parsed only when its (mtime, size, inode) moved.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..model import SESSION_ID_RE, CorruptFile, SessionListing, SessionMeta
from .files import read_json


class Locations:
    """locations.json: {session_id: folder} of sessions kept inside projects."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cached: tuple[tuple[int, int, int], dict[str, str]] | None = None

    def read(self) -> dict[str, str]:
        """Re-read only when the file changes (it is rewritten by rename: a new inode each time)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if self._cached is not None and self._cached[0] == stamp:
            return dict(self._cached[1])
        data = read_json(self.path)
        if not isinstance(data, dict):
            raise CorruptFile(self.path, "expected a JSON object {session_id: path}")
        found = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str) and _is_path(v)}
        self._cached = (stamp, found)
        return dict(found)


def _is_path(text: str) -> bool:
    """A path the OS can take (a hand-edited `\\ud800` escape cannot be encoded)."""
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return False
    return "\0" not in text


class Listing:
    """Every session of one store."""

    def __init__(self, root: Path, locations: Locations, changed_path: Path) -> None:
        self.root = root
        self._locations = locations
        self.changed_path = changed_path
        self._cached: tuple[tuple[Any, ...], SessionListing] | None = None
        self._entries: dict[str, tuple[tuple[int, int, int], SessionMeta | str]] = {}

    def forget(self) -> None:
        """This process changed a session: the next read looks again (unchanged meta.json files stay parsed)."""
        self._cached = None

    def _key(self) -> tuple[Any, ...]:
        def stamp(path: Path) -> tuple[int, int, int]:
            try:
                st = path.stat()
                return st.st_mtime_ns, st.st_size, st.st_ino
            except OSError:
                return (0, 0, 0)

        try:
            token = self.changed_path.read_text()
        except OSError:
            token = ""
        return (token, stamp(self.root), stamp(self._locations.path))

    def read(self, *, rescan: bool = False) -> SessionListing:
        """Every valid session, newest `updated_at` first; invalid folders are counted, not fatal.

        Warm calls cost a few stats. `rescan=True` re-reads every meta.json, for folders another
        program (not opmem) may have edited.
        """
        key = self._key()
        cached = self._cached
        if rescan:
            self._entries = {}
        elif cached is not None and cached[0] == key:
            return cached[1]
        # Strings, not Paths, and one open+fstat per session: this loop runs 10,000 times.
        candidates: dict[str, str] = {}
        try:
            with os.scandir(str(self.root)) as it:
                for entry in it:
                    if entry.name[0] != "." and entry.is_dir(follow_symlinks=False):
                        candidates[entry.name] = entry.path
        except FileNotFoundError:
            pass
        problems: list[str] = []
        try:
            for sid, located in self._locations.read().items():
                candidates[sid] = located  # in-project location wins over a stray copy
        except CorruptFile as exc:
            problems.append(str(exc))
        metas: list[SessionMeta] = []
        unreadable: list[str] = []
        entries: dict[str, tuple[tuple[int, int, int], SessionMeta | str]] = {}
        previous_entries = self._entries
        for sid, path in candidates.items():
            meta_path = path + "/meta.json"
            previous = previous_entries.get(sid)
            result: SessionMeta | str
            try:
                fd = os.open(meta_path, os.O_RDONLY)
            except FileNotFoundError:
                result, stamp = f"{path}: no meta.json", (0, 0, 0)
            except OSError as exc:
                result, stamp = f"{meta_path}: cannot read ({exc.strerror})", (0, 0, 0)
            else:
                try:
                    st = os.fstat(fd)
                    # The inode too: meta.json is replaced by rename, and two writes within one
                    # timestamp tick can leave the same mtime and size.
                    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
                    if previous is not None and previous[0] == stamp:
                        result = previous[1]
                    else:
                        result = _listing_entry(sid, path, meta_path, os.read(fd, st.st_size + 1))
                finally:
                    os.close(fd)
            entries[sid] = (stamp, result)
            if result.__class__ is str:
                problems.append(result)  # type: ignore[arg-type]
                unreadable.append(sid)
            else:
                metas.append(result)  # type: ignore[arg-type]
        metas.sort(key=lambda m: (m.updated_at, m.id), reverse=True)
        listing = SessionListing(
            sessions=tuple(metas), skipped=len(problems), problems=tuple(problems), unreadable=tuple(sorted(unreadable))
        )
        self._entries = entries
        self._cached = (key, listing)
        return listing


def _listing_entry(sid: str, path: str, meta_path: str, raw: bytes) -> SessionMeta | str:
    if not SESSION_ID_RE.fullmatch(sid):
        return f"{path}: invalid session id {sid!r}"
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return f"{meta_path}: invalid JSON ({exc})"
    except RecursionError:
        return f"{meta_path}: JSON nested too deeply to read"
    if not isinstance(data, dict):
        return f"{meta_path}: not a JSON object"
    return SessionMeta.from_listing(data, sid, path)
