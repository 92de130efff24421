"""search(query, scope, k, since, until): ranked hits over the index, each with its provenance.

Signals, each a ranked list of turn rows, fused by weighted reciprocal rank (RRF, k=60):
- turns: BM25 over the messages (`body` 1.0, `ctx` 0.5: the two messages before it), a reply
  raised by what its follow-up matched (W_NEXT), and the turns of a participant the query
  names (SPEAKER_BOOST);
- records: BM25 over distilled events, entities and edges; a record that points at turns is a
  second key for them (a record that points nowhere is a hit of its own);
- entities: the turns behind the records of an entity the query names (name or alias);
- dates: candidates whose time falls in a date the query names ("in June", "7 May 2023");
- recency: a light preference for newer turns.

Weights are set by principle, not fitted: the two BM25 lists count fully, the derived lists
half, recency a tenth; the constants in the turn list are explained where they are defined.
"""

from __future__ import annotations

import heapq
import json
import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .index import KIND_EDGE, KIND_ENTITY, KIND_EVENT, KIND_MESSAGE, KIND_NAMES, KIND_TOOL, ROLE_NAMES, SearchIndex
from .index_records import entity_words
from .query_text import ParsedQuery, parse_query
from .ranking import chunks, ranked
from .records import GLOBAL, entity_id, entity_key, visible_scopes
from .snippets import Snippets

if TYPE_CHECKING:
    from .dense_rerank import DenseVectors

