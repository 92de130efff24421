"""Decision and learning sentences, found by cue phrases ("let's use", "turns out", ...).

A user's message is read with the full list; an assistant's only with the strong cues, since
"I'll use grep to look" is a step, not a decision. Code blocks and quoted tool output are
skipped; an inline code span is kept as its plain text ("the fix is pushed as a1b2c3d"), never
cut out of the sentence that names it, nor split at a dot inside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .caseless import Caseless

_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_SPAN = re.compile(r"`([^`\n]*)`")
_HELD = re.compile(r"\x00(\d+)\x00")
# a stop ends a sentence only before a blank or the end: "2.0", "main.rs", "e.g." stay whole
# (atomic: a line that never ends with a stop is no sentence, rather than one cut at "2." of "2.0")
_SENTENCE = re.compile(r"[^.!?\n]++(?>(?:[.!?]+(?=[^\s.!?])[^.!?\n]*+)*)(?:[.!?]+|$)")

DECISION_STRONG = Caseless(
    re.compile(
        r"\b(?:(?:we|i)(?:'ve| have)? decided|decided (?:to|on|that|against)|decision(?: is|:)|we(?:'re| are) going with|"
        r"i(?:'m| am) going with|(?:we|i) (?:chose|opted|picked|settled on)|going forward,? (?:we|i)|from now on|"
        r"(?:we|i)(?:'ll| will) (?:go with|switch to|stick with|standardi[sz]e on))\b",
        re.IGNORECASE,
    )
)
DECISION_USER = Caseless(
    re.compile(
        r"\b(?:let'?s (?:use|go with|switch to|keep|stick with|move to|drop|not|avoid|adopt|migrate to|replace)|"
        r"we should (?:use|switch|keep|move|drop|avoid|adopt|migrate)|(?:always|never) (?:use|run|commit|push|call)|"
        r"(?:don'?t|do not) (?:use|add|commit|push|touch|change)|use \S+ instead(?: of)?|instead of \S+,? use|"
        r"i (?:prefer|want (?:us|you) to use|'d rather)|prefer \S+ over)\b",
        re.IGNORECASE,
    )
)
LEARNING = Caseless(
    re.compile(
        r"\b(?:turns out|it turned out|(?:the )?root cause(?: is| was|:)|the (?:problem|issue|bug|culprit) (?:is|was)|"
        r"the fix (?:is|was)|(?:this|that|it) (?:happens|happened|fails|failed|breaks|broke) because|because of this|"
        r"(?:i|we) (?:learned|learnt|found out|discovered|realized|realised) that|\btil\b|gotcha|caveat|workaround|"
        r"the reason (?:is|was)|(?:does|do)(?:n't| not) support|is(?:n't| not) supported|only works (?:with|when|if)|"
        r"requires? (?:python|node|a |an |the )|must be (?:run|called|set)|watch out|important:|note:)",
        re.IGNORECASE,
    )
)
PREFERS = re.compile(r"\bi (?:prefer|like to use|always use|'d rather use)\s+([\w.+#-]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Cue:
    kind: str  # decision | learning
    sentence: str


def sentences(text: str) -> list[str]:
    spans: list[str] = []

    def hold(match: re.Match[str]) -> str:  # a span's dots do not end its sentence
        spans.append(" ".join(match.group(1).split()))
        return f"\x00{len(spans) - 1}\x00"

    cleaned = _SPAN.sub(hold, _FENCE.sub(" ", text)) if "`" in text else text
    out = []
    for match in _SENTENCE.finditer(cleaned):
        sentence = " ".join(match.group(0).split()).replace("**", "")  # markdown bold, not text
        if spans:
            sentence = _HELD.sub(lambda m: spans[int(m.group(1))] if int(m.group(1)) < len(spans) else "", sentence)
        sentence = sentence.strip(" -*#>•")
        if 12 <= len(sentence) <= 400:
            out.append(sentence)
    return out


# Substrings one of the cue patterns needs: most messages have none, and `in` is far cheaper
# than the patterns' case-blind alternations.
_TRIGGERS = (
    "decid", "decision", "going with", "chose", "opted", "picked", "settled", "from now on", "go with",
    "switch to", "stick with", "standardi", "going forward", "let's", "lets ", "we should", "always ",
    "never ", "don't", "dont ", "do not", "instead", "prefer", "rather", "turns out", "turned out",
    "root cause", "problem", "issue", "bug", "culprit", "the fix", "because", "learn", "found out",
    "discover", "realiz", "realis", "til", "gotcha", "caveat", "workaround", "reason", "support",
    "only works", "requir", "must be", "watch out", "important:", "note:",
)  # fmt: skip


# one search for them all: an alternation of literals is 2-4x cheaper than a loop of `in`
_TRIGGER = re.compile("|".join(re.escape(trigger) for trigger in _TRIGGERS))


def find_cues(text: str, *, from_user: bool, limit: int = 3) -> list[Cue]:
    if _TRIGGER.search(text.lower()) is None:
        return []
    if not (DECISION_STRONG.found(text) or LEARNING.found(text) or (from_user and DECISION_USER.found(text))):
        return []  # one pass over the whole text before any sentence split
    found: list[Cue] = []
    for sentence in sentences(text):
        if sentence.endswith("?"):
            continue
        if DECISION_STRONG.found(sentence) or (from_user and DECISION_USER.found(sentence)):
            found.append(Cue("decision", _trim(sentence)))
        elif LEARNING.found(sentence):
            found.append(Cue("learning", _trim(sentence)))
        if len(found) >= limit:
            break
    return found


def preference(sentence: str) -> str | None:
    match = PREFERS.search(sentence)
    return match.group(1).rstrip(".,;:") if match else None


def _trim(sentence: str, limit: int = 200) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"
