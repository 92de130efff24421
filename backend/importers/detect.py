"""`opmem import PATH...` with no agent named: which importer reads each session under PATH.

Every file under the paths is matched against each importer's shape (shape.py); a session that
exactly one importer claims is that importer's (or, when it lies in the folder a fork of another
agent names, that fork's), one that several claim is named with its candidates and left alone
(nothing is guessed), and a file given by name that none claims is said.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .base import Importer
from .shape import find_units


@dataclass(slots=True)
class Detected:
    """What `detect_sources` found under the paths."""

    sessions: dict[str, list[Path]] = field(default_factory=dict)  # importer name -> its sessions, in walk order
    ambiguous: list[tuple[Path, tuple[str, ...]]] = field(default_factory=list)  # a session and its candidates
    unknown: list[Path] = field(default_factory=list)  # files given by name that no importer claims

    def warnings(self) -> list[str]:
        out = [
            f"{path}: fits several importers ({', '.join(names)}); not imported: name one, e.g. "
            f"`opmem import {names[0]} {path}`"
            for path, names in self.ambiguous
        ]
        out += [f"{path}: no importer recognises this file" for path in self.unknown]
        return out


def detect_sources(paths: Iterable[Path | str], sources: Mapping[str, Importer]) -> Detected:
    """Each session under `paths` (any depth, any folder names) with the importer whose shape it has."""
    given = [Path(p).expanduser() for p in paths]
    units = find_units(given, sources.values())
    found = Detected()
    for unit, importers in units.items():
        specific = [i for i in importers if i.shape.within]  # a fork's folder names it
        importers = specific if len(specific) == 1 else importers
        if len(importers) == 1:
            found.sessions.setdefault(importers[0].name, []).append(unit)
        else:
            found.ambiguous.append((unit, tuple(i.name for i in importers)))
    claimed = set(units) | {u.parent for u in units}
    found.unknown = [p for p in given if p.is_file() and p not in claimed and p.parent not in units]
    return found
