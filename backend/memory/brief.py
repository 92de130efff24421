"""A project's brief: the lines core.md leads with (ARCHITECTURE.md §5, §7).

From the knowledge edges the distiller wrote from the project entity (distill/extract/knowledge/)
and the user's global ones, current values only (a replaced technology shows as "(was X)" beside
what replaced it, never as current), in this order (PARTS):
    · stack: Python 3.11, Django, PostgreSQL, Celery            (language and version, frameworks, data stores)
    · tools: pytest (was nose), Ruff, Poetry, Docker             (test and lint tools, package manager, infra)
    · run: make dev · test: pytest -q · lint: ruff check         (commands as typed, no plumbing)
    · conventions: always write docstrings; no debug prints left in   (short clauses)
    · preferences: Python: use f-strings, not format()          (the user's, for every project)
    · decided 2026-11-29: Vitest replaces Jest as test framework
    · state: tests failing: 3 failed (2026-11-28) · open problem: ...
    · env: DATABASE_URL, REDIS_URL · endpoints: GET /api/items · ports: :8000
    · layout: hexagonal layout · API: services/api · worker: services/worker
    · pending: backfill old rows; document the API · done: add the migration
Each line carries the session of its newest fact. Which lines are taken when 2 KB cannot hold
them all goes by importance (the layout in core.py); they are shown in part order. The relations
and their labels, parts and importance: memory/relations.py. Everything else stays in the graph
(memory_graph_neighbors(project), `opmem graph`).
"""

from __future__ import annotations

import re
from itertools import zip_longest

from . import relations
from .brief_history import decision_lines, fix_edges, fix_lines
from .brief_line import BriefLine, day, newest
from .brief_rules import ranked_rules
from .records import GLOBAL, entity_id, project_scope
from .results import GraphEdge
from .store import MemoryStore

CATEGORY_ORDER = relations.CATEGORY_ORDER
SLOTS = relations.SLOT_RELATIONS
SWITCH_SLOTS = relations.SWITCH_RELATIONS  # filled only by a switch the user states
COMMAND_KINDS = relations.COMMAND_KINDS
STATUS_KINDS = relations.STATUS_KINDS
BRIEF_RELATIONS = relations.BRIEF_RELATIONS
STACK_ITEMS = 18
TOOLS_FROM = "test-framework"  # from here on (test and lint tools, package manager, build, infra): the tools line
CONVENTIONS = 30
GROUP_CHARS = 400  # a line of clauses ("· conventions: a; b; c") takes them while they fit


# the parts of a brief, in the order it states them


is_brief_relation = relations.in_brief


# the bulk of a coding project's edges, none of them the brief's: left in the database, not read and dropped
_NOT_BRIEF = tuple(sorted(relations.names(brief=False)))


def _project_edges(memory: MemoryStore, project_id: str) -> tuple[str, list[GraphEdge]]:
    subject = entity_id("project", project_id)
    edges = memory.edges(
        scope=project_scope(project_id), include_superseded=True, limit=None, exclude_relations=_NOT_BRIEF
    )
    return subject, [g for g in edges if g.edge.from_id == subject and is_brief_relation(g.relation)]


def project_brief(memory: MemoryStore, project_id: str) -> list[BriefLine]:
    _, edges = _project_edges(memory, project_id)
    scope = project_scope(project_id)
    fixes = fix_edges(memory, scope)
    lines = _brief_from(memory, edges, fixed_at=max((g.edge.event_time for g in fixes), default=0.0))
    lines += decision_lines(memory, scope)
    lines += fix_lines(memory, fixes)
    languages = {
        g.target
        for g in edges
        if g.relation == "uses" and g.edge.superseded_by is None and _category(memory, g.target) == "language"
    }
    names = {ref.name for ref in memory.entity_refs(languages).values()}
    lines += preference_lines(memory, limit=PROJECT_PREFERENCES, importance=0.55, languages=names)
    return sorted(lines, key=lambda line: -line.importance)


PREFERENCE_RELATIONS = relations.PREFERENCE_RELATIONS  # the user's, in the global scope: preference lines


def global_brief(memory: MemoryStore) -> list[BriefLine]:
    return preference_lines(memory, limit=12, importance=0.9)


