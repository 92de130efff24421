"""The conventions' part of the brief: which rules are one rule reworded, and rules under one
label said as one clause. The brief (brief.py) ranks them and lays them out."""

from __future__ import annotations

import re

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
