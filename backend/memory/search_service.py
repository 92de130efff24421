"""SearchService: the index, its updater and its searcher for one home (`Home.search_index`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..store.sessions import SessionStore
from .dense_minilm import DenseUnavailable
from .dense_rerank import DenseVectors, load
from .index import INDEX_FILE, IndexStats, SchemaMismatch, SearchIndex
from .index_update import IndexUpdater, Progress, Rules, ScopeOf, UpdateReport
from .search import DEFAULT_K, Searcher, SearchHit
from .snippets import Snippets

DENSE_NOTE = "{}; search is lexical only"


class SearchService:
    """search / update / rebuild over memory/index.sqlite. Thread-safe; processes may share the file."""

    def __init__(
        self,
        memory_dir: Path,
        store: SessionStore,
        *,
        dense: str = "",
        rules: Rules | None = None,
        withheld: Callable[[str], bool] | None = None,
        scope_of: ScopeOf | None = None,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.dense = dense
        self.store = store
        self.index = SearchIndex(self.memory_dir / INDEX_FILE)
        self.updater = IndexUpdater(self.index, store, self.memory_dir, rules=rules, scope_of=scope_of)
        # session id -> kept out of the memory (private, excluded): its hits are dropped even from
        # an index a distillation has not caught up with the exclusions yet
        self.withheld = withheld
        self.searcher = Searcher(self.index, Snippets(store))
        # A search that arrives while this process builds the first index waits for it: the
        # file exists from the build's first write, and a search then saw a partial index.
        self._first_build = threading.Lock()
        self._built = False
        self._dense_lock = threading.Lock()
        self._dense_problem = ""

    def dense_vectors(self) -> DenseVectors | None:
        """The dense signal `[search] dense` names, loaded on first use (None: off, or it cannot run)."""
        if not self.dense:
            return None
        with self._dense_lock:
            if self.searcher.dense is None and not self._dense_problem:
                try:
                    self.searcher.dense = DenseVectors(self.index, load(self.dense))
                    self.updater.before_swap = self.searcher.dense.carry_into
                except DenseUnavailable as exc:
                    self._dense_problem = DENSE_NOTE.format(exc)
            return self.searcher.dense

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
        if refresh or not self._built:
            with self._first_build:
                if refresh or not self.index.path.exists():
                    self.update()
                self._built = True
        self.dense_vectors()
        try:
            hits = self.searcher.search(query, scope, k, since, until)
        except SchemaMismatch:
            self.rebuild()
            hits = self.searcher.search(query, scope, k, since, until)
        withheld = self.withheld
        if withheld is None:
            return hits
        return tuple(h for h in hits if not (h.session_id and withheld(h.session_id)))

    def update(self, sessions: Iterable[str] | None = None, *, progress: Progress | None = None) -> UpdateReport:
        """Index what is new (an index of another opmem version is rebuilt whole instead). The
        first build covers every session, whichever `sessions` asked: an index started from a
        few would never index the others (a search only builds an index that does not exist)."""
        if sessions is not None and not self.index.path.exists():
            sessions = None
        self.dense_vectors()  # before a rebuild may swap the file: its vectors carry over
        try:
            report = self.updater.update(sessions, progress=progress)
        except SchemaMismatch:
            report = self.updater.rebuild(progress=progress)
        return self._fill_dense(report)

    def after_ingest(self, sessions: frozenset[str]) -> None:
        """The import/watch hook: index the sessions a batch wrote to."""
        self.update(sessions)

    def after_mirror(self, commits: Mapping[str, Mapping[str, tuple[int, str]]]) -> None:
        """The mirror backlog's hook (MirrorWriter.on_commits): rows indexed before their turn was
        committed get its commit, from what the mirror just wrote; no session is read."""
        if not self.index.path.exists():
            return  # the first search builds the index, commits included
        try:
            behind = self.updater.fill_commits(commits)
        except SchemaMismatch:
            self.rebuild()
            return
        if behind:
            self.update(behind)

    def forget_sessions(self, session_ids: Iterable[str], scopes: Iterable[str] = ()) -> int:
        """Excluded sessions (private, or in an excluded project): their rows and records out of the index."""
        if not self.index.path.exists():
            return 0
        try:
            return self.updater.forget_sessions(session_ids, scopes)
        except SchemaMismatch:
            return self.rebuild().rows

    def readmit_sessions(self, session_ids: Iterable[str], scopes: Iterable[str] = ()) -> UpdateReport:
        """Sessions eligible again: their records and turns back into the index."""
        if not self.index.path.exists():
            return self.update()
        try:
            return self._fill_dense(self.updater.readmit_sessions(session_ids, scopes))
        except SchemaMismatch:
            return self.rebuild()

    def rebuild(self, *, progress: Progress | None = None) -> UpdateReport:
        self.dense_vectors()
        return self._fill_dense(self.updater.rebuild(progress=progress))

    def _fill_dense(self, report: UpdateReport) -> UpdateReport:
        """Vectors for the rows that have none, when `[search] dense` is on (slow: ~1 s per 30 rows)."""
        vectors = self.dense_vectors()
        if vectors is not None:
            try:
                report.dense_rows += vectors.fill(self.store).rows
            except DenseUnavailable as exc:  # the model loaded, numpy gone since: the lexical update stands
                report.problems.append(DENSE_NOTE.format(exc))
        elif self._dense_problem:
            report.problems.append(self._dense_problem)
        return report

    def stats(self) -> IndexStats:
        try:
            return self.index.stats()
        except SchemaMismatch:
            self.rebuild()
            return self.index.stats()

    def close(self) -> None:
        self.index.close()