PROJECT_PREFERENCES = 4


def preference_lines(
    memory: MemoryStore, *, limit: int, importance: float, languages: set[str] | None = None
) -> list[BriefLine]:
    """The user's preferences for every project; with `languages` (a project's brief), those for
    one language's projects only when the project uses that language."""
    user = entity_id("person", "user")
    edges = [
        g
        for g in memory.edges(scope=GLOBAL, relations=sorted(PREFERENCE_RELATIONS), limit=200)
        if g.edge.from_id == user and g.edge.scope == GLOBAL
    ]
    edges.sort(key=lambda g: -g.edge.event_time)
    names = memory.entity_refs({g.target for g in edges})
    items = []
    for g in edges:
        ref = names.get(g.target)
        language = _language_of(memory, g.target) if languages is not None else ""
        if language and language not in languages:
            continue  # "Python: use f-strings" is not for a Go project
        if ref is not None and len(items) < limit:
            row = relations.relation(g.relation)
            what = ref.name if g.relation == "convention" else f"{row.label if row else g.relation}: {ref.name}"
            items.append((what, g))
    return grouped("preferences", items, importance, "preference")


def _language_of(memory: MemoryStore, eid: str) -> str:
    entity = memory.entity_by_id(eid)
    return str(entity.attrs.get("language", "")) if entity is not None else ""


def grouped(
    label: str, items: list[tuple[str, GraphEdge]], importance: float, part: str, cut: float = 0.0
) -> list[BriefLine]:
    """Short items as few lines as fit (`· conventions: a; b; c`), newest first; each line points
    at the session of its newest item. With `cut`, each line is also offered cut to its first
    items at that importance, for a block with room for part of one."""
    chunks: list[list[tuple[str, GraphEdge]]] = []
    chunk: list[tuple[str, GraphEdge]] = []
    for name, g in items:
        if any(name == n for n, _ in chunk):
            continue
        if chunk and len("; ".join(n for n, _ in [*chunk, (name, g)])) > GROUP_CHARS:
            chunks.append(chunk)
            chunk = []
        chunk.append((name, g))
    chunks += [chunk] if chunk else []
    out = [_group_line(label, c, importance - 0.02 * i, part) for i, c in enumerate(chunks)]
    if cut:
        out += [_group_line(label, c[:k], cut, part) for c in chunks for k in range(len(c) - 1, 0, -1)]
    return out


def _group_line(label: str, chunk: list[tuple[str, GraphEdge]], importance: float, part: str) -> BriefLine:
    text = f"· {label}: " + "; ".join(n for n, _ in chunk)
    return BriefLine(text, newest(g for _, g in chunk).edge.provenance.session_id, importance, part)


def _brief_from(memory: MemoryStore, edges: list[GraphEdge], *, fixed_at: float = 0.0) -> list[BriefLine]:
    current = [g for g in edges if g.edge.superseded_by is None]
    retired = [g for g in edges if g.edge.superseded_by is not None]
    refs = memory.entity_refs({g.target for g in edges})
    by_rel: dict[str, list[GraphEdge]] = {}
    for g in current:
        by_rel.setdefault(g.relation, []).append(g)
    out: list[BriefLine] = []
    stack = _stack(memory, by_rel, retired, refs)
    out += stack
    out += _commands(by_rel, refs)
    state = _state(by_rel, refs, fixed_at)
    out += state
    rules = ranked_rules(by_rel.get("convention", []), refs, newest, CONVENTIONS)
    out += grouped("conventions", rules, 0.85, "convention", cut=0.3)
    shown = " ".join(line.text for line in stack)
    drops = [g for g in by_rel.get("dropped", []) if g.target in refs and refs[g.target].name not in shown]
    if drops:
        names = ", ".join(dict.fromkeys(refs[g.target].name for g in sorted(drops, key=lambda g: -g.edge.event_time)))
        out.append(BriefLine(f"· dropped: {names}", newest(drops).edge.provenance.session_id, 0.5, "decision"))
    where = _where(by_rel, refs)
    if where is not None:
        out.append(where)
    layout = _layout(by_rel, refs)
    if layout is not None:
        out.append(layout)
    out += _with_checks(state, _progress(by_rel, refs), out)
    return out


