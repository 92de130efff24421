"""The one-line work event of a turn, written from its facts, and the event's importance.

"Edited 3 files under backend/store and ran pytest: 12 passed, 1 failed". Files under the
session's root are named relative to it, others by their base name; long lists collapse to a
count and the folder they share.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ..model import TurnFacts
from .patterns import first_sentence

MAX_SUMMARY = 240


def _shown(path: str) -> str:
    return posixpath.basename(path) if path.startswith("/") else path


def _common_folder(paths: Sequence[str]) -> str:
    folders = [posixpath.dirname(p) for p in paths]
    if not folders or any(f == "" for f in folders):
        return ""
    try:
        common = posixpath.commonpath(folders)
    except ValueError:
        return ""
    return "" if common in ("", "/", ".") else common


def files_phrase(verb: str, paths: Sequence[str]) -> str:
    """`edited a.py`, `edited a.py and b.py`, `edited 3 files under backend/store`."""
    paths = list(dict.fromkeys(paths))
    if not paths:
        return ""
    if len(paths) == 1:
        return f"{verb} {_shown(paths[0])}"
    if len(paths) == 2 and sum(len(_shown(p)) for p in paths) <= 70:
        return f"{verb} {_shown(paths[0])} and {_shown(paths[1])}"
    common = _common_folder([p for p in paths if not p.startswith("/")] or paths)
    if common and all(p.startswith(common + "/") for p in paths):
        return f"{verb} {len(paths)} files under {_shown(common) if common.startswith('/') else common}"
    tops = list(dict.fromkeys(p.split("/", 1)[0] if "/" in p and not p.startswith("/") else "" for p in paths))
    named = [t for t in tops if t]
    if named and len(named) <= 3 and "" not in tops:
        return f"{verb} {len(paths)} files in {_and(named)}"
    return f"{verb} {len(paths)} files"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _quoted(items: Sequence[str], limit: int = 3, width: int = 48) -> str:
    shown = []
    for item in list(dict.fromkeys(items))[:limit]:
        text = " ".join(item.split())
        shown.append('"' + (text if len(text) <= width else text[: width - 1] + "…") + '"')
    more = len(set(items)) - len(shown)
    return ", ".join(shown) + f" and {more} more" if more > 0 else _and(shown)


def _runs(facts: TurnFacts) -> str:
    programs = list(facts.programs)
    if not programs:
        return ""
    shown = programs[:3]
    text = "ran " + _and(shown) + (f" and {len(programs) - 3} more" if len(programs) > 3 else "")
    if facts.tests:
        text += f": {facts.tests}"
    elif facts.errors:
        text += f" (failed: {facts.errors[0][:60]})"
    elif facts.fixed:
        text += f" (fixed: {facts.fixed[0][:60]})"
    return text


def _moves(moved: Sequence[str]) -> str:
    pairs = [m.split(" -> ", 1) for m in moved if " -> " in m]
    if not pairs:
        return ""
    if len(pairs) == 1:
        return f"moved {_shown(pairs[0][0])} to {_shown(pairs[0][1])}"
    return f"moved {len(pairs)} files"


_ACK = re.compile(
    r"^(?:ok(?:ay)?|k|yes|yep|yeah|no|nope|sure|thanks?(?: you)?|thx|good|great|nice|cool|perfect|done|lgtm|"
    r"go(?: ahead| on)?|continue|proceed|do it|sounds good|looks good|right|correct|exactly|please|hi|hello)\b",
    re.IGNORECASE,
)


_ACK_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|yes|yep|yeah|sure|thanks?(?: you)?|thx|good|great|nice|cool|perfect|done|lgtm|right|"
    r"correct|exactly|awesome|excellent|alright|all right)\b[\s.!,;:-]*)+",
    re.IGNORECASE,
)


def without_ack(request: str) -> str:
    """A request without its leading "Good." / "Thanks, ": what it then asks is what it says."""
    rest = _ACK_LEAD.sub("", request.strip(), count=1)
    return rest if rest else request


def worth_recording(request: str) -> bool:
    """A request with no tool work is an event only when it says something: not "Good.", "ok, go on"."""
    words = re.findall(r"[\w'./-]+", request)
    if len(words) < 4:
        return False
    return not (len(words) < 7 and _ACK.match(request.strip()))


def work_parts(facts: TurnFacts) -> list[str]:
    parts = [
        files_phrase("edited", [p for p in facts.edited if p not in facts.created]),
        files_phrase("created", facts.created),
        files_phrase("deleted", facts.deleted),
        _moves(facts.moved),
        _runs(facts),
        ("installed " + _and(list(facts.installed)[:3])) if facts.installed else "",
        ("committed " + _and([c[:7] for c in facts.commits][:3])) if facts.commits else "",
        files_phrase("read", [p for p in facts.read if p not in facts.edited]),
    ]
    code_searches = [s for s in facts.searches if not s.startswith("web:")]
    web_searches = [s[4:] for s in facts.searches if s.startswith("web:")]
    if code_searches:
        parts.append("searched for " + _quoted(code_searches))
    if web_searches:
        parts.append("searched the web for " + _quoted(web_searches, limit=2, width=80))
    if facts.urls:
        hosts = [u.split("://", 1)[-1] for u in facts.urls]
        parts.append("fetched " + _and([h if len(h) <= 60 else h[:59] + "…" for h in hosts[:2]]))
    return [p for p in parts if p]


def work_summary(facts: TurnFacts, reply: str = "", *, said: bool = False) -> str:
    """The turn's work event; "" when there is nothing worth recording. `said`: the turn's text
    gave a decision, a learning or a fact of its own, which then tells the turn alone."""
    parts = work_parts(facts)
    if parts:
        text = _and(parts)
        text = text[0].upper() + text[1:]
    elif said:
        return ""
    elif facts.request:
        request = without_ack(facts.request)
        if not worth_recording(request):
            return ""
        sentence = first_sentence(request[0].upper() + request[1:], 120)
        text = ("Asked: " if sentence.rstrip().endswith("?") else "Discussed: ") + sentence
    elif reply and worth_recording(reply):
        text = "Answered: " + first_sentence(reply, 120)
    else:
        return ""
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1].rstrip() + "…"


def work_importance(facts: TurnFacts) -> float:
    score = 0.3
    if facts.edited or facts.created or facts.deleted:
        score += 0.15 + min(0.1, 0.02 * (len(facts.edited) + len(facts.created)))
    if facts.tests:
        score += 0.1
    if facts.errors or facts.fixed or "failed" in facts.tests:
        score += 0.1
    if facts.commits:
        score += 0.15
    if facts.installed:
        score += 0.05
    if not (facts.edited or facts.created or facts.programs or facts.commits):
        score -= 0.1
    return round(min(0.9, max(0.1, score)), 3)