_WORDS = re.compile(r"[^\W_]+")
RRF_K = 60
TURN_POOL = 200  # BM25 candidates per list
RECORD_POOL = 100
# Rows bm25() may score over records: 10x its pool. 1500 -> 1000 cut the CPU p95 of search at
# 500,000 turns by ~0.4 ms; the bench's 274 distinct queries: 17 top-10s changed (98.8% of the hits
# stayed, the plain FTS5 top-10 share of turns the same), every LoCoMo hit list the same (its
# tables are under ranking.DF_CAP: no bound applies there).
RECORD_ROW_BUDGET = 1000
W_CTX = 0.5  # the earlier messages count half of the message itself
W_RECORD = 0.5  # a distilled record is a second key for its turn, counted like the ctx field
W_NEXT = 0.25  # a reply's match lifts the message it answers, at a quarter
SPEAKER_BOOST = 2.0  # the turns of the participant the query names (chosen on conv-26 of LoCoMo)
LIST_WEIGHTS = {"turns": 1.0, "records": 1.0, "entities": 0.5, "dates": 0.5, "recency": 0.1}
ENTITY_SHARE = 0.05  # an entity in more than 5% of the records is no signal (like a word's IDF)
ENTITY_MIN_RECORDS = 20
DEFAULT_K = 10
MAX_K = 200
SPARE_HITS = 5  # candidates fused beyond k, to stand in for hits that repeat an earlier snippet


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: where it comes from (provenance), what it is, and a snippet."""

    kind: str  # turn, tool, event, entity, edge
    session_id: str
    node_ids: tuple[str, ...]
    turn: int | None
    commit: str | None
    time: float
    snippet: str
    score: float
    scope: str
    speaker: str = ""
    record_id: str | None = None  # the memory record, for event/entity/edge hits
    via: tuple[str, ...] = ()  # records that also pointed at this turn
    signals: tuple[str, ...] = field(default=(), compare=False)

    @property
    def pointer(self) -> str:
        return f"session:{self.session_id}" if self.session_id else ""


@dataclass(slots=True)
class _Behind:
    """What a list of records points at."""

    ordered: list[tuple[str, int]] = field(default_factory=list)  # turn rows ("d") and lone records ("r")
    scores: dict[int, float] = field(default_factory=dict)  # turn row -> best score of a record behind it
    via: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # turn row -> record ids


@dataclass(slots=True)
class _Candidate:
    key: tuple[str, int]  # ("d", docs row) or ("r", records row)
    lists: dict[str, int] = field(default_factory=dict)  # list name -> rank (0-based)
    via: list[str] = field(default_factory=list)


class Searcher:
    """Runs queries on one SearchIndex; `snippets` reads the text of the top hits."""

    def __init__(self, index: SearchIndex, snippets: Snippets) -> None:
        self.index = index
        self.snippets = snippets
        self.dense: DenseVectors | None = None  # the optional dense signal, set by SearchService

    def search(
        self,
        query: object,
        scope: str | None = None,
        k: int = DEFAULT_K,
        since: float | None = None,
        until: float | None = None,
        *,
        extra_lists: Callable[[ParsedQuery], dict[str, list[int]]] | None = None,
    ) -> tuple[SearchHit, ...]:
        parsed = parse_query(query)
        k = max(0, min(int(k), MAX_K))
        if parsed.empty or k == 0:
            return ()
        db = self.index.db
        own = _own(scope)
        flt = _Filter(
            visible_scopes(scope), since, until, own, _sessions_in(db, own) if own is not None else frozenset()
        )
        lists: dict[str, list[tuple[str, int]]] = {}
        times: dict[tuple[str, int], float] = {}  # row -> time, as the rows are read
        behind = self._records(db, parsed, flt, times)
        turn_rows = self._turns(db, parsed, flt, behind.scores, times)
        lists["turns"] = [("d", r) for r in turn_rows]
        lists["records"] = [key for key in behind.ordered if key[0] == "r"]
        lists["entities"] = self._entities(db, parsed, flt, times)
        if extra_lists is not None:
            for name, rows in extra_lists(parsed).items():
                lists[name] = [("d", r) for r in rows]
        pool = _pool(lists)
        self._times(db, pool, times)
        if parsed.dates:
            lists["dates"] = [key for key in pool if any(d.contains(times.get(key, 0.0)) for d in parsed.dates)]
        lists["recency"] = sorted(pool, key=lambda key: -times.get(key, 0.0))[:TURN_POOL]
        depth = k + SPARE_HITS
        fused = _fuse(lists, behind.via, depth if self.dense is None else max(depth, self.dense.depth))
        if self.dense is not None:
            fused = self.dense.rerank(db, parsed.text, fused, RRF_K)
        return self._hits(db, fused[:depth], parsed, k)

    # ------------------------------------------------------------------ signals

    def _turns(
        self,
        db: sqlite3.Connection,
        parsed: ParsedQuery,
        flt: _Filter,
        records: dict[int, float],
        times: dict[tuple[str, int], float],
    ) -> list[int]:
        """Turn rows by BM25 (a record that points at a turn adds W_RECORD of its own BM25), then
        a reply lifts the message it answers and the named participant's turns go up."""

        def keep(ids: Sequence[int]) -> dict[int, tuple[int | None, str]]:
            out: dict[int, tuple[int | None, str]] = {}
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                for rid, prev, speaker, when, scope, dead in db.execute(
                    "SELECT d.id, d.prev, d.speaker, d.time, s.scope, s.dead FROM docs d "
                    f"JOIN sessions s ON s.id = d.sess WHERE d.id IN ({marks})",
                    chunk,
                ):
                    times[("d", rid)] = when
                    if not dead and flt.accepts(scope, when) and flt.own_session(scope):
                        out[rid] = (prev, speaker or "")
            return out

        named = _named_speaker(parsed, self.index.participants())
        terms = parsed.terms
        if named is not None:
            # The name matches every turn that addresses them ("Thanks, Caroline!"); who speaks
            # is the participant signal below, so BM25 looks at the other words.
            rest = tuple(t for t in terms if t not in set(entity_key(named).split()))
            terms = rest or terms
        size = db.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
        rows = ranked(db, "turns_fts", f"1.0, {W_CTX}", terms, TURN_POOL, keep, size, self.index.term_counts())
        found = {rid for rid, _score, _info in rows}
        extra = keep([rid for rid in records if rid not in found])
        rows += [(rid, 0.0, info) for rid, info in extra.items()]
        scores = {rid: score + W_RECORD * records.get(rid, 0.0) for rid, score, _info in rows}
        lifted = dict(scores)
        for rid, _score, (prev, _speaker) in rows:
            score = scores[rid]
            if prev is not None and prev in scores:
                lifted[prev] += W_NEXT * score
        if named is not None:
            for rid, _score, (_prev, speaker) in rows:
                if speaker.casefold() == named:
                    lifted[rid] *= SPEAKER_BOOST
        return sorted(lifted, key=lambda r: -lifted[r])

    def _records(
        self, db: sqlite3.Connection, parsed: ParsedQuery, flt: _Filter, times: dict[tuple[str, int], float]
    ) -> _Behind:
        """The records that match: the turns behind them, and those behind no turn (hits of their own)."""

        terms = set(parsed.terms)

        def keep(ids: Sequence[int]) -> dict[int, tuple[str, str, str, bool]]:
            out: dict[int, tuple[str, str, str, bool]] = {}
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                for rid, kind, record_id, session_id, node_json, scope, when, body, named in db.execute(
                    "SELECT id, kind, record_id, session_id, node_ids, scope, time, body, entities FROM records "
                    f"WHERE id IN ({marks}) AND record_id NOT IN (SELECT record_id FROM superseded)",
                    chunk,
                ):
                    times[("r", rid)] = when
                    if not flt.accepts(scope, when) or not flt.own_record(scope, kind, named, session_id):
                        continue
                    if kind == KIND_ENTITY:
                        # Where an entity was first seen says nothing of what is asked about it: an
                        # entity is a hit of its own, and only when the query is its name.
                        if terms <= {w.lower() for w in _WORDS.findall(body)}:
                            out[rid] = (record_id, "", "[]", True)
                        continue
                    # "session X edited / ran / uses / part of Y": what the session's own rows
                    # show; a second key for them, never a hit of its own
                    alone = not (kind == KIND_EDGE and named.startswith(_SESSION_SUBJECT))
                    out[rid] = (record_id, session_id, node_json, alone)
            return out

        size = db.execute("SELECT max(id) FROM records").fetchone()[0] or 0
        rows = ranked(
            db, "records_fts", "", parsed.terms, RECORD_POOL, keep, size, self.index.term_counts(), RECORD_ROW_BUDGET
        )
        return self._behind(db, [(rid, score, *info) for rid, score, info in rows], times)

    def _entities(
        self, db: sqlite3.Connection, parsed: ParsedQuery, flt: _Filter, times: dict[tuple[str, int], float]
    ) -> list[tuple[str, int]]:
        keys = list(_ngrams(parsed.words, 3))
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        ids = {r[0] for r in db.execute(f"SELECT entity_id FROM names WHERE key IN ({marks})", keys)}
        if not ids:
            return []
        ids |= _alias_group(db, ids)
        marks = ",".join("?" * len(ids))
        total = db.execute("SELECT count(*) FROM records WHERE kind != ?", (KIND_ENTITY,)).fetchone()[0]
        mentions = db.execute(
            f"SELECT count(*) FROM record_entities e JOIN records r ON r.id = e.rec WHERE e.entity_id IN ({marks}) "
            f"AND r.kind != {KIND_ENTITY}",
            tuple(ids),
        ).fetchone()[0]
        if mentions > max(ENTITY_MIN_RECORDS, ENTITY_SHARE * total):
            return []  # named by most of the memory: says nothing about which record is meant
        where, args = flt.sql("r.scope", "r.time", "r.kind", "r.entities")
        rows = db.execute(
            "SELECT r.id, 0.0, r.record_id, r.session_id, r.node_ids, 1 FROM record_entities e "
            f"JOIN records r ON r.id = e.rec WHERE e.entity_id IN ({marks}) AND r.kind != {KIND_ENTITY} "
            f"AND r.record_id NOT IN (SELECT record_id FROM superseded) {where} "
            f"ORDER BY r.time DESC LIMIT {RECORD_POOL}",
            (*ids, *args),
        ).fetchall()
        return [key for key in self._behind(db, rows, times).ordered if key[0] == "d"]

    def _behind(
        self,
        db: sqlite3.Connection,
        rows: Sequence[tuple[int, float, str, str, str, bool]],
        times: dict[tuple[str, int], float],
    ) -> _Behind:
        """The turn rows behind each record, in order; a record behind none is a hit of its own
        when its last field (alone) says it may be."""
        wanted: dict[str, set[str]] = defaultdict(set)
        parsed_rows = []
        for rid, score, record_id, session_id, node_json, alone in rows:
            nodes = json.loads(node_json) if session_id else []
            parsed_rows.append((rid, score, record_id, session_id, nodes, alone))
            wanted[session_id].update(nodes)
        found = _turn_rows(db, wanted)
        for row, when in found.values():
            times[("d", row)] = when
        out = _Behind()
        seen: set[tuple[str, int]] = set()
        for rid, score, record_id, session_id, nodes, alone in parsed_rows:
            keys = [("d", found[(session_id, n)][0]) for n in nodes if (session_id, n) in found]
            keys = keys or ([("r", rid)] if alone else [])
            for key in keys:
                if key[0] == "d":
                    out.via.setdefault(key, []).append(record_id)
                    out.scores[key[1]] = max(out.scores.get(key[1], 0.0), score)
                if key not in seen:
                    seen.add(key)
                    out.ordered.append(key)
        return out

    def _times(
        self, db: sqlite3.Connection, pool: Iterable[tuple[str, int]], known: dict[tuple[str, int], float]
    ) -> None:
        """Adds to `known` the times of the pool's rows not read on the way (dense lists)."""
        missing = [key for key in pool if key not in known]
        for table, tag in (("docs", "d"), ("records", "r")):
            ids = [rid for kind, rid in missing if kind == tag]
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                for rid, when in db.execute(f"SELECT id, time FROM {table} WHERE id IN ({marks})", chunk):
                    known[(tag, rid)] = when

    # ------------------------------------------------------------------ hits

    def _hits(self, db: sqlite3.Connection, fused: Sequence[tuple[_Candidate, float]], parsed: ParsedQuery, k: int):
        """The first k hits of the fused candidates, in their order, a hit whose kind and snippet an
        earlier one showed left out (the same tool call run again, a message pasted twice: a
        second copy tells the reader nothing); their rows read in one statement per table."""
        turns = _rows_by_id(
            db,
            "SELECT d.id, d.kind, s.session_id, d.node, d.seq, d.role, d.turn, d.commit_id, d.time, s.scope, d.speaker, "
            "d.prev FROM docs d JOIN sessions s ON s.id = d.sess WHERE d.id IN ({marks})",
            [cand.key[1] for cand, _score in fused if cand.key[0] == "d"],
        )
        records = _rows_by_id(
            db,
            "SELECT id, kind, record_id, session_id, node_ids, turn, commit_id, time, scope, body, entities "
            "FROM records WHERE id IN ({marks})",
            [cand.key[1] for cand, _score in fused if cand.key[0] == "r"],
        )
        hits: list[SearchHit] = []
        shown: set[tuple[str, str]] = set()
        above: set[int] = set()  # turn rows already hits
        for cand, score in fused:
            kind, rid = cand.key
            row = (turns if kind == "d" else records).get(rid)
            if row is None:
                continue
            hit = (
                self._turn_hit(db, row, score, cand, parsed, above)
                if kind == "d"
                else self._record_hit(row, score, cand, parsed)
            )
            if hit is None or (hit.snippet and (hit.kind, hit.snippet) in shown):
                continue
            shown.add((hit.kind, hit.snippet))
            if kind == "d":
                above.add(rid)
            hits.append(hit)
            if len(hits) == k:
                break
        return tuple(hits)

    def _turn_hit(
        self,
        db: sqlite3.Connection,
        row: tuple,
        score: float,
        cand: _Candidate,
        parsed: ParsedQuery,
        above: set[int],
    ) -> SearchHit | None:
        """The hit of a turn row; None for a bare reply to a message already a hit above (it
        would add a word to that message's snippet)."""
        kind, session_id, node, seq, role, turn, commit, when, scope, speaker, prev = row
        snippet = self.snippets.turn(session_id, node, seq, role, kind, parsed.terms)
        if prev is not None and self.snippets.is_bare_reply(snippet, parsed.terms):
            if prev in above:
                return None
            earlier = db.execute("SELECT node, seq, role, kind FROM docs WHERE id = ?", (prev,)).fetchone()
            if earlier is not None:
                width = self.snippets.earlier_width(snippet)
                said = self.snippets.turn(session_id, *earlier, parsed.terms, width)
                snippet = self.snippets.answering(snippet, said, parsed.terms)
        return SearchHit(
            kind=KIND_NAMES.get(kind, "turn"),
            session_id=session_id,
            node_ids=(node,),
            turn=turn,
            commit=commit,
            time=when,
            snippet=snippet,
            score=score,
            scope=scope,
            speaker=speaker or "",
            via=tuple(dict.fromkeys(cand.via)),
            signals=tuple(cand.lists),
        )

    def _record_hit(self, row: tuple, score: float, cand: _Candidate, parsed: ParsedQuery) -> SearchHit:
        kind, record_id, session_id, node_json, turn, commit, when, scope, body, entities = row
        if kind == KIND_EVENT:  # the entity words after the summary are there to be matched, not read
            named = " ".join(entity_words(e) for e in json.loads(entities))
            body = body.removesuffix(named).rstrip() if named else body
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