PIECES_CHARS = 180  # a layout or progress line takes its newest items while they fit
PROGRESS_ITEMS = 10
PROGRESS_CHARS = 150  # of each of done and pending


def _take(names: list[str], sep: str, size: int = PIECES_CHARS) -> list[str]:
    taken: list[str] = []
    for name in names:
        if taken and len(sep.join([*taken, name])) > size:
            break
        taken.append(name)
    return taken


def _layout(by_rel: dict[str, list[GraphEdge]], refs: dict) -> BriefLine | None:
    """The architecture stated, and where each part lives (the newest place said for each)."""
    styles = sorted((g for g in by_rel.get("architecture", []) if g.target in refs), key=lambda g: -g.edge.event_time)
    parts: dict[str, GraphEdge] = {}
    for g in sorted(by_rel.get("component", []), key=lambda g: -g.edge.event_time):
        if g.target in refs:
            parts.setdefault(refs[g.target].name.split(":", 1)[0].strip().lower(), g)  # newest per part
    used = styles[:2] + list(parts.values())[:6]
    if not used:
        return None
    names = _take(list(dict.fromkeys(refs[g.target].name for g in used)), " · ")
    return BriefLine("· layout: " + " · ".join(names), newest(used).edge.provenance.session_id, 0.7, "layout")


def _progress(by_rel: dict[str, list[GraphEdge]], refs: dict) -> list[BriefLine]:
    """What the sessions said is still to do, and what they said is done, newest first; a task
    said done after it was said pending is done (and the other way round)."""
    latest: dict[str, tuple[float, bool, GraphEdge]] = {}
    for relation, done in (("task-pending", False), ("task-done", True)):
        for g in by_rel.get(relation, []):
            if g.target not in refs:
                continue
            key = (g.edge.event_time, done)  # the same moment: done wins
            if g.target not in latest or key > latest[g.target][:2]:
                latest[g.target] = (g.edge.event_time, done, g)
    parts: list[tuple[str, list[str], list[GraphEdge]]] = []
    for done, label in ((True, "done"), (False, "pending")):
        said = sorted((g for t, d, g in latest.values() if d is done), key=lambda g: (-g.edge.event_time, -g.written))
        gs = _by_session(said)[:PROGRESS_ITEMS]
        names = _take(list(dict.fromkeys(_short(_topic(refs[g.target].name)) for g in gs)), "; ", PROGRESS_CHARS)
        if names:
            parts.append((label, names, gs))
    if not parts:
        return []
    # one line, "· done: A; B · pending: C" (one pointer, at the newest), then the same line cut
    # after an item, for a block with no room for the whole of it (what is pending is cut first)
    used = [g for _, _, gs in parts for g in gs]
    cuts = [[len(names) for _, names, _ in parts]]
    for i in range(len(parts) - 1, -1, -1):
        for n in range(len(parts[i][1]) - 1, -1 if i else 0, -1):
            cuts.append([*cuts[0][:i], n])
    out = []
    for rank, cut in enumerate(cuts):
        pieces = [f"{label}: " + "; ".join(names[:n]) for (label, names, _), n in zip(parts, cut, strict=False) if n]
        text = "· " + " · ".join(pieces)
        out.append(BriefLine(text, newest(used).edge.provenance.session_id, 0.74 if rank == 0 else 0.66, "progress"))
    return out


def _with_checks(state: list[BriefLine], progress: list[BriefLine], out: list[BriefLine]) -> list[BriefLine]:
    """A passing checks line leads the progress line ("· state: tests passing (date) · done: A ·
    pending: B"): one pointer for both; cut after an item down to the checks alone, the surest part."""
    checks = next((line for line in state if line.text.startswith("· state: ") and line.importance < 0.9), None)
    if checks is None or not progress:
        return progress
    out.remove(checks)
    joined = [f"{checks.text} · {line.text[2:]}" for line in progress]
    return [
        BriefLine(joined[0], progress[0].session_id, progress[0].importance, "progress"),
        *(BriefLine(text, progress[0].session_id, checks.importance, "progress") for text in joined[1:]),
        checks,
    ]


