"""core.md: the compact memory block agents always get back (ARCHITECTURE.md §7).

One renderer, used for the files and by `opmem core`:
    render_core(memory, consolidated, project_id="", project_name="") -> str
    write_core(memory, consolidated, project_id="", project_name="") -> Path   atomic, only if changed
    write_cores(memory, consolidated, project_names={}) -> list[Path]   global + every project scope
    core_path(memory_root, project_id="") -> Path   memory/core.md or memory/projects/<id>/core.md
    compose_core(...) -> str   the pure layout step (budget, pointers), given the candidate lines

The block, rule lines included, is at most CORE_BUDGET (2,048) bytes of UTF-8 whatever the
memory holds, and every content line ends with `↪ session:<id>`: a record without a valid
session id has no pointer and is left out. Given every session id the store holds, a pointer
names its session by the shortest unique prefix of its id (backend/session_pointers; a 60-byte
SpecStory id becomes `specstory-b7eb0f5d`), and the bytes go to facts. What goes in:
  - [Timeline · recent]: events ranked by importance x recency, recency halving every
    HALF_LIFE_DAYS (14) before the consolidation date; an importance-1 event of two weeks ago
    ranks with an importance-0.5 event of that day. Shown newest first.
  - [Graph · current project] ([Graph · global] in the global core): current knowledge edges
    with confidence >= MIN_CONFIDENCE (0.7) (listens-on, depends-on, prefers, fixed-by, ...; not
    activity: edited, read, ran, part-of, ... which the timeline tells), by confidence, then newest.
  A project's brief (stack, commands, conventions, decisions, state) takes the room it needs first;
  of what it leaves the timeline gets the first 55%, the graph the rest, the timeline what is left.
  These numbers were chosen by reading cores, not fitted to any benchmark.
A project core shows the project's records plus global ones; the global core global ones only
(the scope rule of §5). Output depends only on the memory and the consolidation date given.
Text from sessions is untrusted: escapes and control/format characters are stripped, lines
are cut to a width, and `↪` inside text is replaced so a summary cannot fake a pointer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from ..model import SESSION_ID_RE
from ..safe_text import plain
from ..session_pointers import short_session_ids
from ..store.files import write_atomic
from . import relations
from .brief import BRIEF_RELATIONS, PREFERENCE_RELATIONS, global_brief, is_brief_relation, project_brief
from .records import GLOBAL, entity_id, project_scope
from .slugs import safe_name
from .store import MemoryStore

CORE_BUDGET = 2048
RULE = "═" * 47
HALF_LIFE_DAYS = 14.0
MIN_CONFIDENCE = 0.7
TIMELINE_SHARE = 0.55
BRIEF_SHARE = 1.0  # the facts first (the order): recent work gets only what they leave
EVENT_CANDIDATES = 40
FACT_CANDIDATES = 60
SUMMARY_CHARS = 100
NAME_CHARS = 40
LINE_CHARS = SUMMARY_CHARS + 2 * NAME_CHARS + 20
BRIEF_LINE_CHARS = 420  # a brief line groups short items under one pointer (brief.GROUP_CHARS)
# What a session did (the timeline tells it) rather than what is known: after every fact in
# core.md, folded one row per kind in the graph explorer.
ACTIVITY_RELATIONS = relations.ACTIVITY_RELATIONS
# events that quote what was said rather than tell what was done
QUOTED = ("Discussed: ", "Asked: ", "Answered: ")
_SPACE = re.compile(r"\s+")
_DROPPED = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class CoreLine:
    """One candidate content line: its text (cleaned) and the session its pointer names."""

    text: str
    session_id: str
    order: float = 0.0  # display order within its section, highest first

    def render(self) -> str:
        return f"{self.text}  ↪ session:{self.session_id}"


def clean(text: str, limit: int) -> str:
    """Untrusted text as one short plain line: no escapes, controls, format marks or line breaks."""
    text = plain(text or "")
    if not (text.isascii() and text.isprintable()):  # printable ASCII has none of the categories below
        text = "".join(ch for ch in text if unicodedata.category(ch) not in _DROPPED)
    text = _SPACE.sub(" ", text).strip().replace("↪", "→")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _nbytes(line: str) -> int:
    return len(line.encode("utf-8")) + 1  # with its "\n"


def compose_core(
    title: str,
    consolidated: date,
    events: Sequence[CoreLine],
    facts: Sequence[CoreLine],
    *,
    graph_label: str = "[Graph · current project]",
    hint: str = "For details: memory_open_session(<id>) / memory_git_log(<project>)",
    budget: int = CORE_BUDGET,
    brief: Sequence[CoreLine] = (),
    brief_label: str = "",
    sessions: Collection[str] | None = None,
) -> str:
    """Lay out the block within `budget` bytes; candidates come in rank order, best first (a
    brief line's `order` places it: stack, commands, conventions, decisions, state, ...).

    `brief` (the project's stack, commands, conventions, state, decisions; best first) leads,
    under `brief_label`, and gets up to BRIEF_SHARE of the room before the timeline and the graph
    share the rest; the section is left out when there is no brief line.

    `sessions`: every session id the store holds; a pointer then names its session by the
    shortest prefix unique among them (backend/session_pointers). None: pointers give whole ids."""
    header = (
        f"opmem memory · project: {clean(title, NAME_CHARS) or '(global)'}, last consolidated {consolidated:%Y-%m-%d}"
    )
    head = [RULE, header, RULE]
    brief_head = [clean(brief_label or "[Project]", NAME_CHARS + 20)] if brief else []
    timeline_head = ["[Timeline · recent]"]
    middle = [clean(graph_label, NAME_CHARS + 20)]
    bottom = [clean(hint, 120), RULE]
    fixed = sum(_nbytes(line) for line in (*head, *brief_head, *timeline_head, *middle, *bottom))
    if fixed > budget:
        raise ValueError(f"a core.md budget of {budget} bytes cannot hold its frame ({fixed} bytes)")
    room = budget - fixed
    named = {c.session_id for group in (brief, events, facts) for c in group}
    pointers = short_session_ids(named, sessions) if sessions is not None else {}
    seen: set[str] = set()
    chosen_brief: list[CoreLine] = []
    chosen_events: list[CoreLine] = []
    chosen_facts: list[CoreLine] = []
    used = _fill(brief, chosen_brief, seen, int(room * BRIEF_SHARE), pointers, BRIEF_LINE_CHARS) if brief else 0
    if brief and not chosen_brief:  # nothing fitted: the section's label goes too
        room += sum(_nbytes(line) for line in brief_head)
        brief_head = []
    used += _fill(events, chosen_events, seen, int((room - used) * TIMELINE_SHARE), pointers)
    used += _fill(facts, chosen_facts, seen, room - used, pointers)
    used += _fill(events, chosen_events, seen, room - used, pointers)
    _fill(brief, chosen_brief, seen, room - used, pointers, BRIEF_LINE_CHARS)
    chosen_brief.sort(key=lambda line: -line.order)
    chosen_events.sort(key=lambda line: -line.order)
    lines = [
        *head,
        *brief_head,
        *(c.render() for c in chosen_brief),
        *timeline_head,
        *(c.render() for c in chosen_events),
        *middle,
        *(c.render() for c in chosen_facts),
        *bottom,
    ]
    return "\n".join(lines) + "\n"


def _fill(
    candidates: Sequence[CoreLine],
    chosen: list[CoreLine],
    seen: set[str],
    room: int,
    pointers: Mapping[str, str],
    width: int = LINE_CHARS,
) -> int:
    """Take candidates in order while they fit in `room` bytes; returns the bytes taken. A
    chosen line names its session as `pointers` says (its short id)."""
    used = 0
    for candidate in candidates:
        text = clean(candidate.text, width)  # cleaned here too: the layout trusts no caller
        if not text or text in seen or not SESSION_ID_RE.fullmatch(candidate.session_id):
            continue
        if any(_variant(text, c.text) for c in chosen):
            continue  # a shorter line of the same items (brief.py offers one for a full block) is taken already
        line = CoreLine(text, pointers.get(candidate.session_id, candidate.session_id), candidate.order)
        size = _nbytes(line.render())
        if used + size > room:
            continue  # a shorter one further down may still fit
        seen.add(text)
        chosen.append(line)
        used += size
    return used


# -- candidates from the memory ------------------------------------------------------------------


def _variant(a: str, b: str) -> bool:
    """One line is the other cut after an item (`· done: X` and `· done: X; Y · pending: Z`)."""
    return any(b.startswith(a + sep) or a.startswith(b + sep) for sep in ("; ", " · "))


def _day_end(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() + _DAY - 1e-3


def event_lines(memory: MemoryStore, scope: str, consolidated: date) -> list[CoreLine]:
    """The EVENT_CANDIDATES best events by importance x recency, best first: a project's own (what
    a session of no project did, or a conversation's news, is no part of its story)."""
    lines = []
    for ev in memory.ranked_events(
        _day_end(consolidated), scope, half_life=HALF_LIFE_DAYS * _DAY, limit=EVENT_CANDIDATES, own_only=True
    ):
        if scope != GLOBAL and ev.summary.startswith(QUOTED):
            continue  # a project's recent work is what was done; a prompt quoted is in the session
        when = datetime.fromtimestamp(ev.event_time, UTC).date()
        lines.append(
            CoreLine(f"· {when:%Y-%m-%d} {clean(ev.summary, SUMMARY_CHARS)}", ev.provenance.session_id, ev.event_time)
        )
    return lines


def fact_lines(memory: MemoryStore, scope: str) -> list[CoreLine]:
    """Current high-confidence knowledge edges by confidence and recency; an error's `fails-with`
    is left out once a `fixed-by` says what fixed it. Activity (a session ran, read, edited, is part
    of a project, used a model) is not knowledge and the timeline tells it: never here."""
    ranked = []
    if scope == GLOBAL:  # the global brief states the user's preferences only: what else is known is told here
        user = entity_id("person", "user")
        kw = {"exclude_relations": ACTIVITY_RELATIONS}
        briefed = lambda g: g.edge.from_id == user and g.relation in PREFERENCE_RELATIONS  # noqa: E731
    else:
        kw = {"exclude_relations": ACTIVITY_RELATIONS | BRIEF_RELATIONS}
        briefed = lambda g: is_brief_relation(g.relation)  # noqa: E731  (a `*-version` edge)
    for g in memory.edges(scope=scope, min_confidence=MIN_CONFIDENCE, limit=FACT_CANDIDATES, own_only=True, **kw):
        if not briefed(g):  # else the brief says it
            ranked.append((-g.confidence, -g.edge.event_time, g.edge.id, g))
    if any(g.relation == "fails-with" for *_, g in ranked):  # an error since fixed is history, not a fact
        fixed: dict[str, float] = {}
        for g in memory.edges(scope=scope, relations=["fixed-by"], limit=FACT_CANDIDATES * 4):
            fixed[g.source] = max(fixed.get(g.source, 0.0), g.edge.event_time)
        passing = _tests_passing_since(memory, scope)
        ranked = [
            r
            for r in ranked
            if r[-1].relation != "fails-with"
            or (
                fixed.get(r[-1].target, -1.0) < r[-1].edge.event_time
                and not (r[-1].source.startswith("test.") and passing > r[-1].edge.event_time)
            )
        ]
    ranked.sort(key=lambda r: r[:3])
    names = memory.entity_refs({g.source for *_, g in ranked} | {g.target for *_, g in ranked})
    lines = []
    for *_, g in ranked:
        if g.relation == "uses" and names[g.target].type in ("tool", "model"):
            continue  # a session used a tool or a model: activity too
        src = clean(names[g.source].name, NAME_CHARS)
        dst = clean(names[g.target].name, NAME_CHARS)
        relation = clean(g.relation, NAME_CHARS)
        lines.append(CoreLine(f"· {src} ──{relation}──► {dst}", g.edge.provenance.session_id))
    return lines


def _tests_passing_since(memory: MemoryStore, scope: str) -> float:
    """When the project's tests were last seen passing, if that is their current state (else 0):
    a test's failure older than that is history."""
    current = [
        g for g in memory.edges(scope=scope, relations=["test-status"], limit=20) if g.edge.superseded_by is None
    ]
    names = memory.entity_refs({g.target for g in current})
    return max((g.edge.event_time for g in current if g.target in names and names[g.target].name == "tests passing"),
               default=0.0)  # fmt: skip


def _summary(line: CoreLine) -> str:
    """An event line's summary: what follows "· YYYY-MM-DD " (and a decision's "Decided: ")."""
    text = line.text[len("· 2026-01-01 ") :]
    for prefix in ("Decided: ", "Changed: "):
        text = text.removeprefix(prefix)
    return text


def render_core(
    memory: MemoryStore,
    consolidated: date,
    project_id: str = "",
    project_name: str = "",
    *,
    bound: bool = True,
    sessions: Collection[str] | None = None,
) -> str:
    """The core block for one project (its own records, and the user's global preferences in its
    brief) or, with no project, the global one. `bound`: the project is a bound git repository (a
    folder known from sessions only has no history, so its footer does not offer memory_git_log).
    `sessions`: every session id the store holds, for short pointers (compose_core)."""
    scope = project_scope(project_id) if project_id else GLOBAL
    if project_id and not project_name:  # a folder no project is bound to: named by its project entity
        subject = entity_id("project", project_id)
        ref = memory.entity_refs([subject]).get(subject)
        project_name = ref.name if ref is not None else ""
    if project_id:
        safe_id = project_id if SESSION_ID_RE.fullmatch(project_id) else "<project>"
        tool = f"memory_git_log({safe_id})" if bound else "memory_timeline()"
        hint = f"For details: memory_open_session(<id>) / {tool}"
        label, title = "[Graph · current project]", project_name or project_id
        brief = project_brief(memory, project_id)
        brief_label = f"[Project · {clean(title, NAME_CHARS)}]"
    else:
        hint = "For details: memory_open_session(<id>) / memory_search(query)"
        label, title = "[Graph · global]", "(global)"
        brief = global_brief(memory)
        brief_label = "[Preferences · global]"
    # an event the brief states already (a decision, a fix) is not said twice in 2 KB
    briefed = [line.text for line in brief]
    events = [e for e in event_lines(memory, scope, consolidated) if not any(_summary(e) in t for t in briefed)]
    return compose_core(
        title,
        consolidated,
        events,
        fact_lines(memory, scope),
        graph_label=label,
        hint=hint,
        brief=[CoreLine(line.text, line.session_id, line.order) for line in brief],
        brief_label=brief_label,
        sessions=sessions,
    )


def core_path(memory_root: Path, project_id: str = "") -> Path:
    if not project_id:
        return memory_root / "core.md"
    return memory_root / "projects" / safe_name(project_id) / "core.md"


def write_core(
    memory: MemoryStore,
    consolidated: date,
    project_id: str = "",
    project_name: str = "",
    *,
    bound: bool = True,
    sessions: Collection[str] | None = None,
) -> Path:
    """Regenerate one core.md whole (atomically); an unchanged file is left alone."""
    path = core_path(memory.root, project_id)
    data = render_core(memory, consolidated, project_id, project_name, bound=bound, sessions=sessions).encode("utf-8")
    try:
        if path.read_bytes() == data:
            return path
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data, durable=memory.durable)
    return path


def write_cores(
    memory: MemoryStore,
    consolidated: date,
    project_names: Mapping[str, str] | None = None,
    sessions: Collection[str] | None = None,
) -> list[Path]:
    """The global core and one per project: every project scope in the memory plus those named.
    `sessions`: every session id the store holds, for short pointers."""
    names = dict(project_names or {})
    known = None if sessions is None else frozenset(sessions)
    projects = {s.split(":", 1)[1] for s in memory.scopes() if s.startswith("project:")} | set(names)
    paths = [write_core(memory, consolidated, sessions=known)]
    paths.extend(
        write_core(memory, consolidated, pid, names.get(pid, ""), bound=pid in names, sessions=known)
        for pid in sorted(projects)
    )
    return paths


def consolidation_day(timestamp: float) -> date:
    """The UTC day of a run's time, for callers that consolidate now."""
    return datetime.fromtimestamp(timestamp, UTC).date()