def _sessions_in(db: sqlite3.Connection, scopes: frozenset[str]) -> frozenset[str]:
    if not scopes:
        return frozenset()
    marks = ",".join("?" * len(scopes))
    return frozenset(
        r[0] for r in db.execute(f"SELECT session_id FROM sessions WHERE scope IN ({marks})", sorted(scopes))
    )


def _own(scope: str | Iterable[str] | None) -> frozenset[str] | None:
    """A caller in a project: its own scopes (global left out), else None (global is seen whole)."""
    scopes = frozenset({scope} if isinstance(scope, str) else scope or ())
    return scopes - {GLOBAL} if any(s.startswith("project:") for s in scopes) else None


# the user's own preferences are global facts: a project's search shows them, no other global record
_USER = entity_id("person", "user")
_USER_JSON = f'%"{_USER}"%'
_SESSION_SUBJECT = '["session.'  # an edge's entities column (JSON) whose subject is a session


@dataclass(frozen=True, slots=True)
class _Filter:
    scopes: frozenset[str] | None
    since: float | None
    until: float | None
    own: frozenset[str] | None = None  # a project caller's scopes: its sessions only, global facts only
    own_sessions: frozenset[str] = frozenset()  # the sessions indexed under `own`

    def accepts(self, scope: str, when: float) -> bool:
        return (
            (self.scopes is None or scope in self.scopes)
            and (self.since is None or when >= self.since)
            and (self.until is None or when < self.until)
        )

    def own_session(self, scope: str) -> bool:
        """A session's turns: in a project, only the project's sessions (none of no project)."""
        return self.own is None or scope in self.own

    def own_record(self, scope: str, kind: int, named: str, session_id: str) -> bool:
        """A memory record: in a project, its own, a shared entity one of its sessions named, or
        the user's preference."""
        if self.own is None or scope in self.own:
            return True
        if kind == KIND_ENTITY:
            return not session_id or session_id in self.own_sessions
        return kind == KIND_EDGE and f'"{_USER}"' in named

    def sql(self, scope_col: str, time_col: str, kind_col: str = "", named_col: str = "") -> tuple[str, list[object]]:
        parts: list[str] = []
        args: list[object] = []
        if self.own is not None and kind_col and named_col:
            marks = ",".join("?" * len(self.own))
            parts.append(
                f"({scope_col} IN ({marks}) OR {kind_col} = {KIND_ENTITY} "
                f"OR ({kind_col} = {KIND_EDGE} AND {named_col} LIKE ?))"
            )
            args.extend([*sorted(self.own), _USER_JSON])
        if self.scopes is not None:
            parts.append(f"{scope_col} IN ({','.join('?' * len(self.scopes))})")
            args.extend(sorted(self.scopes))
        if self.since is not None:
            parts.append(f"{time_col} >= ?")
            args.append(float(self.since))
        if self.until is not None:
            parts.append(f"{time_col} < ?")
            args.append(float(self.until))
        return ("AND " + " AND ".join(parts)) if parts else "", args


