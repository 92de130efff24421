"""The app's reads and writes of the memory (graph, timeline, core.md) and of the search index.

Part of the data layer (`StoreData.memory`): every method blocks on files or SQLite, so the
app calls them from thread workers; each returns frozen dataclasses the widgets take as they
are. Nothing here opens the memory before it exists: an empty store stays empty.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from opmem_tui.backend import naming
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core_files import (
    CoreFile,
    CoreLineTarget,
    CoreText,
    core_files,
    core_stamp,
    line_pointer,
    line_target,
    opening_core,
    read_core,
)
from opmem_tui.backend.memory.entity_finder import EntityFinder, EntityMatch
from opmem_tui.backend.memory.logs import log_names
from opmem_tui.backend.memory.records import Event
from opmem_tui.backend.memory.results import AliasInfo, EntityRef, GraphEdge, MemoryStats
from opmem_tui.backend.memory.search import SearchHit
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.projects.known import unbound_projects

from .masking import mask, mask_event, mask_hit

if TYPE_CHECKING:  # the distiller and the index writer load when first used, not at start
    from opmem_tui.backend.agents.claude_hooks import HooksChange
    from opmem_tui.backend.distill.triggers import Distiller
    from opmem_tui.backend.memory.index_update import UpdateReport

TIMELINE_PAGE = 400  # events per read: a few screens of the timeline
SEARCH_HITS = 60  # hits per search everywhere: a few screens; the ranking puts the best first
PROBLEMS_SHOWN = 20  # unreadable log lines named to the user (the count says how many in all)
RECENT_EDGES = 80  # edges read to offer "recently seen" entities before anything is typed


@dataclass(frozen=True)
class MemoryOverview:
    exists: bool  # anything distilled yet
    stats: MemoryStats | None = None
    # lines of the logs the memory could not use, `memory/graph/edges.jsonl:12: ...` (the first
    # few), and how many there are
    problems: tuple[str, ...] = ()
    problem_count: int = 0


@dataclass(frozen=True)
class GraphView:
    """One entity's neighbourhood as the explorer draws it."""

    center: EntityRef
    aliases: tuple[str, ...]  # names the entity is also known by
    merges: tuple[AliasInfo, ...]  # how each alias came to be merged (or was undone)
    edges: tuple[GraphEdge, ...]
    names: Mapping[str, EntityRef]
    hops: int
    as_of: float | None
    superseded: bool  # superseded edges are shown
    hidden_superseded: int = 0
    truncated: bool = False
    millis: float = 0.0


@dataclass(frozen=True)
class TimelineSlice:
    """Events newest first; `more` says older ones remain (`until` reads them)."""

    events: tuple[Event, ...]
    more: bool
    entity: EntityRef | None = None  # the entity filter, resolved
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchResults:
    query: str
    hits: tuple[SearchHit, ...]
    millis: float = 0.0
    found: int = 0  # hits the index gave, those into deleted sessions included (fewer than asked: all)


@dataclass(frozen=True)
class AliasChoice:
    merge_id: str
    into: EntityRef
    merged: EntityRef
    reason: str
    score: float


