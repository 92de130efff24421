"""Stage 5, project: the derived views of the memory, rebuilt after a run appended something.

core.md (the global one and one per project) and the entity views come from the memory's own
projections (backend/memory/core.py, views.py); a run rebuilds the views of the entities it
touched, the sleep all of them. The cores are written whole and only when they changed. The
search index (backend/memory/search_service.py) takes the new records and the turns of the
sessions distilled, so a distilled fact finds its turn at once.

A view is rendered only when its inputs changed (views.py): only the entities the records
appended since the last projection touch are looked at. The stamp given to write_views is the
memory logs' sizes, mtimes and inodes plus the session store's change token (a session written
or deleted changes what a view shows), so a sleep with nothing new asks no query; the sessions'
token (exclusions, projects' registry) and each meta.json's stat spare asking a session's visibility.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..memory.core import consolidation_day, write_cores
from ..memory.index import SearchIndexError
from ..memory.logs import FileStamp, log_names
from ..memory.store import MemoryStore
from ..memory.views import write_views
from ..model import OpmemError
from ..session_pointers import known_session_ids
from ..store.files import write_atomic
from .collect import change_token

if TYPE_CHECKING:
    from ..home import Home


def _project_names(home: Home) -> dict[str, str]:
    try:
        return {p.id: p.name for p in home.projects.list_projects()}
    except OpmemError:
        return {}


def views_stamp(home: Home) -> str:
    """A token of everything an entity view depends on; "" when the session store keeps none."""
    token = change_token(home.sessions)
    if not token:
        return ""
    root = home.memory_dir
    parts = [token, home.exclusions().fingerprint]
    for name in log_names(root):
        stamp = FileStamp.of(root / name)
        parts.append(f"{name}:{stamp.size}:{stamp.mtime_ns}:{stamp.ino}" if stamp else f"{name}:-")
    return hashlib.blake2b("\n".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def sessions_token(home: Home) -> str:
    """A token of what every session's visibility depends on beside its own meta.json: the
    exclusions and the projects' registry (a project's name and folder)."""
    registry = FileStamp.of(home.projects_dir / "projects.json")
    parts = [home.exclusions().fingerprint, f"{registry.size}:{registry.mtime_ns}:{registry.ino}" if registry else "-"]
    return hashlib.blake2b("\n".join(parts).encode("utf-8"), digest_size=16).hexdigest()


CORES_STATE = "projects/.cores-state"  # derived: the key the core.md files were last rendered under


def _cores_key(home: Home, stamp: str, visibility: str, day: object, names: dict[str, str]) -> str:
    """A token of everything the core.md files depend on (the memory's logs and the sessions, as
    `views_stamp`; the visibility token; the consolidation day; the projects' names) and of the
    files themselves (one edited or removed by hand is rendered again); "" when there is no stamp."""
    if not stamp:
        return ""
    parts = [stamp, visibility, str(day), json.dumps(sorted(names.items()))]
    for path in [*sorted(home.memory_dir.glob("projects/*/core.md")), home.memory_dir / "core.md"]:
        found = FileStamp.of(path)
        parts.append(f"{path.parent.name}:{found.size}:{found.mtime_ns}:{found.ino}" if found else f"{path}:-")
    return hashlib.blake2b("\n".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def _read_cores_key(home: Home) -> str:
    try:
        return (home.memory_dir / CORES_STATE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _write_cores_key(home: Home, key: str) -> None:
    path = home.memory_dir / CORES_STATE
    if key:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, key.encode("ascii"), durable=False)  # derived: lost, the next run renders again


def meta_key(home: Home) -> Callable[[str], str]:
    """sid -> the stat of its meta.json (where the store keeps it): a session's part of its visibility."""
    sessions = home.sessions

    def key(session_id: str) -> str:
        try:
            st = os.stat(sessions.path_for(session_id) / "meta.json")
        except (OpmemError, OSError):
            return "-"
        return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"

    return key


def project_all(home: Home, entity_ids: Iterable[str] | None = None, sessions: Iterable[str] = ()) -> list[str]:
    """Rebuild core.md files and entity views (all of them when `entity_ids` is None) and bring
    the search index up to the memory (and to `sessions`' turns); returns notes."""
    notes: list[str] = []
    stamp = views_stamp(home)  # before reading: a write meanwhile changes it, and the next run redoes
    visibility = sessions_token(home)
    # whether a session still exists is asked once per session here, not once per query per view
    memory = MemoryStore(home.memory_dir, session_exists=functools.cache(home.visible), durable=home.durable)
    try:
        day, names = consolidation_day(time.time()), _project_names(home)
        key = _cores_key(home, stamp, visibility, day, names)
        if key and key == _read_cores_key(home):  # nothing a block depends on changed: none rendered
            cores = [*sorted(home.memory_dir.glob("projects/*/core.md")), home.memory_dir / "core.md"]
        else:
            cores = write_cores(memory, day, names, known_session_ids(home.sessions))
            _write_cores_key(home, _cores_key(home, stamp, visibility, day, names))
        wanted = None if entity_ids is None else sorted(set(entity_ids))
        views = write_views(memory, wanted, stamp, visibility, meta_key(home))
        problems = memory.problems()  # lines of the logs the memory skipped: named, never fatal
    finally:
        memory.close()
    notes.append(f"{len(cores)} core.md file{'s' if len(cores) != 1 else ''}, {views.written} entity views written")
    from ..agents.connect import refresh  # the connected agents' blocks follow the new core.md files

    notes.extend(refresh(home))
    notes.extend(f"skipped: {problem}" for problem in problems[:5])
    if len(problems) > 5:
        notes.append(f"skipped: … and {len(problems) - 5} more lines of the memory logs")
    try:
        indexed = home.search_index.update(sorted(set(sessions)))
    except SearchIndexError as exc:  # derived: the memory and core.md are written; say so, do not fail the run
        notes.append(f"search index not updated: {exc}")
    else:
        notes.extend(indexed.problems[:5])
    return notes
