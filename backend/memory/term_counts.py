"""Row counts of query terms, kept while the index does not change.

ranking.split_terms counts each query term's rows (up to a cap) to tell rare from common words;
the same words come back query after query, so the counts are kept per connection and dropped
as soon as the index changes: PRAGMA data_version moves when another connection commits, and
the connection's total_changes when it writes itself.
"""

from __future__ import annotations

import sqlite3

MAX_KEPT = 50_000  # terms kept before the cache starts over


class TermCounts:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._generation: tuple[int, int] | None = None
        self._counts: dict[tuple[str, str], int] = {}

    def current(self) -> dict[tuple[str, str], int]:
        """(table, term) -> count, empty again whenever the index changed since the last call."""
        generation = (int(self.db.execute("PRAGMA data_version").fetchone()[0]), self.db.total_changes)
        if generation != self._generation or len(self._counts) > MAX_KEPT:
            self._counts = {}
            self._generation = generation
        return self._counts
