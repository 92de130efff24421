"""Scoring a brief against facts labelled by reading (bench/real_corpus/*/<project>/facts.json).

A fact is a list of lowercase alternatives; any one present in the block shows it. Matching is
on whole words (so "go" is not found in "google", nor "pytest" in "pytest-asyncio") over lowercased text with runs of white space
folded. A replaced value (`stale`) may appear only as history: "(was X)", "was X", "replaced X",
"instead of X", "from X to", or on a decision line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

KINDS = ("stack", "commands", "conventions", "decisions", "state")
GLOBAL = "global"


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(norm(term))}(?![A-Za-z0-9_-])(?!\.[A-Za-z0-9])")


def mentions(term: str, text: str) -> bool:
    """Whether `term` appears in `text` as whole words (case and spacing ignored)."""
    term = norm(term)
    return bool(term) and bool(_pattern(term).search(norm(text)))


def shows(alternatives: Iterable[str], text: str) -> bool:
    return any(mentions(alt, text) for alt in alternatives)


@dataclass(frozen=True)
class Fact:
    kind: str  # one of KINDS
    any: tuple[str, ...]
    scope: str = "project"  # conventions: project | global | lang:<name>
    label: str = ""  # role (stack), purpose (commands), status (state)


@dataclass(frozen=True)
class Labels:
    project: str
    facts: tuple[Fact, ...]
    stale: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    text: str
    terms: tuple[tuple[str, ...], ...]  # each term: its alternatives


def _alts(raw: object, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(a, str) and a.strip() for a in raw):
        raise ValueError(f"{where}: 'any' must be a non-empty list of strings")
    return tuple(a.lower() for a in raw)


def load_labels(path: Path) -> Labels:
    data = json.loads(path.read_text(encoding="utf-8"))
    facts: list[Fact] = []
    for kind in KINDS:
        for i, item in enumerate(data.get(kind, [])):
            where = f"{path}: {kind}[{i}]"
            label = item.get("role") or item.get("purpose") or item.get("status") or ""
            facts.append(Fact(kind, _alts(item.get("any"), where), item.get("scope", "project"), label))
    stale = tuple(s.lower() for s in data.get("stale", []))
    return Labels(data.get("project", path.parent.name), tuple(facts), stale)


def load_questions(path: Path) -> list[Question]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, item in enumerate(data):
        terms = tuple(_alts(t, f"{path}: [{i}] answer") for t in item["answer"])
        if not terms:
            raise ValueError(f"{path}: [{i}] has no answer terms")
        out.append(Question(item["q"], terms))
    return out


def block_for(fact: Fact, project_block: str, global_block: str) -> str:
    """A global preference belongs in the global block; everything else in the project's."""
    return global_block if fact.kind == "conventions" and fact.scope == GLOBAL else project_block


def coverage(labels: Labels, project_block: str, global_block: str) -> tuple[int, list[Fact]]:
    """(facts shown, facts missed)."""
    missed = [f for f in labels.facts if not shows(f.any, block_for(f, project_block, global_block))]
    return len(labels.facts) - len(missed), missed


_HISTORY = re.compile(
    r"\((?:was|replaced|replacing|instead of|not)\b[^)]*\)"  # (was X), (replaced X)
    r"|\b(?:was|were|replaced|replacing|replaces|instead of|dropped|from)\s+[^,;.()→]*"
)
_DECISION = re.compile(r"^\W*(?:decided|decision|dropped|replaced|switched|moved|migrated)\b")


def stale_mentions(stale: Sequence[str], block: str) -> list[tuple[str, str]]:
    """(value, line) for each replaced value the block names as current."""
    found = []
    for line in block.splitlines():
        text = norm(line)
        if _DECISION.match(text) or text.startswith("· decided"):
            continue
        current = _HISTORY.sub(" ", text.split("↪")[0])
        for old in stale:
            if mentions(old, current):
                found.append((old, line))
    return found


def answer_recall(question: Question, text: str) -> float:
    """The share of the question's answer terms present in `text`."""
    return sum(1 for term in question.terms if shows(term, text)) / len(question.terms)