_LEAD = re.compile(r"^(?P<head>[^:;,.!?]{3,60}?)(?::\s|\s[-–—]\s)(?P<rest>.+)$")


def _topic(task: str) -> str:
    """A task said as "Topic: what was done about it" (a summary's bullet) by its topic, when the
    explanation is a sentence of its own: more tasks fit a line, and the session tells the rest."""
    m = _LEAD.match(task)
    if m is None or not 1 <= len(m.group("head").split()) <= 6 or len(m.group("rest").split()) < 4:
        return task
    return m.group("head").strip()


TASK_SHOWN = 50
_TASK_BREAK = re.compile(r",\s|;\s|\s[-–—]\s|:\s|\s\(")


def _short(task: str) -> str:
    """A task by its first clause when it is long ("I moved the docs into a tidy docs/ tree, recorded
    the change, ..." is "I moved the docs into a tidy docs/ tree"): more tasks fit a line."""
    if len(task) <= TASK_SHOWN:
        return task
    cut = next((m.start() for m in _TASK_BREAK.finditer(task) if 12 <= m.start() <= TASK_SHOWN), 0)
    return task[:cut] if cut else _cut(task, TASK_SHOWN)


def _by_session(edges: list[GraphEdge]) -> list[GraphEdge]:
    """Newest first, one from each session before a second from any: a project's progress is what
    each session got done, not the newest session's whole checklist. Within a session the surest
    first (the work a heading announced finished, the user's word), then newest."""
    sessions: dict[str, list[GraphEdge]] = {}
    for g in edges:
        sessions.setdefault(g.edge.provenance.session_id, []).append(g)
    rows = [sorted(gs, key=lambda g: -round(g.confidence, 2)) for gs in sessions.values()]
    return [g for row in zip_longest(*rows) for g in row if g is not None]


def _stack(
    memory: MemoryStore, by_rel: dict[str, list[GraphEdge]], retired: list[GraphEdge], refs: dict
) -> list[BriefLine]:
    """Current technologies by category (a slot's holder beside what it replaced), versions beside
    their language; a technology another value replaced in its slot since is left out."""
    slot_value = {rel: newest(gs) for rel, gs in by_rel.items() if rel in SLOTS}
    versions = {}
    for rel, gs in by_rel.items():
        if rel.endswith("-version") and newest(gs).target in refs:
            versions[rel[: -len("-version")]] = refs[newest(gs).target].name
    was: dict[str, str] = {}
    for g in sorted(retired, key=lambda g: -g.edge.event_time):
        holder = slot_value.get(g.relation)
        if holder is None and g.relation == "uses" and g.target in refs:  # retired by a switch of its kind
            category = _category(memory, g.target)
            holder = slot_value.get(category) if category in SWITCH_SLOTS else None
        if holder is not None and g.target != holder.target and g.target in refs:
            was.setdefault(holder.target, refs[g.target].name)
    stack: dict[str, tuple[int, float, str, GraphEdge]] = {}
    chosen = {g.target for g in by_rel.get("chose", [])}  # libraries the user picked; others are dependencies
    for g in by_rel.get("uses", []) + [g for rel in SLOTS for g in by_rel.get(rel, [])]:
        ref = refs.get(g.target)
        category = _category(memory, g.target) if ref is not None and ref.type == "tech" else ""
        if not category or (category == "library" and g.target not in chosen):
            continue
        holder = slot_value.get(category)
        if holder is not None and holder.target != g.target and holder.edge.event_time > g.edge.event_time:
            continue  # another value holds the slot since (one named at the same moment holds it too)
        rank = CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER else len(CATEGORY_ORDER)
        old = stack.get(g.target)
        if old is None or g.edge.event_time > old[3].edge.event_time:
            stack[g.target] = (rank, -g.confidence, ref.name, g)
    items = sorted(stack.values(), key=lambda item: (item[0], item[1], item[2]))[:STACK_ITEMS]
    out = []
    tools_from = CATEGORY_ORDER.index(TOOLS_FROM)
    libraries = CATEGORY_ORDER.index("library")
    app = [item for item in items if item[0] < tools_from or item[0] >= libraries]
    tools = [item for item in items if tools_from <= item[0] < libraries]
    for label, group, importance in (("stack", app, 1.0), ("tools", tools, 0.97)):
        if not group:
            continue
        parts = []
        for _, _, name, g in group:
            text = versions.get(_slug(name)) or name
            parts.append(text + (f" (was {was[g.target]})" if g.target in was else ""))
        latest = newest(g for *_, g in group)
        out.append(BriefLine(f"· {label}: " + ", ".join(parts), latest.edge.provenance.session_id, importance, "stack"))
    return out


