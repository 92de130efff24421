"""Project briefs on real sessions (issue 37): what the core block states of facts labelled by reading.

  python bench/brief_real.py [--half dev|test|holdout|both] [--project NAME] [--show] [--recall] [--json]

Each project of bench/real_corpus/<half>/<project>/ (real sessions people committed to public
repositories, unmodified, with facts.json and questions.json labelled by reading) is imported by
the real importers into a fresh OPMEM_HOME in a temporary folder, distilled by the default rules
extractor, and its project core block (and the global block) read. Figures, per half and in total,
each beside the same figure with the knowledge rules switched off (RunOptions(knowledge=False):
the same sessions distilled again, activity only) and beside the block without its brief
(timeline and graph only, as bench/brief_bench.py's "before"):
  - brief coverage: the share of labelled facts (stack, commands, conventions in their scope,
    decisions, state) with an alternative in the block (target >= 0.85);
  - replaced facts stated as current (target 0);
  - the largest block in bytes (limit 2,048);
  - answer-term recall: per question, the share of its answer terms in the core block plus the
    top 5 memory_search snippets for the question (target >= 0.7).
The halves are the folders of bench/real_corpus/ that hold projects; `both` is dev + test. The
holdout half (native agent stores, docs/real-corpus.md) is measured once, on frozen rules.
--show prints each block and its missed facts, and --recall each question, its missed answer
terms and its 5 snippets, for the dev half only: the test and holdout halves are only measured,
never read, so that nobody tunes the rules on them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from brief_scoring import (  # noqa: E402
    KINDS,
    Question,
    answer_recall,
    coverage,
    load_labels,
    load_questions,
    shows,
    stale_mentions,
)

from opmem_tui.backend.distill.pipeline import RunOptions, run  # noqa: E402
from opmem_tui.backend.home import Home  # noqa: E402
from opmem_tui.backend.importers import SOURCES, run_import  # noqa: E402
from opmem_tui.backend.importers.base import ImportReport  # noqa: E402
from opmem_tui.backend.importers.detect import detect_sources  # noqa: E402
from opmem_tui.backend.memory.brief import global_brief, project_brief  # noqa: E402
from opmem_tui.backend.memory.core import (  # noqa: E402
    CORE_BUDGET,
    compose_core,
    consolidation_day,
    core_path,
    event_lines,
    fact_lines,
)
from opmem_tui.backend.recall.context import recall_for  # noqa: E402
from opmem_tui.backend.recall.search_tool import memory_search  # noqa: E402

CORPUS = ROOT / "bench" / "real_corpus"
BOTH = ("dev", "test")  # what --half both means; the holdout half is only ever measured on its own
SHOWN = "dev"  # the one half whose blocks --show prints
TOP_K = 5


@dataclass
class Figures:
    facts: int = 0
    shown: int = 0
    stale: int = 0
    largest: int = 0
    recall_sum: float = 0.0
    questions: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in KINDS})  # [shown, facts]

    def add(self, other: Figures) -> None:
        self.facts += other.facts
        self.shown += other.shown
        self.stale += other.stale
        self.largest = max(self.largest, other.largest)
        self.recall_sum += other.recall_sum
        self.questions += other.questions
        for kind, (shown, facts) in other.by_kind.items():
            self.by_kind[kind][0] += shown
            self.by_kind[kind][1] += facts

    @property
    def coverage(self) -> float:
        return self.shown / self.facts if self.facts else 0.0

    @property
    def recall(self) -> float:
        return self.recall_sum / self.questions if self.questions else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "facts": self.facts,
            "shown": self.shown,
            "coverage": round(self.coverage, 3),
            "stale": self.stale,
            "largest_block": self.largest,
            "questions": self.questions,
            "answer_recall": round(self.recall, 3),
            "by_kind": {kind: {"shown": n, "facts": total} for kind, (n, total) in self.by_kind.items()},
        }


@dataclass
class Result:
    name: str
    half: str
    sessions: int
    brief: Figures
    before: Figures  # the same block without its brief
    unbounded: Figures  # every brief line and graph fact, no budget: what was extracted, fitting or not
    off: Figures  # the block of the same sessions distilled with the knowledge rules off
    blocks: dict[str, str] = field(default_factory=dict)  # dev --show only
    missed: list[str] = field(default_factory=list)
    stale_lines: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)  # dev --recall only: each question, its misses, its snippets
    snippet_recall: float = 0.0  # the snippets alone, without the block (--recall)


def halves() -> tuple[str, ...]:
    """The corpus folders that hold projects: dev and test first, then the others by name."""
    present = {folder.parent.parent.name for folder in CORPUS.glob("*/*/facts.json")}
    return tuple(h for h in BOTH if h in present) + tuple(sorted(present - set(BOTH)))


def projects(half: str, only: str | None) -> list[tuple[str, Path]]:
    found = []
    for h in BOTH if half == "both" else (half,):
        for folder in sorted((CORPUS / h).glob("*/facts.json")):
            if only is None or folder.parent.name == only:
                found.append((h, folder.parent))
    return found


def sources_of(folder: Path) -> list[str]:
    """The importers `opmem import <folder>` picks: each session under it by its shape
    (importers/detect.py). Several importers' own discovery accepts any .jsonl or .md file, so
    asking each of them would import a Claude Code transcript twice (as iFlow's too)."""
    found = detect_sources([folder], SOURCES)
    if found.ambiguous or not found.sessions:
        raise RuntimeError(f"{folder}: {'; '.join(found.warnings()) or 'no session of any importer found'}")
    return list(found.sessions)


def prompted_sessions(source: str, folder: Path) -> int:
    """The sessions of `source` under `folder` with at least one prompt (an aider run that was
    only opened and closed is not counted)."""
    importer = SOURCES[source]
    report = ImportReport()
    return sum(
        1
        for path in importer.discover([folder])
        for found in importer.parse_file(path, report, final=True)
        if any(n.role == "user" for n in found.nodes)
    )


def distil_project(project: Path, tmp: Path, *, knowledge: bool = True) -> tuple[Home, int]:
    """The project's sessions imported into a fresh home and distilled by the default rules
    (without the knowledge rules: `knowledge=False`); with the number of sessions holding a prompt."""
    work = tmp / "work" / project.name  # the folder the sessions ran in: the project's name
    shutil.copytree(project / "sessions", work)
    pygit2.init_repository(str(work))  # a folder of its own, not inside the corpus' repository
    home = Home(tmp / "home")
    sessions = 0
    for source in sources_of(work):
        report = run_import(home, source, [work], bind=False)
        if report.warnings:
            raise RuntimeError(f"{project}: importing {source}: {'; '.join(report.warnings[:3])}")
        sessions += prompted_sessions(source, work)
    run(home, RunOptions(workers=1, knowledge=knowledge))
    return home, sessions


def project_scope_of(home: Home) -> str:
    memory = home.memory_readonly()
    scopes = [s for s in memory.scopes() if s.startswith("project:")]
    memory.close()
    if len(scopes) != 1:
        raise RuntimeError(f"expected one project scope, found {scopes}")
    return scopes[0]


def read_block(home: Home, project_id: str) -> str:
    path = core_path(home.memory_dir, project_id)
    return path.read_text(encoding="utf-8") if path.exists() else ""


@dataclass
class Distilled:
    """One distillation of a project: its blocks, and the snippets search gives each question."""

    block: str
    global_block: str
    before: str  # the project block without its brief
    before_global: str
    snippets: list[str]
    hits: list[list[tuple[str, str]]]  # per question, (kind, snippet) of each hit (--recall)
    unbounded: str  # every brief line, timeline candidate and graph fact, no budget: what was extracted
    unbounded_global: str


def distilled(project: Path, questions: list, tmp: Path, *, knowledge: bool) -> tuple[Distilled, int]:
    home, sessions = distil_project(project, tmp, knowledge=knowledge)
    scope = project_scope_of(home)
    project_id = scope.split(":", 1)[1]
    memory = home.memory_readonly()
    day = consolidation_day(time.time())
    before = compose_core(project.name, day, event_lines(memory, scope, day), fact_lines(memory, scope))
    before_global = compose_core("(global)", day, event_lines(memory, "global", day), fact_lines(memory, "global"))
    unbounded, unbounded_global = (
        "\n".join(
            [
                *(b.text for b in lines),
                *(e.text for e in event_lines(memory, s, day)),
                *(f.text for f in fact_lines(memory, s)),
            ]
        )
        for lines, s in ((project_brief(memory, project_id), scope), (global_brief(memory), "global"))
    )
    memory.close()
    recall = recall_for(home, project=project_id)
    per_question = []
    for q in questions:
        hits = memory_search(recall, q.text, k=TOP_K).get("hits", [])
        per_question.append([(h.get("kind", ""), h.get("snippet", "")) for h in hits[:TOP_K]])
    snippets = [" ".join(snippet for _kind, snippet in hits) for hits in per_question]
    recall.memory.close()
    block = Distilled(
        read_block(home, project_id),
        read_block(home, ""),
        before,
        before_global,
        snippets,
        per_question,
        unbounded,
        unbounded_global,
    )
    return block, sessions


def question_report(q: Question, block: str, hits: list[tuple[str, str]]) -> str:
    """One question for --recall: its missed answer terms (against block + snippets) and its snippets."""
    text = "\n".join([block, *(snippet for _kind, snippet in hits)])
    missed = [" | ".join(t) for t in q.terms if not shows(t, text)]
    lines = [f"Q: {q.text}", f"   missed: {'; '.join(missed) or '(none)'}"]
    lines += [f"   {i}. [{kind}] {snippet}" for i, (kind, snippet) in enumerate(hits, 1)] or ["   (no hits)"]
    return "\n".join(lines)


def measure(half: str, project: Path, show: bool, show_recall: bool = False) -> Result:
    labels = load_labels(project / "facts.json")
    questions_file = project / "questions.json"
    questions = load_questions(questions_file) if questions_file.exists() else []
    with tempfile.TemporaryDirectory() as tmp:
        on, sessions = distilled(project, questions, Path(tmp) / "on", knowledge=True)
        off, _ = distilled(project, questions, Path(tmp) / "off", knowledge=False)
    result = Result(project.name, half, sessions, Figures(), Figures(), Figures(), Figures())
    runs = (
        (result.brief, on.block, on.global_block, on.snippets),
        (result.before, on.before, on.before_global, on.snippets),
        (result.off, off.block, off.global_block, off.snippets),
        (result.unbounded, on.unbounded, on.unbounded_global, on.snippets),
    )
    for figures, pblock, gblock, snippets in runs:
        shown, missed = coverage(labels, pblock, gblock)
        stale = stale_mentions(labels.stale, pblock) + stale_mentions(labels.stale, gblock)
        figures.facts, figures.shown, figures.stale = len(labels.facts), shown, len(stale)
        for fact in labels.facts:
            figures.by_kind[fact.kind][1] += 1
            figures.by_kind[fact.kind][0] += fact not in missed
        figures.largest = max(len(pblock.encode("utf-8")), len(gblock.encode("utf-8")))
        figures.questions = len(questions)
        figures.recall_sum = sum(answer_recall(q, f"{pblock}\n{s}") for q, s in zip(questions, snippets, strict=True))
        if figures is result.brief and show and half == SHOWN:
            result.blocks = {"project": on.block, "global": on.global_block}
            result.missed = [f"{f.kind}{'/' + f.label if f.label else ''} ({f.scope}): {f.any}" for f in missed]
            result.stale_lines = [f"{old}: {line}" for old, line in stale]
    if show_recall and half == SHOWN:
        result.questions = [question_report(q, on.block, h) for q, h in zip(questions, on.hits, strict=True)]
        result.snippet_recall = sum(answer_recall(q, s) for q, s in zip(questions, on.snippets, strict=True))
    return result


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def print_figures(title: str, brief: Figures, before: Figures, off: Figures, unbounded: Figures) -> None:
    print(f"{title}")
    kinds = "  ".join(f"{k} {n}/{t}" for k, (n, t) in unbounded.by_kind.items())
    print(
        f"  extracted (every brief line, timeline candidate and graph fact, no 2 KB budget): {unbounded.coverage:.3f}  by kind: {kinds}"
    )
    ratio = brief.coverage / off.coverage if off.coverage else float("inf")
    print(f"  brief coverage: {brief.coverage:.3f} ({brief.shown}/{brief.facts} facts)  vs knowledge rules off: "
          f"{off.coverage:.3f}  ratio {ratio:.2f}  (without the brief: {before.coverage:.3f})  "
          f"target >= 0.85: {verdict(brief.coverage >= 0.85)}")  # fmt: skip
    print(f"  replaced facts stated as current: {brief.stale}  vs knowledge rules off: {off.stale}  "
          f"(without the brief: {before.stale})  target 0: {verdict(brief.stale == 0)}")  # fmt: skip
    print(f"  largest block: {brief.largest:,} bytes  vs knowledge rules off: {off.largest:,} bytes  "
          f"(without the brief: {before.largest:,})  target <= {CORE_BUDGET}: {verdict(brief.largest <= CORE_BUDGET)}")  # fmt: skip
    kinds = "  ".join(
        f"{k} {n}/{t} (rules off {off.by_kind[k][0]}, without the brief {before.by_kind[k][0]})"
        for k, (n, t) in brief.by_kind.items()
    )
    print(f"  by kind: {kinds}")
    print(f"  answer-term recall: {brief.recall:.3f} ({brief.questions} questions)  vs knowledge rules off: "
          f"{off.recall:.3f}  (without the brief: {before.recall:.3f})  target >= 0.7: {verdict(brief.recall >= 0.7)}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--half", choices=(*halves(), "both"), default="both")
    p.add_argument("--project", help="only this project (folder name)")
    p.add_argument("--show", action="store_true", help="print each dev block and its missed facts")
    p.add_argument(
        "--recall", action="store_true", help="print each dev question, its missed answer terms and its 5 snippets"
    )
    p.add_argument("--json", action="store_true", help="figures as JSON")
    args = p.parse_args(argv)
    if (args.show or args.recall) and args.half not in (SHOWN, "both"):
        print(f"--show and --recall print {SHOWN} answers only: the {args.half} half is only measured", file=sys.stderr)
    chosen = projects(args.half, args.project)
    if not chosen:
        print(f"no corpus project matches (half {args.half}, project {args.project})", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = [measure(half, folder, args.show, args.recall) for half, folder in chosen]
    seconds = time.perf_counter() - started
    totals: dict[str, tuple[Figures, Figures, Figures, Figures]] = {}
    for key in (*halves(), "total"):
        members = [r for r in results if key in (r.half, "total")]
        if members:
            brief, before, off, unbounded = Figures(), Figures(), Figures(), Figures()
            for r in members:
                brief.add(r.brief)
                before.add(r.before)
                off.add(r.off)
                unbounded.add(r.unbounded)
            totals[key] = (brief, before, off, unbounded)
    if args.json:
        out = {
            "projects": [
                {"name": r.name, "half": r.half, "sessions": r.sessions, "brief": r.brief.as_dict(),
                 "before": r.before.as_dict(), "rules_off": r.off.as_dict(), "unbounded": r.unbounded.as_dict()}
                for r in results
            ],
            "totals": {
                k: {"brief": b.as_dict(), "before": a.as_dict(), "rules_off": o.as_dict(), "unbounded": u.as_dict()}
                for k, (b, a, o, u) in totals.items()
            },
        }  # fmt: skip
        print(json.dumps(out, indent=2))
        return 0
    for r in results:
        print(f"{r.half}/{r.name}: {r.sessions} sessions with a prompt  coverage {r.brief.coverage:.2f} (rules off "
              f"{r.off.coverage:.2f}, without the brief {r.before.coverage:.2f}, extracted {r.unbounded.coverage:.2f})  stale {r.brief.stale}  recall {r.brief.recall:.2f}  "
              f"block {r.brief.largest} B")  # fmt: skip
        if r.blocks:
            for which, text in r.blocks.items():
                print(f"--- {which} block ---\n{text}")
            print("--- missed ---\n" + "\n".join(r.missed or ["(none)"]))
            if r.stale_lines:
                print("--- stated as current ---\n" + "\n".join(r.stale_lines))
            print()
        if r.questions:
            share = r.snippet_recall / r.brief.questions if r.brief.questions else 0.0
            print(f"--- questions (the 5 snippets alone: recall {share:.2f}) ---")
            print("\n".join(r.questions) + "\n")
    print(f"\n{len(results)} projects distilled and scored in {seconds:.1f} s")
    for key, (brief, before, off, unbounded) in totals.items():
        print_figures(f"[{key}]", brief, before, off, unbounded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