class MemoryData:
    """Reads of one Home's memory and search index for the app."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._finder: EntityFinder | None = None
        self._finder_lock = threading.Lock()

    # -- presence --------------------------------------------------------------------------
    def exists(self) -> bool:
        root = self.home.memory_dir
        return (root / "graph" / "entities.jsonl").is_file() or any((root / "timeline").glob("*.jsonl"))

    def logs_stamp(self) -> tuple[tuple[str, int, int], ...]:
        """The memory's logs as they stand on disk (name, mtime, size of each): another value
        means someone appended to them (a distillation, `opmem watch`, an unmerge)."""
        root = self.home.memory_dir
        stamp = []
        for name in log_names(root):
            try:
                info = (root / name).stat()
            except OSError:
                continue
            stamp.append((name, info.st_mtime_ns, info.st_size))
        return tuple(stamp)

    def overview(self) -> MemoryOverview:
        if not self.exists():
            return MemoryOverview(False)
        memory = self.home.memory
        root = str(self.home.path) + os.sep
        # A log's unfinished last line is left out: another process may be writing it right now;
        # a crash's leftover is sealed by the next append and named then as a bad line.
        found = [p for p in memory.problems() if not p.message.startswith("incomplete last line")]
        problems = tuple(str(p).replace(root, "", 1) for p in found[:PROBLEMS_SHOWN])
        return MemoryOverview(True, memory.stats(), problems, len(found))

    # -- graph -----------------------------------------------------------------------------
    @property
    def finder(self) -> EntityFinder:
        with self._finder_lock:
            if self._finder is None:
                self._finder = EntityFinder(self.home.memory)
            return self._finder

    def find_entities(self, query: str, limit: int = 30) -> tuple[EntityMatch, ...]:
        if not self.exists():
            return ()
        if not query.strip():
            return self.recent_entities(limit)
        return self.finder.find(query, limit)

    def recent_entities(self, limit: int = 30) -> tuple[EntityMatch, ...]:
        """Entities at the ends of the newest edges, the most connected among them first: what
        to offer before anything is typed."""
        if not self.exists():
            return ()
        memory = self.home.memory
        edges = memory.edges(limit=RECENT_EDGES)
        seen: dict[str, int] = {}
        for g in edges:  # newest first: an entity's first place is its newest edge
            for end in (g.source, g.target):
                seen[end] = seen.get(end, 0) + 1
        newest = {entity: place for place, entity in enumerate(seen)}
        order = sorted(seen, key=lambda e: (-seen[e], newest[e]))[:limit]  # the busiest recently first
        refs = memory.entity_refs(order)
        return tuple(EntityMatch(ref.id, ref.name, ref.type, "", 0.0) for ref in (refs[i] for i in order))

    def graph(self, entity_id: str, hops: int = 1, as_of: float | None = None, superseded: bool = False) -> GraphView:
        started = time.perf_counter()
        memory = self.home.memory
        hood = memory.neighbors(entity_id, hops=hops, as_of=as_of, include_superseded=superseded)
        center = hood.center
        names = dict(hood.entities)
        if center.id not in names:
            names[center.id] = EntityRef(center.id, center.type, center.name, center.scope)
        return GraphView(
            center=names[center.id],
            aliases=tuple(a for a in dict.fromkeys(center.aliases) if a != center.name),
            merges=memory.aliases(center.id),
            edges=hood.edges,
            names=MappingProxyType(names),
            hops=hops,
            as_of=as_of,
            superseded=superseded,
            hidden_superseded=hood.hidden_superseded,
            truncated=hood.truncated,
            millis=(time.perf_counter() - started) * 1000,
        )

    def alias_merges(self) -> tuple[AliasChoice, ...]:
        """Every alias merge in force, newest first (for the palette's undo)."""
        if not self.exists():
            return ()
        memory = self.home.memory
        groups = {memory.canonical_id(e.id) for e in memory.entity_records()}
        choices: dict[str, AliasChoice] = {}
        for canonical in groups:
            for info in memory.aliases(canonical):
                if not info.active or info.merge.id in choices:
                    continue
                refs = memory.entity_refs([info.merge.into, info.merge.merged])
                choices[info.merge.id] = AliasChoice(
                    info.merge.id, refs[info.merge.into], refs[info.merge.merged], info.merge.reason, info.merge.score
                )
        return tuple(sorted(choices.values(), key=lambda c: (c.into.name.casefold(), c.merged.name.casefold())))

    def unmerge(self, merge_id: str) -> bool:
        """Undo one alias merge; False when it was undone already."""
        return self.home.memory.unmerge(merge_id, reason="undone in the app") is not None

    # -- timeline --------------------------------------------------------------------------
    def timeline(
        self,
        *,
        kinds: tuple[str, ...] = (),
        entity: str = "",
        until: float | None = None,
        skip: frozenset[str] = frozenset(),
        limit: int = TIMELINE_PAGE,
    ) -> TimelineSlice:
        """A page of events, newest first, older than `until` (inclusive; ids in `skip` were
        already shown). `entity`: an id, name or alias (aliases fold); unknown raises with
        suggestions."""
        if not self.exists():
            return TimelineSlice((), False)
        memory = self.home.memory
        ref = None
        if entity:
            found = memory.entity(entity)
            ref = EntityRef(found.id, found.type, found.name, found.scope)
        page = memory.timeline(
            until=until, entity=ref.id if ref else None, kinds=kinds or None, limit=limit + len(skip)
        )
        events = tuple(mask_event(e) for e in page.events if e.id not in skip)[:limit]  # summaries quote turns
        return TimelineSlice(events, page.truncated and bool(events), ref, kinds)

    # -- core.md ---------------------------------------------------------------------------
    def core_files(self) -> list[CoreFile]:
        """The global core.md and the projects' that exist, named as the registry names them."""
        try:
            names = {p.id: p.name for p in self.home.projects.list_projects()}
        except OpmemError:
            names = {}
        written = [folder.parent.name for folder in (self.home.memory_dir / "projects").glob("*/core.md")]
        if any(pid not in names for pid in written):  # a folder no project is bound to: named by the memory
            try:
                unbound = unbound_projects(self.home)
            except OpmemError:
                unbound = []
            names.update({p.id: f"{p.name} ({p.where})" for p in unbound if p.id not in names})
        for pid in written:
            names.setdefault(pid, pid)
        return core_files(self.home.memory_dir, names)

    def opening_core(self, files: list[CoreFile]) -> CoreFile | None:
        """The core.md a first look opens on: the current folder's project's, else a project's brief."""
        try:
            here = self.home.projects.find(os.getcwd())
        except (OpmemError, OSError):
            here = None
        return opening_core(files, here.id if here is not None else "")

    def core(self, file: CoreFile) -> CoreText:
        core = read_core(file)
        text = mask(core.text)  # lines quote sessions; the byte budget stays the file's
        return core if text is core.text else replace(core, text=text)

    def core_stamp(self, file: CoreFile) -> tuple[int, int]:
        return core_stamp(file.path)

    def core_target(self, line: str) -> CoreLineTarget | None:
        """Where a core line points; its pointer's short id resolved to the session's whole id (an
        ambiguous or unknown one: an OpmemError naming the candidates, masked)."""
        pointer = line_pointer(line)
        if pointer is None:
            return None
        try:
            session_id = naming.session_id(self.home, pointer[1])
        except OpmemError as exc:
            raise OpmemError(mask(str(exc))) from None
        if not self.exists():  # a core.md without its memory (copied, or the logs removed)
            return CoreLineTarget(session_id)
        return line_target(self.home.memory, line, session_id)

    # -- jobs (the palette's memory commands) ----------------------------------------------
    @property
    def distiller(self) -> Distiller:
        """The one Distiller of this store (idle runs, the sleep, runs on demand)."""
        return self.home.distiller

    def llm_configured(self) -> bool:
        try:
            return bool(self.home.config.llm.base_url)
        except OpmemError:
            return False

    def rebuild_index(self, progress: Callable[[int, int], object]) -> UpdateReport:
        """A new search index from scratch; `progress` may raise to stop it (the old one stays)."""
        return self.home.search_index.rebuild(progress=progress)

    def install_hooks(self) -> HooksChange:
        """Claude Code's PreCompact/SessionEnd hooks run `opmem flush` for this store."""
        from opmem_tui.backend.agents.claude_hooks import flush_command, install

        return install(flush_command(self.home.path))

    # -- search everywhere -----------------------------------------------------------------
    def search(self, query: str, limit: int = SEARCH_HITS) -> SearchResults:
        """Every message of every session and the memory records, best first (the index is
        built on the first search of a store that has none)."""
        if not query.strip():
            return SearchResults(query, ())
        started = time.perf_counter()
        hits = self.home.search(query, k=limit)
        # A session deleted since it was indexed (in the app, `opmem sessions delete`, by hand)
        # leaves rows in the index until its next update: its hits could not be shown or opened.
        alive: dict[str, bool] = {}
        kept = tuple(
            mask_hit(hit)  # a snippet is session text: secrets masked (masking.py)
            for hit in hits
            if not hit.session_id or alive.setdefault(hit.session_id, self.home.sessions.exists(hit.session_id))
        )
        return SearchResults(query, kept, (time.perf_counter() - started) * 1000, len(hits))

    # -- dates -----------------------------------------------------------------------------
    @staticmethod
    def parse_day(text: str, now: float) -> float:
        """The end of the day `text` names (ISO or '2 weeks ago'), local time, as unix seconds."""
        from opmem_tui.backend.recall.dates import parse_when

        when = parse_when(text, "as of", now=now)
        if len(text.strip()) == 10:  # a bare date: all of that day
            day = dt.datetime.fromtimestamp(when).date()
            end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time()).timestamp()
            return end - 1e-3
        return when


__all__ = [
    "AliasChoice",
    "CoreFile",
    "CoreLineTarget",
    "CoreText",
    "EntityMatch",
    "GraphView",
    "MemoryData",
    "MemoryOverview",
    "OpmemError",
    "SearchResults",
    "TimelineSlice",
]
