"""The conventions' part of the brief: which rules are one rule reworded, how they rank, and rules
under one label said as one clause. The brief (brief.py) lays them out."""

from __future__ import annotations

import re
from collections.abc import Callable

from .results import GraphEdge

RULE_KEY_WORDS = 4  # a rule reworded later opens with the same words: "write JSDoc comments for all exported ..."


# the words a want opens with say nothing of which rule it is ("I only want 1 object ...", "I only want 1 vendor field")
_WANT_WORDS = frozenset(
    {"i", "we", "only", "just", "really", "want", "need", "would", "like", "to", "don", "t", "dont"}
)


def rule_key(name: str) -> str:
    """What tells one rule from another: its first words, past the words a want opens with."""
    words = re.findall(r"[^\W_]+", name.lower())
    start = 0
    while start < len(words) - RULE_KEY_WORDS and words[start] in _WANT_WORDS:
        start += 1
    return " ".join(words[start : start + RULE_KEY_WORDS])


_LABEL = re.compile(r"^([^:;]{2,20}): (?=\S)")  # "MCP: brightdata", "instructions: AGENTS.md", "AL code: ..."


def folded(rules: list[tuple[str, GraphEdge]]) -> list[tuple[str, GraphEdge]]:
    """Rules under one label as one clause, in the place of the first ("MCP: brightdata, sequential
    thinking"; "instructions: AGENTS.md, CLAUDE.md"): the label is said once."""
    out: list[tuple[str, GraphEdge]] = []
    where: dict[str, int] = {}
    for name, g in rules:
        m = _LABEL.match(name)
        label = m.group(1).lower() if m is not None else ""
        if label and label in where:
            i = where[label]
            first, edge = out[i]
            newest = g if g.edge.event_time > edge.edge.event_time else edge
            out[i] = (f"{first}, {name[m.end() :]}", newest)
            continue
        if label:
            where[label] = len(out)
        out.append((name, g))
    return out


def ranked_rules(
    edges: list[GraphEdge], refs: dict, newest: Callable[[list[GraphEdge]], GraphEdge], limit: int
) -> list[tuple[str, GraphEdge]]:
    """Conventions, most often stated first (each session that states one again adds an edge),
    then newest, then shorter (more fit): a file's long list of rules cannot all be shown. A rule
    reworded (its first words the same) is one rule, in its newest wording (`newest`: the brief's
    choice of an edge among several, the same everywhere)."""
    by_key: dict[str, list[GraphEdge]] = {}
    for g in edges:
        if g.target in refs:
            by_key.setdefault(rule_key(refs[g.target].name), []).append(g)

    def stated(gs: list[GraphEdge]) -> int:  # how often its most stated wording was (rewording adds none)
        return max(sum(1 for g in gs if g.target == target) for target in {g.target for g in gs})

    ranked = sorted(
        by_key.values(),
        key=lambda gs: (
            -stated(gs),
            -round(newest(gs).edge.event_time / 3600),
            len(refs[newest(gs).target].name),
            refs[newest(gs).target].name,
        ),
    )
    return folded([(refs[newest(gs).target].name, newest(gs)) for gs in ranked[:limit]])
