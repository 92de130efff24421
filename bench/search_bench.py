"""Search index speed and size, each beside a plain FTS5 baseline measured in the same run.

    python bench/search_bench.py [--quick | --mid | --turns N] [--home DIR]

A generated corpus of coding-session turns (a user message, an assistant reply, a tool call
with a path and a command every other turn; words drawn from a Zipf distribution like prose)
is indexed through the index's own write path (session_rows + add_turns, the work an update
does once the nodes are read). Figures:
- incremental update, turns/s (target >= 5,000) beside inserting the same texts into a plain
  FTS5 table (one column, stored content);
- search p95 over queries of 1-4 words (target <= 10 ms) beside a plain FTS5 bm25() top-10 on
  that table; snippets come from memory here, and the cost of reading the node files of ten
  hits is measured on real files and printed apart; and how many of the plain top-10 turns
  our top 10 also holds (our ranking fuses more signals and bounds the work of common words,
  so this is no target: it says what the bounds cost);
- index size / indexed text bytes (target <= 1.5) beside the plain table's size;
- with the dense extra installed (unless --no-dense): search p95 with the dense rerank (target
  <= 50 ms) beside the lexical search of the same queries. The query is embedded by the real
  model; the rows' stored vectors are random unit vectors (embedding a million message rows
  takes about a day on a 2-core machine, and the rerank's cost does not depend on the values),
  so this times the path, not the ranking (bench/locomo.py measures that).
The full path from the session store (node files and git) is timed on a small store too.
Update and search are also printed in CPU time of the measuring thread, both sides: on a shared,
loaded machine wall time is mostly waiting for a core (the load average is printed first).
Sizes: 500,000 turns (default), --mid 100,000, --quick 50,000, or --turns N; memory records
scale with the turns (N/5 events, 2N/5 edges: 100,000 and 200,000 at the default).
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import fmt, parser, report  # noqa: E402

from backend.home import Home  # noqa: E402
from backend.memory.index import KIND_EDGE, KIND_EVENT, TOKENIZER, RecordRow, SearchIndex  # noqa: E402
from backend.memory.index_update import session_rows  # noqa: E402
from backend.memory.search import Searcher  # noqa: E402
from backend.memory.snippets import Snippets  # noqa: E402
from backend.model import Node  # noqa: E402

TURNS_PER_SESSION = 100
MID_TURNS = 100_000
TOOLS = ("Read", "Edit", "Bash", "Grep", "Write")


class Corpus:
    def __init__(self, seed: int = 11, vocabulary: int = 30_000) -> None:
        self.rng = random.Random(seed)
        syllables = [a + b for a in "bcdfghklmnprstvz" for b in ("a", "e", "i", "o", "u", "ar", "en", "io")]
        words = set()
        while len(words) < vocabulary:
            words.add("".join(self.rng.choices(syllables, k=self.rng.randint(1, 4))))
        self.words = sorted(words)
        self.rng.shuffle(self.words)
        self.cum = list(_cumulative([1 / (r + 1) ** 1.05 for r in range(vocabulary)]))

    def text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))

    def session(self, index: int, start: float) -> list[Node]:
        """TURNS_PER_SESSION turns of user, assistant (and a tool call on even turns)."""
        rng = self.rng
        nodes: list[Node] = []
        parent = None
        seq = 0
        for turn in range(TURNS_PER_SESSION):
            when = start + turn * 60
            user = Node(uuid.uuid4().hex, seq, "user", self.text(rng.randint(8, 30)), parent, created_at=when)
            assistant = Node(
                uuid.uuid4().hex, seq + 1, "assistant", self.text(rng.randint(30, 120)), user.id, created_at=when + 5
            )
            nodes += [user, assistant]
            seq += 2
            if turn % 2 == 0:
                folder = "/".join(self.rng.choices(self.words[:2000], k=2))
                tool = Node(
                    uuid.uuid4().hex,
                    seq,
                    "tool",
                    "ok",
                    assistant.id,
                    called_by=assistant.id,
                    name=rng.choice(TOOLS),
                    input={
                        "file_path": f"src/{folder}/{self.words[rng.randint(0, 5000)]}.py",
                        "command": f"pytest -k {self.words[rng.randint(0, 5000)]}",
                    },
                    created_at=when + 6,
                )
                nodes.append(tool)
                seq += 1
            parent = assistant.id
        return nodes


def _cumulative(weights: Sequence[float]):
    total = 0.0
    for w in weights:
        total += w
        yield total


def indexed_text(rows) -> int:
    return sum(len(r.body.encode()) for r in rows)


def build(corpus: Corpus, index: SearchIndex, plain: sqlite3.Connection, sessions: int, texts: dict, cpu_time: dict):
    """Index `sessions` generated sessions; returns (our seconds, plain seconds, text bytes, turns).
    `cpu_time` gets the CPU seconds of each side ("ours", "base")."""
    ours = base = 0.0
    text_bytes = 0
    turns = 0
    for s in range(sessions):
        nodes = corpus.session(s, 1_700_000_000.0 + s * 3600)
        turn_of = {}
        number = 0
        for node in nodes:
            if node.role == "user":
                number += 1
            turn_of[node.id] = (number, f"{s:08x}{number:032x}")
        started, cpu = time.perf_counter(), time.thread_time()
        rows = session_rows(nodes, -1, turn_of)
        with index.write() as db:
            index.add_turns(db, f"bench-{s}", "global", rows, nodes[-1].seq, "stamp")
        ours += time.perf_counter() - started
        cpu_time["ours"] += time.thread_time() - cpu
        started, cpu = time.perf_counter(), time.thread_time()
        plain.execute("BEGIN")
        plain.executemany("INSERT INTO t(body) VALUES (?)", [(r.body,) for r in rows])
        plain.execute("COMMIT")
        base += time.perf_counter() - started
        cpu_time["base"] += time.thread_time() - cpu
        text_bytes += indexed_text(rows)
        turns += TURNS_PER_SESSION
        for r in rows[:: max(1, len(rows) // 4)]:
            texts[r.node] = r.body
    return ours, base, text_bytes, turns


class MemorySnippets(Snippets):
    """Snippets from the generated texts (no node files at this scale)."""

    def __init__(self, texts: dict[str, str]) -> None:
        super().__init__(store=None)  # type: ignore[arg-type]
        self.texts = texts

    def turn(self, session_id, node_id, seq, role, kind, terms, width=0) -> str:
        return self.around(self.texts.get(node_id, ""), terms, width)


def turn_rows(index: SearchIndex, hits) -> set[int]:
    """The index rows (= the plain table's rowids: both numbered in insert order) of turn hits."""
    out: set[int] = set()
    for h in hits:
        if h.kind in ("turn", "tool") and h.node_ids:
            row = index.db.execute(
                "SELECT d.id FROM docs d JOIN sessions s ON s.id = d.sess WHERE s.session_id = ? AND d.node = ?",
                (h.session_id, h.node_ids[0]),
            ).fetchone()
            if row:
                out.add(row[0])
    return out


def load() -> str:
    try:
        return " ".join(f"{v:.1f}" for v in os.getloadavg()) + f" on {os.cpu_count()} CPUs"
    except OSError:
        return "unknown"


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def node_file_reads(tmp: Path, corpus: Corpus) -> float:
    """Median time to read the node files of ten hits from a real session store."""
    home = Home(tmp / "files-home", durable=False)
    home.ensure()
    store = home.sessions
    ids = []
    for s in range(4):
        for turn in range(50):
            node = store.append_message(f"f{s}", "user", corpus.text(40), created_at=1e9 + turn)
            ids.append((f"f{s}", node.id, node.seq))
    snippets = Snippets(store)
    samples = []
    for _ in range(50):
        picks = random.sample(ids, 10)
        started = time.perf_counter()
        for sid, nid, seq in picks:
            snippets.turn(sid, nid, seq, "user", 0, ("a",))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def store_path(tmp: Path, corpus: Corpus, turns: int) -> tuple[float, float]:
    """(index update seconds, seconds to read the same nodes) for a real store of `turns` turns."""
    home = Home(tmp / "store-home", durable=False)
    home.ensure()
    store = home.sessions
    sessions = max(1, turns // 50)
    for s in range(sessions):
        parent = None
        with store.batch(f"st{s}") as batch:
            for turn in range(50):
                u = batch.append("user", corpus.text(20), parent_id=parent, created_at=1e9 + turn)
                a = batch.append("assistant", corpus.text(60), parent_id=u.id, created_at=1e9 + turn + 1)
                parent = a.id
                batch.commit_turn()
    fresh = Home(home.path, durable=False)  # cold: nothing cached
    started = time.perf_counter()
    fresh.search_index.update()
    update = time.perf_counter() - started
    fresh.search_index.close()
    cold = Home(home.path, durable=False)
    started = time.perf_counter()
    for s in range(sessions):
        cold.sessions.get_nodes(f"st{s}")
    read = time.perf_counter() - started
    return update, read


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--mid", action="store_true", help="100,000 turns (a few minutes on a loaded machine)")
    p.add_argument("--turns", type=int, default=0, help="indexed turns (default 500,000; --quick 50,000)")
    p.add_argument("--no-dense", action="store_true", help="skip the dense rerank figure")
    p.add_argument(
        "--home",
        type=Path,
        help="build the index in this folder and keep it; a later run with the same size reuses it and "
        "times only the queries (the update, size and store-path figures are not re-run)",
    )
    args = p.parse_args()
    return run(
        quick=args.quick,
        turns=args.turns or (MID_TURNS if args.mid else None),
        home=args.home,
        dense=not args.no_dense,
    )


def add_records(corpus: Corpus, index: SearchIndex, events: int, edges: int, sessions: int) -> int:
    """Distilled records pointing at the generated turns, like a memory of that size."""
    rng = corpus.rng
    written = 0  # bytes of record text
    batch = 5_000
    for start in range(0, events + edges, batch):
        with index.write() as db:
            for n in range(start, min(start + batch, events + edges)):
                s = rng.randrange(sessions)
                words = corpus.text(12)
                if n < events:
                    row = RecordRow(
                        f"ev-{n:016x}",
                        KIND_EVENT,
                        f"bench-{s}",
                        (),
                        None,
                        None,
                        1.7e9 + n,
                        "global",
                        words,
                        (),
                        "timeline/bench.jsonl",
                    )
                else:
                    a, b = rng.sample(corpus.words[:40_000], 2)
                    body = f"{a} (file) {rng.choice(('edited', 'read', 'ran', 'uses'))} {b} (command)"
                    row = RecordRow(
                        f"ed-{n:016x}",
                        KIND_EDGE,
                        f"bench-{s}",
                        (),
                        None,
                        None,
                        1.7e9 + n,
                        "global",
                        body,
                        (f"file.{a}", f"command.{b}"),
                        "graph/edges.jsonl",
                    )
                index.add_record(db, row)
                written += len(row.body.encode())
    return written


def run(*, quick: bool, turns: int | None = None, home: Path | None = None, dense: bool = True) -> int:
    turns_wanted = turns or (50_000 if quick else 500_000)
    corpus = Corpus()
    print(f"load average at start: {load()}", flush=True)
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        built = home / f"built-{turns_wanted}.json"
        if not built.exists():
            build_figures(corpus, home, turns_wanted)
            built.write_text(json.dumps({"turns": turns_wanted}))
        else:
            print(f"search bench: reusing the {turns_wanted:,}-turn index in {home} (build figures not re-run)")
        with tempfile.TemporaryDirectory(prefix="opmem-search-bench-") as tmp_name:
            search_figures(corpus, home, Path(tmp_name), dense=dense)
        return 0
    with tempfile.TemporaryDirectory(prefix="opmem-search-bench-") as tmp_name:
        tmp = Path(tmp_name)
        build_figures(corpus, tmp, turns_wanted)
        search_figures(corpus, tmp, tmp, dense=dense)
        small = 2_000 if quick else 10_000
        update, read = store_path(tmp, corpus, small)
        report(
            f"update from the session store ({small:,} turns, cold)",
            small / update,
            small / read,
            "reading the same nodes (get_nodes)",
            ">= 5,000 turns/s",
            small / update >= 5000,
            unit="turns/s",
        )
    return 0


def build_figures(corpus: Corpus, folder: Path, turns_wanted: int) -> None:
    """Builds the index and the plain table in `folder` (texts.json: the snippet texts) and prints
    the update and size figures."""
    n_events, n_edges = turns_wanted // 5, turns_wanted * 2 // 5
    sessions = max(1, turns_wanted // TURNS_PER_SESSION)
    index = SearchIndex(folder / "index.sqlite")
    plain = sqlite3.connect(folder / "plain.sqlite", isolation_level=None)
    plain.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZER}')")
    texts: dict[str, str] = {}
    cpu_time = {"ours": 0.0, "base": 0.0}
    ours, base, text_bytes, turns = build(corpus, index, plain, sessions, texts, cpu_time)
    print(
        f"search bench: {turns:,} turns in {sessions:,} sessions, {text_bytes / 1e6:.1f} MB of indexed text",
        flush=True,
    )
    record_bytes = add_records(corpus, index, n_events, n_edges, sessions)
    turn_bytes = text_bytes
    text_bytes += record_bytes
    print(f"  + {n_events:,} events and {n_edges:,} edges indexed as memory records ({record_bytes / 1e6:.1f} MB)")
    report(
        "incremental update",
        turns / ours,
        turns / base,
        "plain FTS5 insert",
        ">= 5,000 turns/s",
        turns / ours >= 5000,
        unit="turns/s",
    )
    report(
        "incremental update, CPU time (the machine's load left out)",
        turns / cpu_time["ours"],
        turns / cpu_time["base"],
        "plain FTS5 insert, CPU time",
        ">= 5,000 turns/s",
        turns / cpu_time["ours"] >= 5000,
        unit="turns/s",
    )
    index.optimize()
    plain.execute("INSERT INTO t(t) VALUES('optimize')")
    plain.execute("VACUUM")
    size = index.size_bytes()
    plain_size = os.path.getsize(folder / "plain.sqlite")
    print(
        f"index size: {size / text_bytes:.2f} x indexed text ({size / 1e6:.1f} MB)  vs plain FTS5 table: "
        f"{plain_size / turn_bytes:.2f} x of its text  target <= 1.5 x: "
        f"{'MET' if size <= 1.5 * text_bytes else 'MISSED'}"
    )
    (folder / "texts.json").write_text(json.dumps(texts))
    index.close()
    plain.close()


def bench_queries(corpus: Corpus) -> list[str]:
    rng = random.Random(5)
    return [
        " ".join(rng.choices(corpus.words[:20000], cum_weights=corpus.cum[:20000], k=rng.randint(1, 4)))
        for _ in range(300)
    ]


def search_figures(corpus: Corpus, folder: Path, tmp: Path, *, dense: bool = True) -> None:
    """Search p95 on the index in `folder`, beside plain FTS5 on the same texts."""
    index = SearchIndex(folder / "index.sqlite")
    plain = sqlite3.connect(folder / "plain.sqlite", isolation_level=None)
    texts = json.loads((folder / "texts.json").read_text())
    searcher = Searcher(index, MemorySnippets(texts))
    queries = bench_queries(corpus)
    for q in queries[:20]:
        searcher.search(q)  # warm the page cache
    ours_t, base_t, ours_cpu, base_cpu = [], [], [], []
    kept = plain_hits = 0
    for q in queries:
        started, cpu = time.perf_counter(), time.thread_time()
        hits = searcher.search(q, k=10)
        ours_t.append(time.perf_counter() - started)
        ours_cpu.append(time.thread_time() - cpu)
        fts = " OR ".join(f'"{w}"' for w in q.split())
        started, cpu = time.perf_counter(), time.thread_time()
        best = plain.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (fts,)).fetchall()
        base_t.append(time.perf_counter() - started)
        base_cpu.append(time.thread_time() - cpu)
        kept += len({r for (r,) in best} & turn_rows(index, hits))
        plain_hits += len(best)
    reads = node_file_reads(tmp, corpus)
    report(
        "search p95 (lexical)",
        p95(ours_t),
        p95(base_t),
        "plain FTS5 bm25 top-10 p95",
        "<= 10 ms",
        p95(ours_t) + reads <= 0.010,
    )
    report(
        "search p95 (lexical), CPU time (the machine's load left out)",
        p95(ours_cpu),
        p95(base_cpu),
        "plain FTS5 bm25 top-10 p95, CPU time",
        "<= 10 ms",
        p95(ours_cpu) + reads <= 0.010,
    )
    print(
        f"  + reading the node files of 10 hits for their snippets: {fmt(reads)} (median); p50 {fmt(statistics.median(ours_t))}"
        f", CPU {fmt(statistics.median(ours_cpu))}"
    )
    print(f"  plain FTS5 top-10 turns also in our top 10: {kept / max(1, plain_hits):.3f} ({kept:,} of {plain_hits:,})")
    plain.close()
    if dense:
        dense_figures(index, searcher, queries, reads)
    index.close()


def dense_figures(index: SearchIndex, searcher: Searcher, queries: list[str], reads: float) -> None:
    """Search p95 with the dense rerank on, beside the lexical search of the same queries, the
    two timed in turns. Needs the dense extra (README); said and skipped without it."""
    try:
        from backend.memory.dense_minilm import DenseUnavailable
        from backend.memory.dense_rerank import DenseVectors, load

        encoder = load("minilm")
    except (ImportError, DenseUnavailable) as exc:
        print(f"search p95 (dense rerank): skipped, the dense extra is not installed ({exc})")
        return
    vectors = DenseVectors(index, encoder)
    filled = random_vectors(index, vectors.model)
    print(f"  dense: {filled:,} message rows hold (random) vectors; the query is embedded by {encoder.name}")
    lexical = Searcher(index, searcher.snippets)
    searcher.dense = vectors
    for q in queries[:20]:
        searcher.search(q)  # warm: the model's first run and the vectors' pages
    ours_t, ours_cpu, base_t, base_cpu = [], [], [], []
    for q in queries:
        searcher.dense = DenseVectors(index, encoder)  # no cached query vector: every query is embedded
        started, cpu = time.perf_counter(), time.process_time()  # the process: BLAS may run off this thread
        searcher.search(q, k=10)
        ours_t.append(time.perf_counter() - started)
        ours_cpu.append(time.process_time() - cpu)
        started, cpu = time.perf_counter(), time.process_time()
        lexical.search(q, k=10)
        base_t.append(time.perf_counter() - started)
        base_cpu.append(time.process_time() - cpu)
    searcher.dense = None
    for name, ours, base in (("", ours_t, base_t), (", CPU time (the process)", ours_cpu, base_cpu)):
        report(
            f"search p95 (dense rerank){name}",
            p95(ours),
            p95(base),
            "lexical search, same queries",
            "<= 50 ms",
            p95(ours) + reads <= 0.050,
        )
    print(
        f"  dense p50 {fmt(statistics.median(ours_t))}, CPU {fmt(statistics.median(ours_cpu))}; snippets' file reads as above"
    )


def random_vectors(index: SearchIndex, model: str) -> int:
    """Gives every message row without one a random unit vector pair (float16, as fill() stores them)."""
    import numpy as np

    from backend.memory.dense_minilm import DIM
    from backend.memory.dense_rerank import MODEL_KEY
    from backend.memory.index import KIND_MESSAGE

    rng = np.random.default_rng(7)
    rows = [
        r
        for (r,) in index.db.execute(
            "SELECT d.id FROM docs d LEFT JOIN dense_vecs v ON v.id = d.id WHERE d.kind = ? AND v.id IS NULL",
            (KIND_MESSAGE,),
        )
    ]
    for start in range(0, len(rows), 20_000):
        chunk = rows[start : start + 20_000]
        vecs = rng.standard_normal((len(chunk), 2, DIM), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=2, keepdims=True)
        vecs = vecs.astype(np.float16)
        with index.write() as db:
            db.executemany(
                "INSERT INTO dense_vecs(id, vecs) VALUES(?, ?)", zip(chunk, (v.tobytes() for v in vecs), strict=True)
            )
    with index.write() as db:
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (MODEL_KEY, model))
    return index.db.execute("SELECT count(*) FROM dense_vecs").fetchone()[0]


if __name__ == "__main__":
    sys.exit(main())
