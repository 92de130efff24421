"""SearchService: the index, its updater and its searcher for one home (`Home.search_index`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..store.sessions import SessionStore
from .index import INDEX_FILE, IndexStats, SearchIndex
from .index_update import IndexUpdater, Progress, UpdateReport
from .search import DEFAULT_K, Searcher, SearchHit
from .snippets import Snippets


class SearchService:
    """search / update / rebuild over memory/index.sqlite. Thread-safe; processes may share the file."""

    def __init__(self, memory_dir: Path, store: SessionStore) -> None:
        self.memory_dir = Path(memory_dir)
        self.store = store
        self.index = SearchIndex(self.memory_dir / INDEX_FILE)
        self.updater = IndexUpdater(self.index, store, self.memory_dir)
        self.searcher = Searcher(self.index, Snippets(store))

    @property
    def path(self) -> Path:
        return self.index.path

    def search(
        self,
        query: object,
        scope: str | None = None,
        k: int = DEFAULT_K,
        since: float | None = None,
        until: float | None = None,
        *,
        refresh: bool = False,
    ) -> tuple[SearchHit, ...]:
        """Hits for any text (never a syntax error). refresh=True catches the index up first.

        An index that does not exist yet is built before the first search (it is derived data).
        """
        if refresh or not self.index.path.exists():
            self.update()
        return self.searcher.search(query, scope, k, since, until)

    def update(self, sessions: Iterable[str] | None = None, *, progress: Progress | None = None) -> UpdateReport:
        return self.updater.update(sessions, progress=progress)

    def after_ingest(self, sessions: frozenset[str]) -> None:
        """The import/watch hook: index the sessions a batch wrote to."""
        self.updater.update(sessions)

    def rebuild(self, *, progress: Progress | None = None) -> UpdateReport:
        return self.updater.rebuild(progress=progress)

    def stats(self) -> IndexStats:
        return self.index.stats()

    def close(self) -> None:
        self.index.close()
