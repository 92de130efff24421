"""The optional dense signal: sentence vectors of the turn rows, stored in the index, reranking the top.

With `[search] dense = "minilm"` (dense_minilm.py), every message row gets two unit vectors,
stored in `dense_vecs` of index.sqlite as float16: the message alone, and the message after the
two earlier messages (the `ctx` the lexical side also indexes). A search fuses as before, then
the first RERANK_DEPTH candidates get one more RRF list: their order by the cosine of the query
with the closer of the two vectors (weight W_DENSE). How this was chosen, and what it measured,
is in docs/search.md ("Dense rerank").

Vectors are filled after each lexical update (`fill`), for the rows added since the last fill: a batch is
embedded outside any transaction, then written against (session, node) so a rebuild in between
cannot attach a vector to another row (node text never changes). A row without a vector (not
filled yet, or a record) just gets no dense vote.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..store.sessions import SessionStore
from .dense_minilm import DIM, INSTALL, NAME, WEIGHTS_SHA256, DenseUnavailable, MiniLM
from .index import KIND_MESSAGE, SCHEMA_VERSION, SearchIndex
from .index_update import session_rows

RERANK_DEPTH = 50  # candidates the dense list reorders (evidence sits in the top 50 at ~0.89)
W_DENSE = 0.5  # the dense list's RRF weight: a derived list, like entities and dates (docs/search.md)
FILL_BATCH = 128  # rows embedded per write transaction
QUERY_CACHE = 128
MODEL_KEY = "dense_model"
_WRITE_BY_NODE = (  # (vecs, session_id, node, kind): the row that node has in this file, if live
    "INSERT OR IGNORE INTO dense_vecs(id, vecs) SELECT d.id, ? FROM docs d "
    "JOIN sessions s ON s.id = d.sess WHERE s.session_id = ? AND s.dead = 0 AND d.node = ? AND d.kind = ?"
)
FILLED_KEY = "dense_filled"  # the last docs row a completed fill looked at


class Encoder(Protocol):
    name: str

    def encode(self, texts: list[str]): ...  # (n, DIM) float32 unit vectors


class _Keyed(Protocol):
    key: tuple[str, int]


C = TypeVar("C", bound=_Keyed)


@dataclass(frozen=True, slots=True)
class FillReport:
    rows: int  # vectors written
    sessions: int


_loaded: dict[str, Encoder] = {}
_loading = threading.Lock()


def load(name: str) -> Encoder:
    """The encoder a config names, loaded once per process (DenseUnavailable when it cannot run)."""
    with _loading:
        if name not in _loaded:
            if name != NAME:
                raise DenseUnavailable(f'[search] dense = {name!r}: unknown backend (known: "{NAME}", or "" for none)')
            _loaded[name] = MiniLM()
        return _loaded[name]


def _model_id(encoder: Encoder) -> str:
    return f"{encoder.name}:{WEIGHTS_SHA256[:16]}" if encoder.name == NAME else encoder.name


class DenseVectors:
    """Vectors of one index: fill() after updates, scores() for a query's candidates."""

    depth = RERANK_DEPTH  # the fused candidates rerank() needs

    def __init__(self, index: SearchIndex, encoder: Encoder) -> None:
        self.index = index
        self.encoder = encoder
        self.model = _model_id(encoder)
        self._queries: OrderedDict[str, object] = OrderedDict()  # recent queries' vectors
        self._cache_lock = threading.Lock()

    # ------------------------------------------------------------------ filling

    def fill(self, store: SessionStore, progress: Callable[[int], None] | None = None) -> FillReport:
        """Embed the live message rows added since the last fill that have no vector yet; returns
        how many were written. Message rows are never deleted and their ids only grow (a rebuild
        starts a new file), so FILLED_KEY, the last row a completed fill looked at, bounds the scan:
        an update costs its new rows, not the index, and a row that got no vector (its session
        could not be read then) is not re-read at every update."""
        self._forget_other_model()
        db = self.index.db
        done = db.execute("SELECT value FROM meta WHERE key = ?", (FILLED_KEY,)).fetchone()
        after = int(done[0]) if done is not None else 0
        upto = db.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
        missing: dict[str, set[str]] = {}
        for session_id, node in db.execute(
            "SELECT s.session_id, d.node FROM docs d JOIN sessions s ON s.id = d.sess "
            "LEFT JOIN dense_vecs v ON v.id = d.id "
            "WHERE d.id > ? AND d.id <= ? AND d.kind = ? AND s.dead = 0 AND v.id IS NULL",
            (after, upto, KIND_MESSAGE),
        ):
            missing.setdefault(session_id, set()).add(node)
        pending: list[tuple[str, str, str, str]] = []
        written = 0
        for session_id, nodes in missing.items():
            pending.extend(self._texts(store, session_id, nodes))
            while len(pending) >= FILL_BATCH:
                written += self._write(pending[:FILL_BATCH])
                del pending[:FILL_BATCH]
                if progress is not None:
                    progress(written)
        written += self._write(pending)
        self._mark_filled(db, upto)
        return FillReport(written, len(missing))

    def _mark_filled(self, read: sqlite3.Connection, upto: int) -> None:
        """FILLED_KEY moves forward only; not when the file the fill read was replaced since (a
        rebuild: its rows are others) or holds another model's vectors now (ours were deleted)."""
        with self.index.write() as db:
            if db is not read:
                return
            model = db.execute("SELECT value FROM meta WHERE key = ?", (MODEL_KEY,)).fetchone()
            if model is None or model[0] != self.model:
                return
            db.execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                "CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)",
                (FILLED_KEY, str(upto)),
            )

    def _texts(self, store: SessionStore, session_id: str, nodes: set[str]) -> list[tuple[str, str, str, str]]:
        try:
            found = store.get_nodes(session_id)
        except Exception:  # the session went away since the index saw it: its rows die at the next update
            return []
        return [
            (session_id, row.node, row.body, f"{row.ctx} {row.body}".strip())
            for row in session_rows(found, -1, {})
            if row.kind == KIND_MESSAGE and row.node in nodes
        ]

    def _write(self, batch: Sequence[tuple[str, str, str, str]]) -> int:
        if not batch:
            return 0
        np = _numpy()
        texts = [b[2] for b in batch] + [b[3] for b in batch]
        vecs = self.encoder.encode(texts).astype(np.float16)
        n = len(batch)
        blobs = [np.concatenate([vecs[i], vecs[n + i]]).tobytes() for i in range(n)]
        with self.index.write() as db:
            before = db.total_changes
            db.executemany(
                _WRITE_BY_NODE, [(blob, b[0], b[1], KIND_MESSAGE) for blob, b in zip(blobs, batch, strict=True)]
            )
            return db.total_changes - before

    def carry_into(self, fresh: SearchIndex) -> int:
        """Copy this index's vectors into its rebuilt copy, by (session, node), before the swap:
        a rebuild then embeds only the rows that had none (node text never changes). Only from
        an index of this schema and this model (another version may build its rows otherwise);
        the old file is read through a read-only connection and never written."""
        if not self.index.path.exists():
            return 0
        try:
            old = sqlite3.connect(f"{self.index.path.as_uri()}?mode=ro", uri=True)
        except sqlite3.Error:
            return 0
        try:
            meta = dict(old.execute("SELECT key, value FROM meta WHERE key IN ('schema', ?)", (MODEL_KEY,)))
            if meta.get("schema") != SCHEMA_VERSION or meta.get(MODEL_KEY) != self.model:
                return 0
            rows = old.execute(
                "SELECT v.vecs, s.session_id, d.node FROM dense_vecs v JOIN docs d ON d.id = v.id "
                "JOIN sessions s ON s.id = d.sess WHERE s.dead = 0 AND d.kind = ?",
                (KIND_MESSAGE,),
            )
            with fresh.write() as db:
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (MODEL_KEY, self.model))
                before = db.total_changes
                while batch := rows.fetchmany(FILL_BATCH * 8):
                    db.executemany(_WRITE_BY_NODE, [(*row, KIND_MESSAGE) for row in batch])
                return db.total_changes - before
        except sqlite3.Error:  # an old file that cannot be read as expected: the fill embeds instead
            return 0
        finally:
            old.close()

    def _forget_other_model(self) -> None:
        with self.index.write() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (MODEL_KEY,)).fetchone()
            if row is not None and row[0] == self.model:
                return
            db.execute("DELETE FROM dense_vecs")
            db.execute("DELETE FROM meta WHERE key = ?", (FILLED_KEY,))
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (MODEL_KEY, self.model))

    # ------------------------------------------------------------------ searching

    def rerank(
        self, db: sqlite3.Connection, query: str, fused: list[tuple[C, float]], rrf_k: int
    ) -> list[tuple[C, float]]:
        """`fused` with the dense list over its first RERANK_DEPTH candidates (the module's `rerank()`)."""
        rows = [cand.key[1] for cand, _ in fused[:RERANK_DEPTH] if cand.key[0] == "d"]
        try:
            cosines = self.scores(db, self._without_names(query), rows)
        except DenseUnavailable:  # a reader's deferred model could not load: the update path reports why
            return fused
        return rerank(fused, cosines, rrf_k)

    def _without_names(self, query: str) -> str:
        """The query less the participants it names: the lexical side already lifts the named
        participant's turns, and in the sentence vector a name outweighs the topic (turns that
        address the person by name came first; docs/search.md measures both)."""
        names = sorted(self.index.participants(), key=len, reverse=True)
        if not names:
            return query
        pattern = r"\b(?:" + "|".join(re.escape(n) for n in names) + r")(?:'s)?\b"
        left = " ".join(re.sub(pattern, " ", query, flags=re.IGNORECASE).split())
        return left or query

    def scores(self, db: sqlite3.Connection, query: str, rows: Sequence[int]) -> dict[int, float]:
        """Cosine of the query with each row that has a vector (the closer of its two)."""
        if not rows:
            return {}
        try:
            model = db.execute("SELECT value FROM meta WHERE key = ?", (MODEL_KEY,)).fetchone()
            if model is None or model[0] != self.model:
                return {}
            marks = ",".join("?" * len(rows))
            found = db.execute(f"SELECT id, vecs FROM dense_vecs WHERE id IN ({marks})", list(rows)).fetchall()
        except sqlite3.OperationalError:  # an index from before the table (read-only readers cannot add it)
            return {}
        if not found:
            return {}
        np = _numpy()
        q = self._query_vector(query)
        mat = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float16).reshape(len(found), 2, DIM)
        cos = (mat.astype(np.float32) @ q).max(axis=1)
        return {rid: float(c) for (rid, _), c in zip(found, cos, strict=True)}

    def _query_vector(self, query: str):
        with self._cache_lock:
            vec = self._queries.get(query)
            if vec is not None:
                self._queries.move_to_end(query)
                return vec
        vec = self.encoder.encode([query])[0]
        with self._cache_lock:
            self._queries[query] = vec
            if len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vec


