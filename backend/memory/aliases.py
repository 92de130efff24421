"""Alias folding: which canonical entity every entity id stands for, from merges and unmerges.

Merges apply in the order they were recorded (`at`, then log order). A merge whose merged
entity already folds elsewhere, or that would close a cycle, is ignored and reported; an
unmerge removes its merge (and the entities that followed it come along). `known_at=T` folds
only the merges and unmerges recorded at or before T.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from .records import AliasMerge, AliasUnmerge
from .results import MemoryProblem


@dataclass(frozen=True, slots=True)
class AliasRow:
    merge: AliasMerge
    path: str
    line: int


class AliasView:
    """Canonical ids and group members for one point of knowledge (`known_at`)."""

    def __init__(self, parent: dict[str, str], problems: tuple[MemoryProblem, ...] = ()) -> None:
        self._parent = parent
        self.problems = problems
        self._members: dict[str, list[str]] | None = None

    def canonical(self, entity_id: str) -> str:
        seen = 0
        while entity_id in self._parent and seen < 10_000:
            entity_id = self._parent[entity_id]
            seen += 1
        return entity_id

    def members(self, canonical_id: str) -> tuple[str, ...]:
        """The canonical id first, then every id folded into it (sorted)."""
        if self._members is None:
            groups: dict[str, list[str]] = {}
            for child in self._parent:
                groups.setdefault(self.canonical(child), []).append(child)
            self._members = {root: sorted(ids) for root, ids in groups.items()}
        return (canonical_id, *self._members.get(canonical_id, ()))

    def canonical_many(self, ids: Iterable[str]) -> set[str]:
        return {self.canonical(i) for i in ids}


class AliasIndex:
    """Every alias merge and unmerge the cache holds; folds them into an AliasView on demand."""

    def __init__(self, rows: list[AliasRow], unmerges: dict[str, AliasUnmerge]) -> None:
        self.rows = rows
        self.unmerges = unmerges
        self._current: AliasView | None = None

    @classmethod
    def load(cls, db: sqlite3.Connection) -> AliasIndex:
        rows = [
            AliasRow(AliasMerge(r[0], r[1], r[2], r[3], r[5], r[4]), r[6], r[7])
            for r in db.execute("SELECT id, into_, merged, reason, score, at, path, line FROM aliases ORDER BY at, seq")
        ]
        unmerges = {
            r[0]: AliasUnmerge(r[0], r[1], r[2]) for r in db.execute("SELECT id, at, reason FROM unmerges ORDER BY seq")
        }
        return cls(rows, unmerges)

    def view(self, known_at: float | None = None) -> AliasView:
        if known_at is None:
            if self._current is None:
                self._current = self._fold(None)
            return self._current
        return self._fold(known_at)

    def merge_of(self, alias_id: str) -> AliasRow | None:
        return next((row for row in self.rows if row.merge.id == alias_id), None)

    def _fold(self, known_at: float | None) -> AliasView:
        parent: dict[str, str] = {}
        problems: list[MemoryProblem] = []
        view = AliasView(parent)
        for row in self.rows:
            merge = row.merge
            if known_at is not None and merge.at > known_at:
                continue
            undo = self.unmerges.get(merge.id)
            if undo is not None and (known_at is None or undo.at <= known_at):
                continue
            if merge.merged in parent:
                problems.append(
                    MemoryProblem(
                        row.path,
                        row.line,
                        f"alias {merge.id}: {merge.merged} is already merged into {parent[merge.merged]}; ignored",
                    )
                )
                continue
            if merge.into == merge.merged or view.canonical(merge.into) == merge.merged:
                problems.append(MemoryProblem(row.path, row.line, f"alias {merge.id}: would make a cycle; ignored"))
                continue
            parent[merge.merged] = merge.into
        return AliasView(parent, tuple(problems) if known_at is None else ())
