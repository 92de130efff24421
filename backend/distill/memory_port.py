"""The pipeline's door to the memory store (backend/memory/store.py): what it reads and how it writes.

Batches are staged and written together (one lock hold and one fsync for many small
sessions), in an order a crash can cut anywhere: records first, then alias merges, then
supersede patches; every one of them is idempotent (same ids, same patch pairs), so a rerun
after a SIGKILL completes what was cut and appends nothing twice. What is staged is durable
when `flush` returns: only then does the pipeline move the cursors of the batches it held.
Reads (current edges, events of a slot) see the staged records too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..memory.records import Edge, Event
from ..memory.results import RecordNotFound
from ..memory.store import MemoryStore
from .link import PATH_TYPES, Known
from .model import Contradiction, Reconciled, Written

CONTRADICTIONS_LOG = "contradictions.jsonl"


class MemoryPort:
    """Reads see the memory plus what this port has staged and not written yet."""

    def __init__(self, store: MemoryStore, exclude: set[str] | None = None) -> None:
        self.store = store
        # Records a killed run wrote past its cursor: read as not stored until re-staged, so a
        # rerun decides every batch as an uninterrupted run did (pipeline.py, "in flight").
        self.exclude: set[str] = set(exclude or ())
        self._staged: list[Reconciled] = []
        self._staged_edges: dict[tuple[str, str], list[Edge]] = {}
        self._staged_events: dict[str, list[Event]] = {}
        self.staged_records = 0
        self._retired: set[str] = set()  # the ids the staged patches retire
        self._relations: dict[str, tuple[Edge, ...]] = {}  # current stored edges of a relation, until a flush
        self._subjects: dict[str, dict[str, list[Edge]]] = {}  # the same, by their subject
        self._asked: dict[str, None] = {}  # every relation read, in order: read again together after a flush
        self._categories: dict[str, str] = {}

    # -- reads ------------------------------------------------------------------------------------

    def current_edges(self, subject: str, relation: str, scope: str) -> Sequence[Edge]:
        """Current edges from `subject` (or its aliases) with `relation`, in any scope (the caller filters)."""
        self.relation_edges(relation)
        stored = self._subjects[relation].get(subject, ())
        retired = self._retired
        staged = self._staged_edges.get((subject, relation), ())
        if not retired:
            return (*stored, *staged)
        return tuple(e for e in (*stored, *staged) if e.id not in retired)

    def relation_edges(self, relation: str) -> Sequence[Edge]:
        """Current stored edges of one relation, by their own ends (aliases not folded), those in flight left out.

        The first one asked after a flush is read with the others asked before, in one query:
        the store checks each session's visibility once a query, not once a relation.
        """
        cached = self._relations.get(relation)
        if cached is None:
            self._asked[relation] = None
            together = [r for r in self._asked if r not in self._relations and _given_back(r)]
            self._read_relations(together if relation in together else [relation])
            cached = self._relations[relation]
        return cached

    def _read_relations(self, relations: list[str]) -> None:
        found: dict[str, list[Edge]] = {r: [] for r in relations}
        for g in self.store.edges(relations=relations, limit=None):  # newest first, as for each alone
            if g.edge.id not in self.exclude:
                found[g.edge.relation if len(relations) > 1 else relations[0]].append(g.edge)
        for relation, edges in found.items():
            self._relations[relation] = tuple(edges)
            subjects = self._subjects[relation] = {}
            for edge in edges:
                subjects.setdefault(edge.from_id, []).append(edge)

    def category_of(self, entity_id: str) -> str:
        """A technology's category, stored or staged ("" for another entity, or one not known)."""
        found = self._categories.get(entity_id)
        if found is not None:
            return found
        entity = self.store.entity_by_id(entity_id)
        if entity is None:  # staged, not written yet (rare: asked for switches only)
            entity = next((e for r in reversed(self._staged) for e in r.extraction.entities if e.id == entity_id), None)
            if entity is None:
                return ""
        found = str(entity.attrs.get("category", "")) if entity.type == "tech" else ""
        self._categories[entity_id] = found
        return found

    def current_events(self, key: str) -> Sequence[Event]:
        retired = self._retired
        stored = [e for e in self.store.events_with_key(key) if e.superseded_by is None and e.id not in self.exclude]
        return tuple(e for e in (*stored, *self._staged_events.get(key, ())) if e.id not in retired)

    def known_entities(self, types: Iterable[str] | None = None) -> list[Known]:
        """Every entity record as stored (merged ones too, unfolded), but those in flight."""
        wanted = set(types) if types is not None else None
        refs = self.store.entity_refs(i for i in self.store.entity_ids() if i not in self.exclude)
        out: list[Known] = []
        for ref in refs.values():
            if wanted is not None and ref.type not in wanted:
                continue
            if ref.type in PATH_TYPES:  # their absolute path is in attrs: the record is needed
                entity = self.store.entity_by_id(ref.id)
                if entity is not None:
                    out.append(Known.of(entity))
            else:
                out.append(Known(ref.id, ref.type, ref.name))
        out.sort(key=lambda k: k.id)
        return out

    def staged_ids(self) -> set[str]:
        return {
            r.id
            for item in self._staged
            for r in (*item.extraction.entities, *item.extraction.edges, *item.extraction.events)
        }

    # -- writes -----------------------------------------------------------------------------------

    def stage(self, reconciled: Reconciled) -> None:
        """Hold a batch's records for the next `flush` (reads above already see them)."""
        self._staged.append(reconciled)
        self._retired.update(p.id for p in (*reconciled.edge_patches, *reconciled.event_patches))
        extraction = reconciled.extraction
        for edge in extraction.edges:
            self._staged_edges.setdefault((edge.from_id, edge.relation), []).append(edge)
        for event in extraction.events:
            if event.key:
                self._staged_events.setdefault(event.key, []).append(event)
        self.staged_records += len(extraction.entities) + len(extraction.edges) + len(extraction.events)

    def flush(self) -> Written:
        """Write everything staged in one memory batch: records, then alias merges, then patches."""
        staged, self._staged, self._retired = self._staged, [], set()
        self._relations, self._subjects = {}, {}
        self._staged_edges, self._staged_events, self.staged_records = {}, {}, 0
        if not staged:
            return Written()
        merges = patches = 0
        with self.store.batch() as writer:
            records = [r for item in staged for r in (*item.extraction.entities, *item.extraction.edges)]
            records += [e for item in staged for e in item.extraction.events]
            result = writer.append(records)
            for merge in (m for item in staged for m in item.linked.merges):
                try:
                    if writer.merge(merge.into, merge.merged, merge.reason, merge.score, at=merge.at) is not None:
                        merges += 1
                except RecordNotFound:
                    continue  # an entity of an older merge that the memory never got: nothing to fold
            wanted = [
                (p.id, p.by, p.reason, p.at) for item in staged for p in (*item.edge_patches, *item.event_patches)
            ]
            if wanted:  # one cache transaction for them all; a missing record gives None
                patches = sum(1 for patch in writer.supersede_many(wanted) if patch is not None)
        return Written(result.entities, result.edges, result.events, patches, merges)

    def write(self, reconciled: Reconciled) -> Written:
        self.stage(reconciled)
        return self.flush()