class _Deferred:
    """An encoder loaded at its first use: a read-only searcher whose index may hold no vectors."""

    def __init__(self, name: str) -> None:
        self.name = name

    def encode(self, texts: list[str]):
        return load(self.name).encode(texts)


def reader(index: SearchIndex, name: str) -> DenseVectors:
    """The dense signal for a searcher that only reads the index (recall's): the model is loaded
    at the first query that finds vectors of it, never for an index without them."""
    return DenseVectors(index, _Deferred(name))


def rerank(fused: list[tuple[C, float]], cosines: dict[int, float], rrf_k: int) -> list[tuple[C, float]]:
    """The first RERANK_DEPTH candidates with one more RRF list (their order by cosine) added."""
    top = fused[:RERANK_DEPTH]
    voted = sorted(
        (i for i, (cand, _) in enumerate(top) if cand.key[0] == "d" and cand.key[1] in cosines),
        key=lambda i: -cosines[top[i][0].key[1]],
    )
    bonus = {i: W_DENSE / (rrf_k + rank + 1) for rank, i in enumerate(voted)}
    scored = [(cand, score + bonus.get(i, 0.0)) for i, (cand, score) in enumerate(top)]
    scored.sort(key=lambda item: (-item[1], item[0].key))
    return scored + fused[RERANK_DEPTH:]


def _numpy():
    try:
        import numpy
    except ImportError:  # the extra is not installed (or was removed after vectors were stored)
        raise DenseUnavailable(f"[search] dense needs numpy: {INSTALL}") from None
    return numpy
