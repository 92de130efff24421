"""The technology names the rules know (vocabulary.tsv, shipped as data), with their category.

`lookup(name)` -> Tech | None: a language, framework, database, cache, queue, ORM, migration
tool, test framework, package manager, CSS/UI kit, linter, ... (curated by hand), or one of
the most downloaded packages of PyPI and npm and some Go modules (category `library`). An
alias resolves to its technology (`postgres` -> PostgreSQL); a driver may imply one
(`psycopg2` -> PostgreSQL). The file is read once, on first use (about 13,000 rows).
Built by scripts/build_vocabulary.py; nothing in it comes from a test fixture.

Categories that hold one value per project at a time are slots (SLOTS): a project has one
test framework, one ORM, one package manager, ... and a new one replaces the old (reconcile).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

PATH = Path(__file__).with_name("vocabulary.tsv")

# category -> the slot relation a project's value of it fills (one value at a time)
SLOTS = {
    "test-framework": "test-framework",
    "orm": "orm",
    "migration-tool": "migration-tool",
    "package-manager": "package-manager",
    "web-framework": "web-framework",
    "frontend-framework": "frontend-framework",
    "css-framework": "css-framework",
    "bundler": "bundler",
    "linter": "linter",
    "formatter": "formatter",
    "type-checker": "type-checker",
    "state-management": "state-management",
    "http-client": "http-client",
}
# the order a stack line names categories in (libraries last)
CATEGORY_ORDER = (
    "language",
    "runtime",
    "web-framework",
    "meta-framework",
    "frontend-framework",
    "database",
    "orm",
    "migration-tool",
    "cache",
    "queue",
    "api",
    "css-framework",
    "ui-kit",
    "state-management",
    "http-client",
    "auth",
    "ai",
    "test-framework",
    "package-manager",
    "bundler",
    "linter",
    "formatter",
    "type-checker",
    "infra",
    "library",
)
RANK = {c: i for i, c in enumerate(CATEGORY_ORDER)}


@dataclass(frozen=True, slots=True)
class Tech:
    name: str  # display name: `PostgreSQL`, `pytest`, `Next.js`
    category: str
    ecosystem: str = ""  # pypi | npm | go | "" (curated without one)

    @property
    def slot(self) -> str:
        return SLOTS.get(self.category, "")

    @property
    def curated(self) -> bool:
        return self.category != "library"


@functools.cache
def _table() -> dict[str, Tech]:
    names: dict[str, Tech] = {}
    aliases: dict[str, Tech] = {}
    implied: list[tuple[str, str, str]] = []
    with PATH.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                continue
            name, category, ecosystem, alias_text, implies = (line.rstrip("\n").split("\t") + [""] * 5)[:5]
            if not name:
                continue
            tech = Tech(name, category or "library", ecosystem)
            names[name.lower()] = tech
            for alias in alias_text.split(","):
                if alias:
                    aliases[alias.lower()] = tech
            if implies:
                implied.append((name.lower(), implies.lower(), ecosystem))
    for key, tech in aliases.items():
        if key not in names or not names[key].curated:
            names[key] = tech
    for key, target, _ in implied:
        if target in names:
            names[key] = names[target]
    return names


def lookup(name: str) -> Tech | None:
    """The technology a name (any case, an alias, a driver) stands for."""
    key = name.strip().lower()
    if not key:
        return None
    table = _table()
    found = table.get(key)
    if found is None and "[" in key:  # `uvicorn[standard]`
        found = table.get(key.split("[", 1)[0])
    return found


def known(name: str, *, curated: bool = False) -> bool:
    tech = lookup(name)
    return tech is not None and (tech.curated or not curated)


def size() -> int:
    return len(_table())
