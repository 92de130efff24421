"""LoCoMo retrieval: Recall@5 / Recall@10 of the evidence turns, opmem search vs plain FTS5 BM25.

    python bench/locomo.py [FOLDER] [--quick] [--no-dense]
        (default ../shared/fixtures/locomo from the repo root; --quick: the first conversation file
        only; the dense signal is measured too when its extra is installed, unless --no-dense)

For each conversation file: a fresh opmem home; each LoCoMo session imported through the generic
JSONL importer (one opmem session per LoCoMo session, each turn's dia_id as its node id, the
speaker as speaker, the session date as timestamps, an image's caption appended to the text and
kept as metadata.blip_caption); the distillation run when backend/distill has its pipeline;
the index updated; then every question of categories 1-4 asked through Home.search.

Recall@k: the share of a question's evidence dia_ids found among the provenance node ids of the
top k hits, averaged over questions. The baseline, in the same run: one FTS5 table of the raw
turns as "speaker: text", ranked by bm25() for the same query terms (the same tokenizer,
stopwords dropped). With the speaker's name it gives the issue's baseline (0.61 / 0.53); the
text alone scores lower (0.583 / 0.500 on the five fixture conversations).

With the dense extra installed (`[search] dense = "minilm"`, docs/search.md), the same home is
asked again with the dense rerank on: columns R@5+d / R@10+d and the line
`locomo dense=minilm recall@5=X recall@10=Y` before the last line, which stays the lexical default.

Only `qa` question/evidence/category are read, and evidence only to score: the `observation`,
`summary` and `events_session_*` annotations are never read.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.home import Home  # noqa: E402
from backend.importers import run_import  # noqa: E402
from backend.memory.dense_minilm import DenseUnavailable  # noqa: E402
from backend.memory.dense_rerank import load  # noqa: E402
from backend.memory.index import TOKENIZER  # noqa: E402
from backend.memory.query_text import parse_query  # noqa: E402

DEFAULT_FOLDER = ROOT.parent / "shared" / "fixtures" / "locomo"
CATEGORIES = (1, 2, 3, 4)
KS = (5, 10)


def session_time(text: str) -> float:
    """'1:56 pm on 8 May, 2023' -> epoch seconds (UTC)."""
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), pattern).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    raise ValueError(f"unreadable LoCoMo session date {text!r}")


def turn_text(turn: dict) -> str:
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    return f"{text} [image: {caption}]" if isinstance(caption, str) and caption else text


def sessions_of(conv: dict) -> list[tuple[int, float, list[dict]]]:
    out = []
    for key, value in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list) and value:
            out.append((int(m.group(1)), session_time(conv[f"{key}_date_time"]), value))
    return sorted(out, key=lambda s: s[0])


def to_jsonl(name: str, conv: dict, path: Path) -> list[tuple[str, str]]:
    """The conversation as generic-JSONL lines; returns (dia_id, "speaker: text") of every turn."""
    first = conv.get("speaker_a")
    turns: list[tuple[str, str]] = []
    with open(path, "w", encoding="utf-8") as out:
        for number, when, session in sessions_of(conv):
            for turn in session:
                text = turn_text(turn)
                metadata = {"blip_caption": turn["blip_caption"]} if turn.get("blip_caption") else {}
                line = {
                    "session": f"{name}-s{number}",
                    "id": turn["dia_id"],
                    "role": "user" if turn.get("speaker") == first else "assistant",
                    "speaker": turn.get("speaker"),
                    "content": text,
                    "timestamp": when,
                    "title": f"{name} session {number}",
                    "metadata": metadata,
                }
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                turns.append((turn["dia_id"], f"{turn.get('speaker')}: {text}"))
    return turns


def questions(conv_file: dict) -> list[dict]:
    return [q for q in conv_file.get("qa", []) if q.get("category") in CATEGORIES and evidence(q)]


def evidence(question: dict) -> set[str]:
    return {e for item in question.get("evidence") or [] for e in re.split(r"[;,\s]+", str(item)) if e}


def distiller() -> Callable[[Home], object] | None:
    """backend.distill.pipeline.run(home) when the distillation pipeline is on this branch."""
    if (
        importlib.util.find_spec("backend.distill") is None
        or importlib.util.find_spec("backend.distill.pipeline") is None
    ):
        return None
    module = importlib.import_module("backend.distill.pipeline")
    return getattr(module, "run", None)


class Baseline:
    """Plain FTS5 BM25 over the raw turns ("speaker: text")."""

    def __init__(self, turns: Iterable[tuple[str, str]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, body, tokenize='{TOKENIZER}')")
        self.db.executemany("INSERT INTO t(dia, body) VALUES(?, ?)", list(turns))

    def search(self, query: str, k: int) -> list[set[str]]:
        parsed = parse_query(query)
        if parsed.empty:
            return []
        rows = self.db.execute("SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (parsed.fts(), k))
        return [{r[0]} for r in rows]


@contextmanager
def _clock(into: list[float]) -> Iterator[None]:
    """Adds the wall and CPU (this thread) seconds of the block to into[0] and into[1]."""
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        into[0] += time.perf_counter() - wall
        into[1] += time.thread_time() - cpu


class Tally:
    def __init__(self) -> None:
        self.values: dict[tuple[str, object, int], list[float]] = defaultdict(list)

    def add(self, system: str, groups: Iterable[object], ranked: list[set[str]], wanted: set[str]) -> None:
        for k in KS:
            found = set().union(*ranked[:k]) if ranked else set()
            share = len(found & wanted) / len(wanted)
            for group in groups:
                self.values[(system, group, k)].append(share)

    def mean(self, system: str, group: object, k: int) -> float:
        values = self.values.get((system, group, k), [])
        return sum(values) / len(values) if values else 0.0

    def count(self, group: object) -> int:
        return len(self.values.get(("opmem", group, KS[0]), []))


def run_conversation(
    path: Path, tally: Tally, distill: Callable[[Home], object] | None, dense: bool = False
) -> dict[str, float]:
    conv_file = json.loads(path.read_text(encoding="utf-8"))
    conv = conv_file.get("conversation", conv_file)
    name = path.stem
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="opmem-locomo-") as tmp:
        home = Home(Path(tmp) / "home", durable=False)
        home.ensure()
        source = Path(tmp) / f"{name}.jsonl"
        turns = to_jsonl(name, conv, source)
        started = time.perf_counter()
        report = run_import(home, "jsonl", [source], bind=False)
        if report.warnings:
            print(f"  {name}: {len(report.warnings)} import warnings, first: {report.warnings[0]}")
        timings["import"] = time.perf_counter() - started
        if distill is not None:
            started = time.perf_counter()
            distill(home)
            timings["distill"] = time.perf_counter() - started
        started = time.perf_counter()
        home.search_index.update()
        timings["index"] = time.perf_counter() - started
        baseline = Baseline(turns)
        asked = questions(conv_file)
        spent = {"search": [0.0, 0.0], "baseline": [0.0, 0.0]}  # wall, CPU of this thread
        for q in asked:
            wanted = evidence(q)
            groups = ("all", f"cat{q['category']}", name)
            with _clock(spent["search"]):
                hits = home.search(q["question"], k=max(KS))
            tally.add("opmem", groups, [set(h.node_ids) for h in hits], wanted)
            with _clock(spent["baseline"]):
                found = baseline.search(q["question"], max(KS))
            tally.add("baseline", groups, found, wanted)
        home.search_index.close()
        if dense:
            (home.path / "config.toml").write_text('[search]\ndense = "minilm"\n', encoding="utf-8")
            home = Home(home.path, durable=False)
            started = time.perf_counter()
            home.search_index.update()
            timings["dense fill"] = time.perf_counter() - started
            spent["dense"] = [0.0, 0.0]
            walls, cpus = [], []  # per question; CPU of the whole process (numpy's BLAS may use threads)
            for q in asked:
                wall, cpu = time.perf_counter(), time.process_time()
                with _clock(spent["dense"]):
                    hits = home.search(q["question"], k=max(KS))
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
                groups = ("all", f"cat{q['category']}", name)
                tally.add("dense", groups, [set(h.node_ids) for h in hits], evidence(q))
            home.search_index.close()
            timings["dense p95"] = _p95(walls)
            timings["dense p95 cpu"] = _p95(cpus)
        for key, (wall, cpu) in spent.items():
            timings[key] = wall / max(1, len(asked))
            timings[f"{key} cpu"] = cpu / max(1, len(asked))
    return timings


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


def dense_available() -> str:
    """ "" when the dense signal can run here, else why not (its first use loads the model)."""
    try:
        load("minilm")
    except DenseUnavailable as exc:
        return str(exc)
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_FOLDER))
    parser.add_argument("--quick", action="store_true", help="the first conversation file only")
    parser.add_argument("--no-dense", action="store_true", help="skip the run with the dense signal")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    files = sorted(folder.glob("*.json"))[: 1 if args.quick else None]
    if not files:
        print(f"no LoCoMo conversation files in {folder}", file=sys.stderr)
        return 1
    distill = distiller()
    print(f"LoCoMo retrieval, {len(files)} conversations, distillation: {'on' if distill else 'not on this branch'}")
    why_not = "--no-dense" if args.no_dense else dense_available()
    dense = not why_not
    print(f"dense signal (minilm): {'on, as a second run of each home' if dense else 'off: ' + why_not}")
    tally = Tally()
    names = []
    for path in files:
        timings = run_conversation(path, tally, distill, dense)
        names.append(path.stem)
        setup = ", ".join(
            f"{k} {v:.1f} s" for k, v in timings.items() if not k.startswith(("search", "baseline", "dense"))
        )
        setup += f", dense fill {timings['dense fill']:.1f} s" if "dense fill" in timings else ""
        print(f"  {path.stem}: {tally.count(path.stem)} questions ({setup} wall)")
        print(
            f"    per question: search {timings['search'] * 1000:.1f} ms wall, {timings['search cpu'] * 1000:.1f} ms CPU;"
            f" baseline {timings['baseline'] * 1000:.1f} ms wall, {timings['baseline cpu'] * 1000:.1f} ms CPU;"
            f" ratio (CPU) {timings['search cpu'] / max(timings['baseline cpu'], 1e-9):.1f}"
        )
        if "dense" in timings:
            print(
                f"    with the dense rerank: search {timings['dense'] * 1000:.1f} ms wall,"
                f" {timings['dense cpu'] * 1000:.1f} ms CPU (this thread) on average; p95"
                f" {timings['dense p95'] * 1000:.1f} ms wall, {timings['dense p95 cpu'] * 1000:.1f} ms CPU"
                " (the process); the query's embedding included"
            )
    extra = f" {'R@5+d':>6} {'R@10+d':>6}" if dense else ""
    print(f"{'group':>12} {'n':>4} {'R@5':>6} {'R@10':>6} {'base@5':>7} {'base@10':>8} {'ratio@10':>9}{extra}")
    for group in ("all", *(f"cat{c}" for c in CATEGORIES), *names):
        if not tally.count(group):
            continue
        ours = [tally.mean("opmem", group, k) for k in KS]
        base = [tally.mean("baseline", group, k) for k in KS]
        ratio = ours[1] / base[1] if base[1] else float("inf")
        extra = "".join(f" {tally.mean('dense', group, k):6.3f}" for k in KS) if dense else ""
        print(
            f"{group:>12} {tally.count(group):>4} {ours[0]:6.3f} {ours[1]:6.3f} {base[0]:7.3f} {base[1]:8.3f}"
            f" {ratio:9.2f}{extra}"
        )
    r5, r10 = (tally.mean("opmem", "all", k) for k in KS)
    b5, b10 = (tally.mean("baseline", "all", k) for k in KS)
    if dense:
        d5, d10 = (tally.mean("dense", "all", k) for k in KS)
        print(f"locomo dense=minilm recall@5={d5:.3f} recall@10={d10:.3f} (lexical {r5:.3f} / {r10:.3f})")
    print(f"locomo recall@5={r5:.3f} recall@10={r10:.3f} baseline@5={b5:.3f} baseline@10={b10:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