def _named_speaker(parsed: ParsedQuery, speakers: set[str]) -> str | None:
    """The one participant (not a role) whose name the query holds, casefolded; else None."""
    words = set(parsed.words)
    named = {s.casefold() for s in speakers if s and s not in ROLE_NAMES and set(entity_key(s).split()) <= words}
    return named.pop() if len(named) == 1 else None


def _ngrams(words: Sequence[str], longest: int) -> Iterable[str]:
    seen: set[str] = set()
    for size in range(1, longest + 1):
        for start in range(0, len(words) - size + 1):
            gram = " ".join(words[start : start + size])
            if gram not in seen and not (size == 1 and len(gram) < 3):
                seen.add(gram)
                yield gram


def _alias_group(db: sqlite3.Connection, ids: set[str]) -> set[str]:
    """Entities merged with these (either way), through active alias records."""
    group = set(ids)
    frontier = set(ids)
    while frontier:
        marks = ",".join("?" * len(frontier))
        args = list(frontier)
        found = {
            r[0]
            for r in db.execute(
                f"SELECT into_id FROM aliases WHERE active = 1 AND merged_id IN ({marks}) "
                f"UNION SELECT merged_id FROM aliases WHERE active = 1 AND into_id IN ({marks})",
                args + args,
            )
        }
        frontier = found - group
        group |= found
    return group