def _commands(by_rel: dict[str, list[GraphEdge]], refs: dict) -> list[BriefLine]:
    """One line (or two) of `kind: command`, in the canonical order; what ran before what is given."""
    out: list[BriefLine] = []
    chunk: list[str] = []
    chunk_edges: list[GraphEdge] = []
    for kind in COMMAND_KINDS:
        ran = [g for g in by_rel.get(f"{kind}-command", []) if g.target in refs]
        given = [g for g in by_rel.get(f"{kind}-script", []) if g.target in refs]
        if not ran and not given:
            continue
        g = newest(ran) if ran else _most_given(given, refs)  # what ran last, else the way given most
        piece = f"{kind}: {refs[g.target].name}"
        if chunk and len(" · ".join([*chunk, piece])) > 150:
            out.append(_joined(chunk, chunk_edges, 0.95 - 0.001 * len(out)))
            chunk, chunk_edges = [], []
        chunk.append(piece)
        chunk_edges.append(g)
    other = _other_commands(by_rel, refs)
    if other is not None and chunk and len(" · ".join(chunk)) + len(other.text) <= COMMAND_LINE_CHARS:
        # one line and one pointer: `· test: pytest -q · other: pip install pytest-xdist`
        chunk.append(other.text.removeprefix("· "))
        chunk_edges.extend(other_edges(by_rel, refs))
        other = None
    if chunk:
        out.append(_joined(chunk, chunk_edges, 0.95 - 0.001 * len(out)))
    if other is not None:
        out.append(other)
    return out


COMMAND_LINE_CHARS = 220  # the kinds' line takes the other commands too while it stays this short


def other_edges(by_rel: dict[str, list[GraphEdge]], refs: dict) -> list[GraphEdge]:
    return [g for rel in ("other-command", "other-script") for g in by_rel.get(rel, []) if g.target in refs]


OTHER_COMMANDS = 5


def _other_commands(by_rel: dict[str, list[GraphEdge]], refs: dict) -> BriefLine | None:
    """Commands of no known kind (the rules take only those run, or given with a verb that says to
    type them), those that ran first, then by how many sessions used them, then newest."""
    counted: dict[str, tuple[int, int, float, GraphEdge]] = {}
    for rel, ran in (("other-command", 1), ("other-script", 0)):
        for g in by_rel.get(rel, []):
            if g.target not in refs:
                continue
            old = counted.get(g.target)
            n = (old[1] if old else 0) + 1
            counted[g.target] = (max(ran, old[0] if old else 0), n, max(g.edge.event_time, old[2] if old else 0.0), g)
    ranked = sorted(counted.values(), key=lambda item: (-item[0], -item[1], -item[2]))[:OTHER_COMMANDS]
    names = _take(list(dict.fromkeys(refs[item[3].target].name for item in ranked)), "; ")
    if not names:
        return None
    used = [item[3] for item in ranked]
    return BriefLine("· other: " + "; ".join(names), newest(used).edge.provenance.session_id, 0.8, "command")


def _most_given(edges: list[GraphEdge], refs: dict) -> GraphEdge:
    """Of the commands given for one kind, the newest of the program most often given (`docker compose
    up -d`, `docker compose up --build` and `docker compose up` outnumber one `docker-compose up bot`)."""
    families: dict[str, list[GraphEdge]] = {}
    for g in edges:
        families.setdefault(" ".join(refs[g.target].name.split()[:2]), []).append(g)
    family = max(families.values(), key=lambda gs: (len(gs), newest(gs).edge.event_time))
    return newest(family)


