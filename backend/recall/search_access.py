"""The search index read without writing.

SearchIndex opens memory/index.sqlite for writing (it creates the folder and the schema), and
SearchService builds a missing index before searching; Snippets falls back to the session store
(whose reads take lock files). The recall tool opens the index `mode=ro` instead: the index
keeps a rollback journal, so such a connection creates no file. A missing index has no hits
(`opmem index rebuild` or the importer's hook builds it); a stale one answers as it stands.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..memory.dense_rerank import reader as dense_reader
from ..memory.index import INDEX_FILE, MMAP_BYTES, SCHEMA_VERSION, SearchIndex, SearchIndexError
from ..memory.search import Searcher
from ..memory.snippets import Snippets
from ..model import ROLE_LETTER, Node, OpmemError
from ..store.files import read_json_object
from .errors import RecallError
from .session_access import SessionReader

if TYPE_CHECKING:
    from ..home import Home


class _ReadOnlyIndex(SearchIndex):
    def _connect(self) -> sqlite3.Connection:
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")  # as SearchIndex: pages read through a map
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise SearchIndexError(
                f"{self.path}: cannot read the search index ({exc}); run `opmem index rebuild`"
            ) from None
        if row is None or row[0] != SCHEMA_VERSION:
            conn.close()
            raise SearchIndexError(
                f"{self.path}: index schema {row[0] if row else None!r}, this opmem reads {SCHEMA_VERSION!r}:"
                " run `opmem index rebuild`"
            )
        return conn


class _ReadOnlySnippets(Snippets):
    """Node text from the node file, else from a read-only open of the session."""

    def __init__(self, sessions: SessionReader, home: Home) -> None:
        super().__init__(home.sessions)
        self._sessions = sessions
        self._home = home

    def node(self, session_id: str, node_id: str, seq: int, role: str) -> Node | None:
        try:
            folder = self.store.path_for(session_id) / "history"
            name = f"{seq:06d}-{ROLE_LETTER.get(role, 's')}-{node_id}.json"
            return Node.from_json(read_json_object(folder / name), folder / name)
        except OpmemError:
            pass
        try:
            repo = self._sessions.open(self._home, session_id)
        except RecallError:
            return None  # the session went away after the index saw it
        return repo.node(node_id) if repo.has_node(node_id) else None


class SearchReader:
    """Searches memory/index.sqlite read-only; `searcher()` is None while there is no index."""

    def __init__(self, memory_dir: Path, sessions: SessionReader, home: Home) -> None:
        self.path = Path(memory_dir) / INDEX_FILE
        self._index = _ReadOnlyIndex(self.path)
        self._searcher = Searcher(self._index, _ReadOnlySnippets(sessions, home))
        if home.config.search.dense:  # the optional dense rerank (backend/memory/dense_rerank.py)
            self._searcher.dense = dense_reader(self._index, home.config.search.dense)

    def searcher(self) -> Searcher | None:
        """None when there is no index yet; SearchIndexError naming the file when something else
        stands in its place (a folder, say) or it cannot be read."""
        try:
            mode = self.path.stat().st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SearchIndexError(f"{self.path}: cannot read the search index ({exc.strerror or exc})") from None
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise SearchIndexError(
                f"{self.path}: is {kind}, not the search index; move it away, then run `opmem index rebuild`"
            )
        if not os.access(self.path, os.R_OK):
            raise SearchIndexError(f"{self.path}: cannot read the search index (permission denied)")
        return self._searcher