def _turn_rows(db: sqlite3.Connection, wanted: dict[str, set[str]]) -> dict[tuple[str, str], tuple[int, float]]:
    """(session id, node id) -> (row, time) of that node, for live sessions: its message, else its
    tool call (a record drawn from a tool call, "ran pytest", is a second key for that call, not a
    hit of its own); one statement per 500 pairs, whatever the number of sessions."""
    pairs = sorted((session_id, node) for session_id, nodes in wanted.items() if session_id for node in nodes)
    out: dict[tuple[str, str], tuple[int, float]] = {}
    for chunk in chunks(pairs):
        for rid, session_id, node, when in db.execute(
            "SELECT d.id, s.session_id, d.node, d.time FROM json_each(?) w "
            "CROSS JOIN sessions s ON s.session_id = w.value ->> 0 "
            "CROSS JOIN docs d ON d.sess = s.id AND d.node = w.value ->> 1 "
            f"WHERE s.dead = 0 AND d.kind IN ({KIND_MESSAGE}, {KIND_TOOL}) ORDER BY d.kind DESC, d.id DESC",
            (json.dumps(chunk),),
        ):
            out[(session_id, node)] = (rid, when)  # the message (kind 0) read last wins; else the first call
    return out


def _rows_by_id(db: sqlite3.Connection, sql: str, ids: Sequence[int]) -> dict[int, tuple]:
    """id -> the rest of its row, for `sql` holding `IN ({marks})` over the id (first column)."""
    out: dict[int, tuple] = {}
    for chunk in chunks(ids):
        for row in db.execute(sql.format(marks=",".join("?" * len(chunk))), chunk):
            out[row[0]] = row[1:]
    return out