def _given_back(relation: str) -> bool:
    """Whether the store's query (json_each) matches `relation` as it is, so that edges read for
    several relations can be told apart by theirs: not so with a NUL (it stops there) or a lone
    surrogate in it."""
    if not isinstance(relation, str) or "\x00" in relation:
        return False
    try:
        relation.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def log_contradictions(memory_dir: Path, found: Sequence[Contradiction], *, durable: bool = True) -> int:
    """Append the contradictions not logged yet to memory/contradictions.jsonl (fsynced).

    Called before the patches are written: a run killed in between logs them again on its
    rerun, and the (kept, retired) pairs already in the log are not repeated.
    """
    path = Path(memory_dir) / CONTRADICTIONS_LOG
    logged = {(c.get("kept"), c.get("retired")) for c in read_contradictions(memory_dir)} if found else set()
    fresh = [c for c in found if (c.kept, c.retired) not in logged]
    if not fresh:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in fresh).encode("utf-8")
    with open(path, "ab") as fh:
        if fh.tell() > 0:
            with open(path, "rb") as check:
                check.seek(-1, os.SEEK_END)
                if check.read(1) != b"\n":
                    fh.write(b"\n")  # a torn line from a killed run stays a line of its own
        fh.write(data)
        fh.flush()
        if durable:
            os.fsync(fh.fileno())
    return len(fresh)


def read_contradictions(memory_dir: Path) -> list[dict]:
    path = Path(memory_dir) / CONTRADICTIONS_LOG
    out = []
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out
