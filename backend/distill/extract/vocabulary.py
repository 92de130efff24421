"""The technology names the rules know (vocabulary.tsv, shipped as data), with their category.

`lookup(name)` -> Tech | None: a language, framework, database, cache, queue, ORM, migration
tool, test framework, package manager, CSS/UI kit, linter, ... (curated by hand), or one of
the most downloaded packages of PyPI and npm and some Go modules (category `library`). An
alias resolves to its technology (`postgres` -> PostgreSQL); a driver may imply one
(`psycopg2` -> PostgreSQL). The file is read once, on first use (about 13,000 rows;
the plain library rows are parsed when a lookup finds one).
Built by scripts/build_vocabulary.py; nothing in it comes from a test fixture.

Categories that hold one value per project at a time are slots (SLOTS): a project has one
test framework, one ORM, one package manager, ... and a new one replaces the old (reconcile).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from ...memory import relations

PATH = Path(__file__).with_name("vocabulary.tsv")

# category -> the slot relation a project's value of it fills (one value at a time; the relation
# table, memory/relations.py, says which categories are slots). An e2e framework sits beside the
# unit tests' framework (Vitest and Playwright), not instead.
SLOTS = relations.SLOT_CATEGORIES
# categories a project may hold several of at once (Postgres and SQLite, Redis and Memcached): a
# mention fills no slot, but the user saying the project switches to one ("migrate the database
# to PostgreSQL", "move the queue to NATS") makes it the one, and the others of its kind history
SWITCH_SLOTS = relations.SWITCH_CATEGORIES
CATEGORY_ORDER = relations.CATEGORY_ORDER  # the order a stack line names categories in (libraries last)
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
def _table() -> tuple[dict[str, Tech], dict[str, str]]:
    """(technologies by lower-case name, alias and driver; plain library rows by lower-case name).

    Nine rows in ten are plain libraries (`name<TAB>library<TAB>ecosystem<TAB><TAB>`): those are
    kept as their line and made a Tech when a lookup first finds one, so the load splits and
    builds only the thousand curated rows (and the aliases and drivers, which are never plain)."""
    names: dict[str, Tech] = {}
    libraries: dict[str, str] = {}
    aliases: dict[str, Tech] = {}
    implied: list[tuple[str, str]] = []
    for line in PATH.read_text(encoding="utf-8").split("\n"):
        name, _, rest = line.partition("\t")
        if rest.startswith("library\t") and rest.endswith("\t\t") and rest.count("\t") == 3:
            libraries[name.lower()] = line
            continue
        if not name or name.startswith("#"):
            continue
        name, category, ecosystem, alias_text, implies = (line.split("\t") + [""] * 5)[:5]
        tech = Tech(name, category or "library", ecosystem)
        names[name.lower()] = tech
        for alias in alias_text.split(","):
            if alias:
                aliases[alias.lower()] = tech
        if implies:
            implied.append((name.lower(), implies.lower()))
    for key, tech in aliases.items():
        if key not in names or not names[key].curated:
            libraries.pop(key, None)
            names[key] = tech
    for key, target in implied:
        found = names.get(target) or _library(libraries, target)
        if found is not None:
            libraries.pop(key, None)
            names[key] = found
    return names, libraries


def _library(libraries: dict[str, str], key: str) -> Tech | None:
    line = libraries.get(key)
    if line is None:
        return None
    name, _, ecosystem, _, _ = line.split("\t")
    return Tech(name, "library", ecosystem)


def _get(key: str) -> Tech | None:
    names, libraries = _table()
    found = names.get(key)
    if found is None and key in libraries:
        found = names[key] = _library(libraries, key)  # made once, then found as the others
    return found


def lookup(name: str) -> Tech | None:
    """The technology a name (any case, an alias, a driver) stands for."""
    key = name.strip().lower()
    if not key:
        return None
    found = _get(key)
    if found is None and "[" in key:  # `uvicorn[standard]`
        found = _get(key.split("[", 1)[0])
    if (found is None or not found.curated) and key.count("/") >= 2 and "." in key.split("/", 1)[0]:
        found = _go_module(key) or found  # a Go module path: the technology it is, else the library row
    return found


_MAJOR = re.compile(r"/v\d+$")


def _go_module(path: str) -> Tech | None:
    """`github.com/go-chi/chi/v5` is chi; `github.com/jackc/pgx/v5` is pgx (a driver: PostgreSQL):
    the path without its major version, else its last element when that names a curated technology."""
    bare = _MAJOR.sub("", path)
    found = _get(bare) if bare != path else None
    if found is None or not found.curated:
        found = _get(bare.rsplit("/", 1)[-1])
    return found if found is not None and found.curated else None


def known(name: str, *, curated: bool = False) -> bool:
    tech = lookup(name)
    return tech is not None and (tech.curated or not curated)


def size() -> int:
    names, libraries = _table()
    return len(names) + sum(1 for key in libraries if key not in names)