def _pool(lists: dict[str, list[tuple[str, int]]]) -> list[tuple[str, int]]:
    return list(dict.fromkeys(key for ranked in lists.values() for key in ranked))


def _fuse(lists: dict[str, list[tuple[str, int]]], via: dict[tuple[str, int], list[str]], depth: int):
    """The `depth` best candidates by weighted RRF, best first (ties by key). Only those become
    _Candidates: the pool holds hundreds of keys, a hit list ten (~0.25 ms a query)."""
    scores: dict[tuple[str, int], float] = {}
    get = scores.get
    for name, ranked_keys in lists.items():
        weight = LIST_WEIGHTS.get(name, 0.5)
        for rank, key in enumerate(ranked_keys):
            scores[key] = get(key, 0.0) + weight / (RRF_K + rank + 1)
    order = heapq.nsmallest(depth, scores, key=lambda key: (-scores[key], key))  # == sorted(...)[:depth]
    cands = {key: _Candidate(key) for key in order}
    for name, ranked_keys in lists.items():
        for rank, key in enumerate(ranked_keys):
            cand = cands.get(key)
            if cand is not None and name not in cand.lists:
                cand.lists[name] = rank
    for key, record_ids in via.items():
        cand = cands.get(key)
        if cand is not None:
            cand.via.extend(record_ids)
    return [(cands[key], scores[key]) for key in order]
