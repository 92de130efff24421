"""Stage 5, project: the derived views of the memory, rebuilt after a run appended something.

core.md (the global one and one per project) and the entity views come from the memory's own
projections (backend/memory/core.py, views.py); a run rebuilds the views of the entities it
touched, the sleep all of them. The cores are written whole and only when they changed. The
search index (backend/memory/search_service.py) takes the new records and the turns of the
sessions distilled, so a distilled fact finds its turn at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from ..home import Home
from ..memory.core import consolidation_day, write_cores
from ..memory.views import write_views
from ..model import OpmemError


def _project_names(home: Home) -> dict[str, str]:
    try:
        return {p.id: p.name for p in home.projects.list_projects()}
    except OpmemError:
        return {}


def project_all(home: Home, entity_ids: Iterable[str] | None = None, sessions: Iterable[str] = ()) -> list[str]:
    """Rebuild core.md files and entity views (all of them when `entity_ids` is None) and bring
    the search index up to the memory (and to `sessions`' turns); returns notes."""
    notes: list[str] = []
    memory = home.memory
    cores = write_cores(memory, consolidation_day(time.time()), _project_names(home))
    views = write_views(memory, None if entity_ids is None else sorted(set(entity_ids)))
    notes.append(f"{len(cores)} core.md file{'s' if len(cores) != 1 else ''}, {views.written} entity views written")
    indexed = home.search_index.update(sorted(set(sessions)))
    notes.extend(indexed.problems[:5])
    return notes
