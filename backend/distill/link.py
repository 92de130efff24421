"""Stage 3, link: alias resolution. Two entities that name one thing are merged, with the reason.

Only entities of one type are compared, by these rules in order:
- the same name up to case, spacing and punctuation (`LM Studio`, `lm-studio`, `LMStudio`),
  for every type whose names are not paths or identifiers;
- the same file or folder: one absolute path under the project (`src/a.py`, `./src/a.py`,
  `/home/me/proj/src/a.py` seen from sessions with different roots);
- an acronym and its long form (`WHO` / `World Health Organization`), when only one long form fits;
- a person's short form that starts one known name only (`Mel` for `Melanie`);
- for natural names (people, places, organisations, activities): rapidfuzz similarity
  (`fuzz.ratio` on the normalized names) >= FUZZY_MIN for names of at least FUZZY_LEN
  characters with the same numbers in them; shorter names must match exactly.

Thresholds were chosen on general grounds, not on any fixture: 92 keeps a one-letter slip in
a name of 13+ characters (`Carolline Smith`) and keeps apart `Caroline`/`Carolina` (87.5) and
`Jon`/`Joan`. Every merge becomes an AliasMerge the memory records and `opmem memory unmerge`
undoes; an undone merge is never made again (the memory refuses it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from ..memory.records import AliasMerge, Entity, entity_key
from .model import Extraction, Linked

FUZZY_MIN = 92.0
FUZZY_LEN = 6
# names whose punctuation is meaning: `go test ./...` is not `go test`, `/api/v1` not `api-v1`
EXACT_TYPES = frozenset(
    {"file", "folder", "url", "commit", "port", "date", "session", "issue", "error", "test", "command", "endpoint",
     "env-var"}
)  # fmt: skip
# Natural names only: packages, tools, models and services are identifiers (react-dom is not react-dnd).
FUZZY_TYPES = frozenset({"person", "place", "organisation", "activity", "concept", "pet"})
LINK_TYPES = FUZZY_TYPES | {"package", "tool", "model", "service", "project", "file", "folder"}
PATH_TYPES = frozenset({"file", "folder"})
ACRONYM_TYPES = frozenset({"organisation", "place", "concept", "project", "service", "activity"})
_SMALL_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "at", "a", "an", "to", "&", "de"})


@dataclass(frozen=True, slots=True)
class Known:
    """An entity the memory holds (canonical), as the link stage compares it."""

    id: str
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    path: str = ""  # files and folders: the absolute path, when known

    @classmethod
    def of(cls, entity: Entity) -> Known:
        path = entity.attrs.get("path") if entity.type in ("file", "folder") else ""
        return cls(entity.id, entity.type, entity.name, tuple(entity.aliases), path if isinstance(path, str) else "")


def compact(name: str) -> str:
    return re.sub(r"[\W_]+", "", entity_key(name))


def acronym(name: str) -> str:
    """`World Health Organization` -> `WHO`; "" for one-word names."""
    words = [w for w in re.split(r"[\s\-/]+", name) if w]
    significant = [w for w in words if w.lower() not in _SMALL_WORDS]
    if len(significant) < 2:
        return ""
    return "".join(w[0] for w in significant).upper()


def _is_acronym(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][A-Z0-9&]{1,7}", name.strip()))


@dataclass(frozen=True, slots=True)
class _Candidate:
    into: str
    reason: str
    score: float


class _Index:
    """Lookups over the known entities of the memory plus those of this batch."""

    def __init__(self) -> None:
        self.by_type: dict[str, list[Known]] = {}
        self.compact: dict[tuple[str, str], list[str]] = {}
        self.paths: dict[tuple[str, str], list[str]] = {}
        self.acronyms: dict[tuple[str, str], list[Known]] = {}
        self.keys: dict[str, list[str]] = {}  # type -> normalized names, parallel to by_type
        self.prefixes: dict[str, set[str]] = {}  # a person's first-name prefix -> ids
        self.ids: set[str] = set()

    def add(self, known: Known) -> None:
        if known.id in self.ids:
            return
        self.ids.add(known.id)
        self.by_type.setdefault(known.type, []).append(known)
        self.keys.setdefault(known.type, []).append(entity_key(known.name))
        if known.type == "person":
            first = entity_key(known.name).split(" ")[0]
            for size in range(3, len(first)):
                self.prefixes.setdefault(first[:size], set()).add(known.id)
        if known.type not in EXACT_TYPES:
            for name in (known.name, *known.aliases):
                self.compact.setdefault((known.type, compact(name)), []).append(known.id)
        if known.path:
            self.paths.setdefault((known.type, known.path), []).append(known.id)
        if known.type in ACRONYM_TYPES:
            short = acronym(known.name)
            if short:
                self.acronyms.setdefault((known.type, short), []).append(known)


def _first_other(ids: Iterable[str], me: str) -> str | None:
    return next((i for i in ids if i != me), None)


def _match(index: _Index, entity: Known) -> _Candidate | None:
    kind = entity.type
    if kind not in EXACT_TYPES:
        found = _first_other(index.compact.get((kind, compact(entity.name)), ()), entity.id)
        if found:
            return _Candidate(found, "same name up to case, spacing and punctuation", 1.0)
    if entity.path:
        found = _first_other(index.paths.get((kind, entity.path), ()), entity.id)
        if found:
            return _Candidate(found, f"same path {entity.path}", 1.0)
    if kind in ACRONYM_TYPES and _is_acronym(entity.name):
        long_forms = [k for k in index.acronyms.get((kind, entity.name.strip().upper()), ()) if k.id != entity.id]
        if len(long_forms) == 1:
            return _Candidate(long_forms[0].id, f"acronym of {long_forms[0].name}", 0.9)
    if kind == "person" and " " not in entity.name.strip() and len(entity.name.strip()) >= 3:
        longer = sorted(index.prefixes.get(entity_key(entity.name), set()) - {entity.id})
        if len(longer) == 1:
            name = next(k.name for k in index.by_type["person"] if k.id == longer[0])
            return _Candidate(longer[0], f"short form of {name}", 0.8)
    if kind in FUZZY_TYPES and len(entity_key(entity.name)) >= FUZZY_LEN:
        return _fuzzy(index, entity)
    return None


def _fuzzy(index: _Index, entity: Known) -> _Candidate | None:
    others = index.by_type.get(entity.type, ())
    choices = index.keys.get(entity.type, ())
    if not others:
        return None
    best = process.extractOne(entity_key(entity.name), choices, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN)
    if best is None:
        return None
    _, score, position = best
    if others[position].id == entity.id or len(choices[position]) < FUZZY_LEN:
        return None
    if re.findall(r"\d+", choices[position]) != re.findall(r"\d+", entity_key(entity.name)):
        return None  # numbers differ: another version, another year, another thing
    return _Candidate(others[position].id, f"similar name ({score:.0f}% like {others[position].name})", score / 100)


class Linker:
    """The link stage over a run: the index of known names is built once and grows batch by batch."""

    def __init__(self, known: Iterable[Known] = ()) -> None:
        self.index = _Index()
        for item in known:
            self.index.add(item)

    def link(self, extraction: Extraction, *, at: float) -> Linked:
        """Alias merges for the batch's new entities against the known ones and each other.

        A new entity merges into a known one or into an earlier one of the batch (known ids are
        never merged away from here); every entity joins the index for the batches after it.
        """
        index = self.index
        merges: dict[tuple[str, str], AliasMerge] = {}
        for entity in extraction.entities:
            if entity.id in index.ids:
                continue  # most of a batch's entities: known from the memory or an earlier batch
            item = Known.of(entity)
            candidate = _match(index, item)
            index.add(item)
            if candidate is None:
                continue
            merges.setdefault(
                (candidate.into, item.id),
                AliasMerge(
                    id=AliasMerge.make_id(candidate.into, item.id),
                    into=candidate.into,
                    merged=item.id,
                    reason=candidate.reason,
                    at=at,
                    score=round(candidate.score, 3),
                ),
            )
        return Linked(extraction=extraction, merges=tuple(merges.values()))


def link(extraction: Extraction, known: Sequence[Known], *, at: float) -> Linked:
    """Stage 3 on its own: alias merges for the batch against `known` (the memory's entities)."""
    return Linker(known).link(extraction, at=at)


def relink(known: Sequence[Known], *, at: float) -> list[AliasMerge]:
    """The sleep's pass: every known entity against those before it (merges not yet made)."""
    index = _Index()
    out: list[AliasMerge] = []
    for item in sorted(known, key=lambda k: (k.type, k.id)):
        candidate = _match(index, item)
        index.add(item)
        if candidate is not None:
            out.append(
                AliasMerge(
                    AliasMerge.make_id(candidate.into, item.id),
                    candidate.into,
                    item.id,
                    candidate.reason,
                    at,
                    round(candidate.score, 3),
                )
            )
    return out