def _state(by_rel: dict[str, list[GraphEdge]], refs: dict, fixed_at: float = 0.0) -> list[BriefLine]:
    """The latest outcome of each checked kind (failing first), and the problems the user
    reported since the last passing check or the last fix (an error seen, then gone), less those
    that name a command which ran successfully since ("mix phx.server doesn't start", then it ran)."""
    out: list[BriefLine] = []
    states = []
    passed_at = fixed_at
    for kind in STATUS_KINDS:
        gs = by_rel.get(f"{kind}-status")
        if gs and newest(gs).target in refs:
            g = newest(gs)
            name = refs[g.target].name
            if "passing" in name:
                passed_at = max(passed_at, g.edge.event_time)
            states.append(("failing" not in name, f"{name} ({day(g.edge.event_time)})", g))
    if states:
        states.sort(key=lambda item: item[0])
        failing = not states[0][0]
        text = "· state: " + " · ".join(item[1] for item in states)
        out.append(
            BriefLine(text, newest(item[2] for item in states).edge.provenance.session_id, 0.9 if failing else 0.7)
        )
    ran_since = [  # (when, command) the project ran successfully: "mix phx.server doesn't start", then it did
        (g.edge.event_time, refs[g.target].name.lower())
        for rel, gs in by_rel.items()
        if rel.endswith("-command")
        for g in gs
        if g.target in refs
    ]

    done_since = [  # (when, task) said done: "Fixed the "JSON tokens ... not supported" error"
        (g.edge.event_time, refs[g.target].name.lower()) for g in by_rel.get("task-done", []) if g.target in refs
    ]

    def still_open(g: GraphEdge) -> bool:
        said = refs[g.target].name.lower()
        if any(t >= g.edge.event_time and said.rstrip(".…")[:40] in task for t, task in done_since):
            return False
        return not any(t > g.edge.event_time and len(cmd) > 3 and cmd in said for t, cmd in ran_since)

    problems = list(
        {
            refs[g.target].name.lower(): g  # said again in a later session: once, its newest
            for g in sorted(by_rel.get("has-problem", []), key=lambda g: g.edge.event_time)
            if g.edge.event_time > passed_at and g.target in refs and still_open(g)
        }.values()
    )
    # an error message quoted (surer) before a problem said in a sentence, then newest first
    problems.sort(key=lambda g: (-g.confidence, -g.edge.event_time))
    said = [f"{_cut(refs[g.target].name, PROBLEM_SHOWN)} ({day(g.edge.event_time)})" for g in problems[:OPEN_PROBLEMS]]
    for n in range(len(said), 0, -1):  # one line; cut after a problem for a block with no room for all
        text = "· open problem: " + "; ".join(said[:n])
        out.append(BriefLine(text, newest(problems[:n]).edge.provenance.session_id, 0.88 - (len(said) - n) * 0.01))
    return out


OPEN_PROBLEMS = 3
PROBLEM_SHOWN = 120  # characters of a problem's words: the session has the rest


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _where(by_rel: dict[str, list[GraphEdge]], refs: dict) -> BriefLine | None:
    """Environment variable names, endpoints and ports, newest first."""
    pieces = []
    where: list[GraphEdge] = []
    for rel, label, limit in (("env-var", "env", 8), ("endpoint", "endpoints", 6), ("exposes", "ports", 4)):
        gs = sorted(by_rel.get(rel, []), key=lambda g: -g.edge.event_time)[:limit]
        names = [refs[g.target].name for g in gs if g.target in refs]
        if names:
            pieces.append(f"{label}: " + ", ".join(dict.fromkeys(names)))
            where += gs
    if not pieces:
        return None
    return BriefLine("· " + " · ".join(pieces), newest(where).edge.provenance.session_id, 0.65, "environment")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _joined(chunk: list[str], edges: list[GraphEdge], importance: float) -> BriefLine:
    return BriefLine("· " + " · ".join(chunk), newest(edges).edge.provenance.session_id, importance, "command")


def _category(memory: MemoryStore, eid: str) -> str:
    entity = memory.entity_by_id(eid)
    return str(entity.attrs.get("category", "")) if entity is not None else ""
