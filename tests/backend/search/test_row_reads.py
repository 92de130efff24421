"""The batched row reads of search() give exactly the hits of reading one row per statement.

The reference below reads rows the way search.py did before the reads were batched: one
statement per session for the turns behind records, the times of the whole pool read again,
one statement per hit. Both run on the same hand-made index (real SQLite, real FTS5), over
scopes, date windows, a deleted session, superseded and entity records, and both ranking
paths (rare words scored by bm25(), common words by newest_bm25).
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from backend.memory import ranking
from backend.memory import search as search_module
from backend.memory.index import (
    KIND_EDGE,
    KIND_ENTITY,
    KIND_EVENT,
    KIND_MESSAGE,
    KIND_NAMES,
    KIND_TOOL,
    RecordRow,
    SearchIndex,
)
from backend.memory.index_records import entity_words
from backend.memory.index_update import session_rows
from backend.memory.search import Searcher, SearchHit
from backend.memory.snippets import Snippets
from backend.model import Node

WORDS = [f"w{i:03d}" for i in range(300)]
T0 = 1_700_000_000.0
SCOPES = ("global", "project:a", "project:b")


class _Texts(Snippets):
    def __init__(self) -> None:
        super().__init__(store=None)  # type: ignore[arg-type]

    def turn(self, session_id, node_id, seq, role, kind, terms, width=0) -> str:
        return f"{session_id}/{node_id}/{seq}/{role}/{kind}/{' '.join(terms)}"

    def around(self, text, terms, width=0) -> str:
        return f"{text[:40]}|{' '.join(terms)}"


def _words(rng: random.Random, count: int) -> str:
    # Zipf-like: the first words are common, so both ranking paths are taken
    return " ".join(WORDS[min(len(WORDS) - 1, int(rng.paretovariate(0.8)) - 1)] for _ in range(count))


def _session(rng: random.Random, number: int, turns: int) -> list[Node]:
    nodes: list[Node] = []
    parent = None
    seq = 0
    start = T0 + number * 3 * 86400
    for turn in range(turns):
        when = start + turn * 60
        user = Node(f"u{number}-{turn}", seq, "user", _words(rng, rng.randint(3, 12)), parent, created_at=when)
        reply = Node(f"a{number}-{turn}", seq + 1, "assistant", _words(rng, rng.randint(5, 30)), user.id)
        reply = Node(reply.id, reply.seq, reply.role, reply.content, reply.parent_id, created_at=when + 5)
        nodes += [user, reply]
        seq += 2
        if turn % 3 == 0:
            nodes.append(
                Node(
                    f"t{number}-{turn}",
                    seq,
                    "tool",
                    "ok",
                    reply.id,
                    called_by=reply.id,
                    name="Bash",
                    input={"command": f"pytest -k {rng.choice(WORDS)}"},
                    created_at=when + 6,
                )
            )
            seq += 1
        parent = reply.id
    return nodes


def _build(path: Path) -> SearchIndex:
    rng = random.Random(42)
    index = SearchIndex(path)
    nodes_of: dict[str, list[Node]] = {}
    with index.write() as db:
        for number in range(30):
            session_id = f"s{number:02d}"
            nodes = _session(rng, number, 25)
            nodes_of[session_id] = nodes
            turn_of: dict[str, tuple[int, str | None]] = {}
            turn = 0
            for node in nodes:
                if node.role == "user":
                    turn += 1
                turn_of[node.id] = (turn, f"{number:04x}{turn:036x}")
            rows = session_rows(nodes, -1, turn_of)
            index.add_turns(db, session_id, SCOPES[number % 3], rows, nodes[-1].seq, "stamp")
        for n in range(400):
            session_id = f"s{rng.randrange(30):02d}"
            messages = [x.id for x in nodes_of[session_id] if x.called_by is None]
            pointed = tuple(rng.sample(messages, rng.randint(0, 3)))
            if n % 17 == 0:
                pointed = ("no-such-node",)
            kind = (KIND_EVENT, KIND_EDGE, KIND_ENTITY)[n % 3]
            name = " ".join(rng.sample(WORDS[:60], 2))
            index.add_record(
                db,
                RecordRow(
                    f"rec-{n:04d}",
                    kind,
                    "" if kind == KIND_ENTITY else session_id,
                    () if kind == KIND_ENTITY else pointed,
                    None if kind == KIND_ENTITY else rng.randint(1, 25),
                    None,
                    T0 + rng.randrange(90) * 86400,
                    SCOPES[n % 3],
                    name if kind == KIND_ENTITY else _words(rng, rng.randint(4, 15)),
                    (),
                    "timeline/t.jsonl",
                    names=(name,) if kind == KIND_ENTITY else (),
                ),
            )
        for n in range(0, 400, 23):
            index.supersede(db, f"rec-{n:04d}", f"rec-{n + 1:04d}")
        index.drop_session(db, "s07")
    return index


class RowByRow(Searcher):
    """search() with every row read the way it was before batching (the reference)."""

    def _times(self, db, pool, known):  # type: ignore[override]
        out = {}
        for kind, rid in pool:
            table = "docs" if kind == "d" else "records"
            row = db.execute(f"SELECT time FROM {table} WHERE id = ?", (rid,)).fetchone()
            if row is not None:
                out[(kind, rid)] = row[0]
        known.clear()
        known.update(out)

    def _hits(self, db, fused, parsed, k):  # type: ignore[override]
        hits = []
        for cand, score in fused:
            kind, rid = cand.key
            if kind == "d":
                hit = self._one_turn(db, rid, score, cand, parsed)
            else:
                hit = self._one_record(db, rid, score, cand, parsed)
            if hit is not None and not any((h.kind, h.snippet) == (hit.kind, hit.snippet) for h in hits):
                hits.append(hit)
        return tuple(hits[:k])

    def _one_turn(self, db, rid, score, cand, parsed) -> SearchHit | None:
        row = db.execute(
            "SELECT d.kind, s.session_id, d.node, d.seq, d.role, d.turn, d.commit_id, d.time, s.scope, d.speaker "
            "FROM docs d JOIN sessions s ON s.id = d.sess WHERE d.id = ?",
            (rid,),
        ).fetchone()
        if row is None:
            return None
        kind, session_id, node, seq, role, turn, commit, when, scope, speaker = row
        return SearchHit(
            kind=KIND_NAMES.get(kind, "turn"),
            session_id=session_id,
            node_ids=(node,),
            turn=turn,
            commit=commit,
            time=when,
            snippet=self.snippets.turn(session_id, node, seq, role, kind, parsed.terms),
            score=score,
            scope=scope,
            speaker=speaker or "",
            via=tuple(dict.fromkeys(cand.via)),
            signals=tuple(cand.lists),
        )

    def _one_record(self, db, rid, score, cand, parsed) -> SearchHit | None:
        row = db.execute(
            "SELECT kind, record_id, session_id, node_ids, turn, commit_id, time, scope, body, entities FROM records "
            "WHERE id = ?",
            (rid,),
        ).fetchone()
        if row is None:
            return None
        kind, record_id, session_id, node_json, turn, commit, when, scope, body, entities = row
        if kind == KIND_EVENT:
            body = body.removesuffix(" ".join(entity_words(e) for e in json.loads(entities))).rstrip()
        return SearchHit(
            kind=KIND_NAMES.get(kind, "event"),
            session_id=session_id,
            node_ids=tuple(json.loads(node_json)),
            turn=turn,
            commit=commit,
            time=when,
            snippet=self.snippets.around(body, parsed.terms),
            score=score,
            scope=scope,
            record_id=record_id,
            signals=tuple(cand.lists),
        )


def _turn_rows_one_session_at_a_time(db: sqlite3.Connection, wanted: dict[str, set[str]]):
    out: dict[tuple[str, str], tuple[int, float]] = {}
    for session_id, nodes in wanted.items():
        for node in sorted(nodes):
            row = db.execute(
                "SELECT d.id, d.time FROM docs d JOIN sessions s ON s.id = d.sess WHERE s.session_id = ? "
                f"AND s.dead = 0 AND d.node = ? AND d.kind IN ({KIND_MESSAGE}, {KIND_TOOL}) ORDER BY d.kind, d.id",
                (session_id, node),
            ).fetchone()
            if row is not None and session_id:
                out[(session_id, node)] = (row[0], row[1])
    return out


def _queries(seed: int, count: int) -> Iterable[str]:
    rng = random.Random(seed)
    for _ in range(count):
        yield " ".join(rng.choice(WORDS[: rng.choice((8, 60, 300))]) for _ in range(rng.randint(1, 4)))


FILTERS: Sequence[dict[str, object]] = (
    {},
    {"scope": "project:a"},
    {"scope": "project:b", "k": 40},
    {"since": T0 + 20 * 86400, "until": T0 + 60 * 86400},
    {"k": 200},
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> SearchIndex:
    built = _build(tmp_path_factory.mktemp("rows") / "index.sqlite")
    yield built
    built.close()


@pytest.mark.parametrize("df_cap", [ranking.DF_CAP, 40])
def test_batched_reads_give_the_hits_of_row_by_row_reads(
    index: SearchIndex, df_cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ranking, "DF_CAP", df_cap)
    batched = Searcher(index, _Texts())
    reference = RowByRow(index, _Texts())
    compared = with_hits = 0
    for number, query in enumerate(_queries(df_cap, 120)):
        kwargs = dict(FILTERS[number % len(FILTERS)])
        if number % 4 == 1:  # a list of rows read on no other way (as the dense signal's)
            rows = random.Random(number).sample(range(1, 2400), 30)
            kwargs["extra_lists"] = lambda _parsed, rows=rows: {"dense": rows}
        monkeypatch.setattr(search_module, "_turn_rows", search_module._turn_rows)
        got = batched.search(query, **kwargs)
        monkeypatch.setattr(search_module, "_turn_rows", _turn_rows_one_session_at_a_time)
        want = reference.search(query, **kwargs)
        assert got == want, (query, kwargs)
        assert [h.signals for h in got] == [h.signals for h in want]
        compared += 1
        with_hits += bool(got)
    assert compared == 120 and with_hits > 60
    # both kinds of hits and records behind turns were exercised
    kinds = {h.kind for q in _queries(df_cap, 40) for h in batched.search(q, k=50)}
    assert {"turn", "tool"} <= kinds and kinds & {"event", "edge"}


def test_turn_rows_of_many_sessions_at_once(index: SearchIndex) -> None:
    db = index.db
    rows = db.execute(
        "SELECT s.session_id, d.node FROM docs d JOIN sessions s ON s.id = d.sess ORDER BY d.id"
    ).fetchall()
    (dead,) = db.execute("SELECT session_id FROM sessions WHERE dead = 1").fetchone()
    assert dead.startswith("s07")
    rng = random.Random(3)
    for _ in range(20):
        wanted: dict[str, set[str]] = {}
        for session_id, node in rng.sample(rows, 700):
            wanted.setdefault(session_id, set()).add(node)
        wanted.setdefault(dead, set()).add("u7-1")  # a deleted session: never returned
        wanted.setdefault("", set()).add("u1-1")  # a record of no session
        wanted.setdefault("s01", set()).update({"no-such-node", "t1-0"})  # unknown, a tool row
        assert search_module._turn_rows(db, wanted) == _turn_rows_one_session_at_a_time(db, wanted)
