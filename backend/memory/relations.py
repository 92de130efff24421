"""The relations of a project's knowledge and of a session's activity, declared once (ARCHITECTURE.md §1, §5).

Each row says what a relation is to every layer that reads it: the extractors (which relations
they may write), reconcile and sleep (which hold one value at a time), the brief (which it shows,
under what label, in which part and how high), the LLM extractor's schema (the fact kinds,
command kinds and slot categories it may answer with) and core.md (what is activity, told by
the timeline, not a fact). `[distill] single_valued` in the config may make more relations single-valued (listens-on,
prefers, ...). A relation not in the table is a plain graph edge: shown in the
graph section of core.md when confident enough, never in the brief.

Families: `<tech>-version` (`python-version`) is a version slot, `<kind>-command`, `<kind>-script`
and `<kind>-status` one per command kind; `relation(name)` finds a family's row too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the brief's parts, in the order it states them (role -> base importance)
STACK = "stack"
COMMAND = "command"
CONVENTION_ROLE = "convention"
DECISION = "decision"
STATE = "state"
ENVIRONMENT = "environment"
LAYOUT = "layout"
PROGRESS = "progress"
ACTIVITY = "activity"  # what a session did: the timeline tells it; never a fact line
LINK = "link"  # a plain fact between entities (listens-on, fixed-by): the graph section shows it

# technology categories in the order the stack line names them, grouped by role: language and
# runtime, frameworks, data stores, libraries of the app, test and lint tools, package manager and
# build, infrastructure (libraries the user chose last)
CATEGORY_ORDER = (
    "language", "runtime", "platform", "web-framework", "meta-framework", "frontend-framework", "database", "orm",
    "migration-tool", "cache", "queue", "api", "css-framework", "ui-kit", "state-management", "http-client", "auth",
    "ai", "llm", "speech", "image", "integration", "sync", "concurrency", "di", "serialization", "logging", "cli",
    "error-handling", "ffi", "test-framework", "e2e-framework", "test-tool", "linter", "formatter", "import-sorter", "type-checker",
    "package-manager", "bundler", "infra", "library",
)  # fmt: skip
COMMAND_KINDS = ("run", "test", "build", "lint", "format", "typecheck", "migrate", "deploy")
STATUS_KINDS = ("test", "build", "typecheck", "lint")


@dataclass(frozen=True, slots=True)
class Relation:
    name: str
    single_valued: bool  # a new value supersedes the old one (reconcile, sleep)
    in_brief: bool  # the brief states it (so core.md's graph section does not)
    label: str  # the brief's word for it
    importance: float  # where its line falls when 2 KB cannot hold everything
    role: str  # which part of the brief (or activity / link)
    category: str = ""  # a slot: the technology category whose one value it holds
    switch: bool = False  # a slot filled only by a switch the user states (database, cache, queue)
    stack: bool = False  # an edge from a project to a technology it uses (retired when that is replaced)


def _slot(category: str, label: str, *, switch: bool = False) -> Relation:
    return Relation(category, True, True, label, 1.0, STACK, category=category, switch=switch, stack=True)


_SLOT_CATEGORIES = (
    "test-framework", "e2e-framework", "orm", "migration-tool", "package-manager", "web-framework",
    "frontend-framework", "css-framework", "bundler", "linter", "formatter", "type-checker", "state-management",
    "http-client",
)  # fmt: skip
_ACTIVITY = (
    "edited", "read", "created", "deleted", "moved", "ran", "installed", "searched", "viewed", "opened", "wrote",
    "mentioned", "part-of",
)  # fmt: skip
_ROWS: tuple[Relation, ...] = (
    Relation("uses", False, True, "stack", 1.0, STACK, stack=True),
    Relation("chose", False, True, "stack", 1.0, STACK),  # a library the user picked: named on the stack line
    Relation("depends-on", False, False, "depends on", 0.3, LINK, stack=True),
    Relation("dropped", False, True, "dropped", 0.5, DECISION),
    Relation("convention", False, True, "convention", 0.85, CONVENTION_ROLE),
    Relation("env-var", False, True, "env", 0.65, ENVIRONMENT),
    Relation("endpoint", False, True, "endpoints", 0.65, ENVIRONMENT),
    Relation("exposes", False, True, "ports", 0.65, ENVIRONMENT),
    Relation("has-problem", False, True, "open problem", 0.88, STATE),
    Relation("architecture", False, True, "layout", 0.7, LAYOUT),
    Relation("component", False, True, "layout", 0.7, LAYOUT),
    Relation("task-done", False, True, "done", 0.55, PROGRESS),
    Relation("task-pending", False, True, "pending", 0.75, PROGRESS),
    Relation("listens-on", False, False, "listens on", 0.5, LINK),
    Relation("fixed-by", False, False, "fixed by", 0.7, LINK),
    Relation("fails-with", False, False, "fails with", 0.5, LINK),
    Relation("decided", False, False, "decided", 0.5, LINK),
    Relation("prefers", False, False, "prefers", 0.5, LINK),
    *(_slot(c, c.replace("-", " ")) for c in _SLOT_CATEGORIES),
    *(_slot(c, c, switch=True) for c in ("database", "cache", "queue")),
    *(Relation(f"{k}-command", True, True, k, 0.95, COMMAND) for k in COMMAND_KINDS),
    *(Relation(f"{k}-script", False, True, k, 0.9, COMMAND) for k in COMMAND_KINDS),
    *(Relation(f"{k}-status", True, True, "state", 0.6, STATE) for k in STATUS_KINDS),
    # commands of no known kind: ran (`docker compose logs bot`), or given in an answer; many at once
    Relation("other-command", False, True, "other", 0.8, COMMAND),
    Relation("other-script", False, True, "other", 0.75, COMMAND),
    *(Relation(name, False, False, name, 0.1, ACTIVITY) for name in _ACTIVITY),
)
TABLE: dict[str, Relation] = {r.name: r for r in _ROWS}
_VERSION_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*-version$")


def relation(name: str) -> Relation | None:
    """The row of a relation (a `<tech>-version` one's too), None for a plain edge."""
    found = TABLE.get(name)
    if found is None and _VERSION_NAME.match(name) and name != "uses-version":
        return Relation(name, True, True, "version", 1.0, STACK)
    return found


def version_relation(tech_name: str) -> str:
    """`Python` -> `python-version`, `Node.js` -> `node-js-version`."""
    return re.sub(r"[^a-z0-9]+", "-", tech_name.lower()).strip("-") + "-version"


def single_valued(name: str) -> bool:
    row = relation(name)
    return row is not None and row.single_valued


def in_brief(name: str) -> bool:
    row = relation(name)
    return row is not None and row.in_brief


def names(*, role: str = "", single: bool | None = None, brief: bool | None = None) -> frozenset[str]:
    """The table's fixed relation names (no `-version` family) with these properties."""
    return frozenset(
        r.name
        for r in _ROWS
        if (not role or r.role == role)
        and (single is None or r.single_valued is single)
        and (brief is None or r.in_brief is brief)
    )


SLOT_CATEGORIES: dict[str, str] = {r.category: r.name for r in _ROWS if r.category and not r.switch}
SWITCH_CATEGORIES: dict[str, str] = {r.category: r.name for r in _ROWS if r.switch}
SLOT_RELATIONS = frozenset(r.name for r in _ROWS if r.category)
SWITCH_RELATIONS = frozenset(r.name for r in _ROWS if r.switch)
STACK_RELATIONS = frozenset(r.name for r in _ROWS if r.stack)
BRIEF_RELATIONS = names(brief=True)
ACTIVITY_RELATIONS = names(role=ACTIVITY)
# what the user states for every project (the global block): conventions and slot choices
PREFERENCE_RELATIONS = frozenset({"convention", *SLOT_RELATIONS})
