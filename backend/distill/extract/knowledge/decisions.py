"""Decisions: a technology replaced by another ("move from Jest to Vitest") or dropped."""

from __future__ import annotations

import re

from ....model import Provenance
from .. import vocabulary
from ..caseless import Caseless
from .evidence import is_marked, may_hold
from .facts import Knowledge
from .techs import NAME, mentioned_techs, tech_name

_REPLACE = [
    re.compile(
        rf"\b(?:mov|migrat|switch|port|chang|go|transition|upgrad)(?:e|es|ed|ing)?\b(?:\s+\w+){{0,4}}?\s+from\s+{NAME}\s+(?:over\s+)?to\s+{NAME}",
        re.I,
    ),
    re.compile(rf"\breplac(?:e|es|ed|ing)\s+{NAME}\s+(?:with|by)\s+{NAME}", re.I),
    # "swap axios for the native fetch API"
    re.compile(
        rf"\bswap(?:s|ped|ping)?\s+(?:out\s+)?{NAME}\s+(?:out\s+)?for\s+(?:the\s+)?(?:native\s+|built-in\s+)?{NAME}",
        re.I,
    ),
    re.compile(rf"\b{NAME}\s+instead\s+of\s+{NAME}", re.I),  # Y instead of X (the new one first)
    re.compile(rf"\binstead\s+of\s+{NAME},?\s+(?:let'?s\s+|we(?:'ll| will)?\s+)?use\s+{NAME}", re.I),
    re.compile(rf"\b{NAME}(?:\s+please)?,?\s+(?:not|never)\s+{NAME}\b", re.I),  # Y, not X; "pnpm please, never npm"
    re.compile(rf"\bprefer\s+{NAME}\s+(?:over|to)\s+{NAME}", re.I),
    re.compile(rf"\b{NAME}\s+(?:replaces|replaced|supersedes|takes over from)\s+{NAME}", re.I),  # Y replaces X
    # "use lmstudio instead of their initial implementation of ollama": Y instead of (a part) of X
    re.compile(
        rf"\b{NAME}\s+instead\s+of\s+(?:(?:the|their|our|its|my|your|an?)\s+)?(?:[a-z]+\s+){{1,2}}?(?:of|with|on)\s+{NAME}",
        re.I,
    ),
]


_REPLACE_ORDER = ("old-new", "old-new", "old-new", "new-old", "old-new", "new-old", "new-old", "new-old", "new-old")


# what may follow a dropped name: the sentence goes on ("drop Redux for Zustand", "we dropped Redux
# last month"), not the name's part ("remove the React import", "removed the Django admin")
_DROP_END = (
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|or|for|from|in|since|last|this|because|entirely|completely|altogether|now|"
    r"today|yesterday|already|as|with|here|there|too|anymore|any more|in favou?r)\b|\s+[A-Z])"
)


_DROP = re.compile(
    rf"\b(?:(?:we(?:'re| are)\s+)?dropping|drop(?:ped)?|remov(?:e|ed|ing)|get(?:ting)? rid of|got rid of|"
    rf"stop(?:ped)? using|no more|ditch(?:ing|ed)?|rip(?:ping|ped)? out|deprecat(?:e|ed|ing)|"
    rf"mov(?:e|ed|ing) (?:off(?: of)?|away from)|migrat(?:e|ed|ing) (?:off(?: of)?|away from)|phas(?:e|ed|ing) out|"
    rf"get(?:ting)? off|got off|abandon(?:ed|ing)?|retir(?:e|ed|ing)|done with|swap(?:s|ped|ping)?(?: out)?|"
    rf"(?:let'?s|we(?:'ll| will)?|i'?d rather|we'?d rather)\s+not\s+use|(?:we\s+)?no longer use)\s+(?:the\s+)?{NAME}(?-i:{_DROP_END})",
    re.I,
)


_SWAP_WORDS = Caseless(
    re.compile(r"\b(?:from|replac\w*|swap\w*|instead|not|never|prefer|supersedes|takes over)\b", re.I)
)


_ASSISTANT_SWAP = Caseless(re.compile(r"\b(?:from \S+ to|replac\w* \S+ with|instead of)\b", re.I))


_SWAP_LITERALS = ("from ", "replac", "instead of")


def may_swap(text: str) -> bool:
    """`_ASSISTANT_SWAP.search(text)`; ASCII text without its literals (lowercased: IGNORECASE folds
    ASCII as lower() does) cannot match, so the pattern runs only on the rest."""
    if text.isascii():
        low = text.lower()
        if not any(literal in low for literal in _SWAP_LITERALS):
            return False
    return _ASSISTANT_SWAP.found(text)


def replacements(sentence: str) -> list[tuple[str, str]]:
    """(old, new) technology names a sentence replaces, one of them at least known to the vocabulary."""
    out: list[tuple[str, str]] = []
    if not _SWAP_WORDS.found(sentence):
        return out
    for rx, order in zip(_REPLACE, _REPLACE_ORDER, strict=True):
        for m in rx.finditer(sentence):
            a, b = _widened(sentence, m, 1), _widened(sentence, m, 2)
            old, new = (a, b) if order == "old-new" else (b, a)
            old_t, new_t = tech_name(old, curated=False), tech_name(new, curated=False)
            if old_t is None and new_t is None:
                continue
            unknown = new if new_t is None else old
            marked = is_marked(old, sentence) or is_marked(new, sentence) or re.match(r"^[A-Z@`]", unknown)
            if (old_t is None or new_t is None) and not marked:
                continue  # one name unknown: taken when the text marks it (backticks, capitals) as a name
            if order == "new-old" and rx is _REPLACE[5] and (old_t is None or new_t is None):
                continue  # "X, not Y" only between two known names
            if old_t is not None and new_t is not None and old_t.name == new_t.name:
                continue
            out.append((old.strip("`'\".,"), new.strip("`'\".,")))
    return out


def _widened(sentence: str, m: re.Match[str], group: int) -> str:
    """A name with the word before it when the two are one technology ("LM Studio", "Spring Boot")."""
    name = m.group(group)
    before = sentence[: m.start(group)].rstrip()
    word = re.search(r"[A-Za-z][\w.+-]*$", before)
    if word is not None and tech_name(f"{word.group()} {name}", curated=True):
        return f"{word.group()} {name}"
    return name


# "webpack is gone", "npm is banned here": the name first
_DROP_AFTER = re.compile(
    rf"{NAME}\s+(?:is|are|was|has been|have been)\s+(?:now\s+)?(?:gone|banned|deprecated|removed|dropped|"
    rf"not allowed|no longer used|history)\b",
    re.I,
)


_DROP_AFTER_LITERALS = (
    "gone",
    "banned",
    "deprecated",
    "removed",
    "dropped",
    "not allowed",
    "no longer used",
    "history",
)


# every form of _DROP holds one of these (case-blind): most sentences hold none
_DROP_HINT = re.compile(
    "drop|remov|rid of|stop|no more|ditch|rip|deprecat|mov|migrat|phas|off|abandon|retir|done with|swap|not|no longer"
)


def dropped(sentence: str) -> list[str]:
    out = []
    after = _DROP_AFTER.finditer(sentence) if may_hold(sentence, _DROP_AFTER_LITERALS) else ()
    low = sentence.lower()
    drops = _DROP.finditer(sentence) if not sentence.isascii() or _DROP_HINT.search(low) else ()
    for m in (*drops, *after):
        tech = tech_name(m.group(1), curated=not is_marked(m.group(1), sentence))
        if tech is not None:
            out.append(m.group(1).strip("`'\".,"))
    return out


def record_replacement(k: Knowledge, old: str, new: str, prov: Provenance, from_user: bool) -> None:
    """`new` takes `old`'s place: old dropped (reconcile retires its stack edges), new used, a decision."""
    new_t = tech_name(new, curated=False) or _unknown(new, tech_name(old, curated=False))
    old_t = tech_name(old, curated=False) or _unknown(old, new_t)
    if new_t is None or old_t is None or (not from_user and not (old_t.curated and new_t.curated)):
        return
    old_id = k.drop(old_t, prov, 0.9 if from_user else 0.8)
    new_id = k.stack(new_t, prov, 0.95 if from_user else 0.85)
    k.decided.add(prov.node_ids[0])
    what = f" as {new_t.slot.replace('-', ' ')}" if new_t.slot else ""
    label = "Decided" if from_user else "Changed"
    k.b.event(
        f"{label}: {new_t.name} replaces {old_t.name}{what}",
        "decision",
        0.85 if from_user else 0.7,
        prov,
        [k.subject, old_id, new_id],
        key=f"replace:{prov.session_id}:{prov.node_ids[0]}:{old_t.name}",
    )


_SWITCH_TO = Caseless(
    re.compile(
        r"\b(?:switch(?:ing|ed)?|mov(?:e|ing|ed)|migrat(?:e|ing|ed)|port(?:ing|ed)?)\s+(?:the |our |it |everything )?"
        r"(?:(\w+) )?(?:over )?to\s+`?([\w.+#/@-]+?)`?(?=[\s,.;:!]|$)",
        re.I,
    )
)


# what a switch of a kind a project may hold several of must be about to make it the one:
# "migrate the database to X", "move our jobs over to Y", "switch to Z"; not "move the analytics to X"
_SWITCH_OBJECTS = {
    "database": frozenset({"database", "databases", "db", "datastore", "storage", "persistence", "data"}),
    "cache": frozenset({"cache", "caching", "caches"}),
    "queue": frozenset({"queue", "queues", "jobs", "broker", "tasks", "workers", "messaging"}),
}


def record_switch(k: Knowledge, sentence: str, prov: Provenance) -> bool:
    """A switch to one of a kind ("switching the migrations to goose, golang-migrate keeps
    breaking"): the one other of its kind the sentence names is what it replaces. A switch to a
    database, cache or queue that names none ("we migrated the database to PostgreSQL") fills that
    kind's slot, so reconcile retires the others of the kind the project used. True when it replaced one."""
    if not may_hold(sentence, ("to",)):
        return False
    for m in _SWITCH_TO.finditer(sentence):
        new = tech_name(m.group(2), curated=False)
        if new is None:
            continue
        switch_slot = vocabulary.SWITCH_SLOTS.get(new.category, "")
        if not new.slot and not switch_slot:
            continue
        others = [t for t in mentioned_techs(sentence) if t.category == new.category and t.name != new.name]
        if len(others) == 1:
            record_replacement(k, others[0].name, new.name, prov, True)
            return True
        obj = (m.group(1) or "").lower()
        if switch_slot and not others and (not obj or obj in _SWITCH_OBJECTS[new.category]):
            eid = k.stack(new, prov, 0.9, slot=False)
            k.fact(switch_slot, eid, prov, 0.9)
            k.decided.add(prov.node_ids[0])
            k.b.event(
                f"Decided: {new.name} as the {new.category}",
                "decision",
                0.8,
                prov,
                [k.subject, eid],
                key=f"switch:{prov.session_id}:{prov.node_ids[0]}:{new.name}",
            )
            return True
    return False


# "I have updated runtime to version 16", "we bumped the target SDK to 34": the user moved a
# setting of the project to a new value (a version), done or decided
_SET_VERSION = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have|\s+just)?\s+(?P<verb>updated|upgraded|bumped|raised|changed|set|moved)\s+"
    r"(?:the\s+|our\s+|my\s+)?(?P<what>[A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*){0,2}?)\s+(?P<a>version\s+)?"
    r"to\s+(?P<b>version\s+|v)?(?P<value>\d+(?:\.\d+){0,2})\b(?![.\d]*\s*%)",
    re.I,
)
_NOT_A_SETTING = frozenset(
    {"it", "this", "that", "them", "everything", "all", "code", "file", "files", "test", "tests"}
)
_VERBS = {"updated": "update", "upgraded": "upgrade", "bumped": "bump", "raised": "raise", "changed": "change",
          "set": "set", "moved": "move"}  # fmt: skip


def record_set_version(k: Knowledge, sentence: str, prov: Provenance) -> bool:
    """A setting the user moved to a new version: a decision, in the user's words."""
    if not may_hold(sentence, (" to ",)):
        return False
    for m in _SET_VERSION.finditer(sentence):
        what = " ".join(m.group("what").split())
        said_version = m.group("a") or m.group("b") or "." in m.group("value")  # not "the timeout to 30"
        if said_version and what.lower().split()[0] not in _NOT_A_SETTING:
            break
    else:
        return False
    verb = _VERBS[m.group("verb").lower()]
    k.decided.add(prov.node_ids[0])
    k.b.event(
        f"Decided: {verb} {what} to version {m.group('value')}",
        "decision",
        0.8,
        prov,
        [k.subject],
        key=f"set-version:{prov.session_id}:{prov.node_ids[0]}:{what.lower()}",
    )
    return True


_UNTRACK = re.compile(r"(?:^|&&|;|\|\|)\s*git\s+rm\s+(?:-r\s+)?--cached\s+(?:-r\s+)?(?:--\s+)?(?P<paths>[^;&|\n]+)")


def record_untracked(k: Knowledge, command: str, prov: Provenance) -> None:
    """Files taken out of git but kept on disk (`git rm --cached .env`): a decision about the repository."""
    m = _UNTRACK.search(command[:2000])
    if m is None:
        return
    paths = [p.strip("'\"") for p in m.group("paths").split() if not p.startswith("-")][:3]
    if not paths:
        return
    names = ", ".join(paths)
    k.b.event(
        f"Decided: stop tracking {names} in git (git rm --cached {' '.join(paths)})",
        "decision",
        0.8,
        prov,
        [k.subject],
        key=f"untrack:{prov.session_id}:{prov.node_ids[0]}:{names}",
    )


def record_drops(k: Knowledge, sentence: str, prov: Provenance) -> bool:
    """Technologies the sentence drops; True when one was replaced by another it names."""
    replaced = False
    names = dropped(sentence)
    gone = {t.name for t in (tech_name(n, curated=False) for n in names) if t is not None}
    others = [t for t in mentioned_techs(sentence) if t.name not in gone] if names else []
    for name in names:
        tech = tech_name(name, curated=False)
        taking = [t for t in others if tech is not None and tech.category and t.category == tech.category]
        if tech is not None and len(taking) == 1:
            # "stop using requests, use httpx": the one other of its kind named takes its place
            record_replacement(k, name, taking[0].name, prov, True)
            replaced = True
        elif tech is not None:
            eid = k.drop(tech, prov)
            k.decided.add(prov.node_ids[0])
            k.b.event(
                f"Decided: drop {tech.name}",
                "decision",
                0.8,
                prov,
                [k.subject, eid],
                key=f"drop:{prov.session_id}:{prov.node_ids[0]}:{tech.name}",
            )
    return replaced


def _unknown(name: str, other: vocabulary.Tech | None) -> vocabulary.Tech | None:
    """A name the vocabulary lacks, taken in the category of what it replaces (or is replaced by)."""
    clean = name.strip("`'\".,;:")
    if not clean or other is None or not re.fullmatch(r"[\w.+#/@-]{2,40}", clean):
        return None
    return vocabulary.Tech(clean, other.category, "")


# an approach the user proposes ("shouldn't I add an initAllTaskFromCache method?", "应该增加一个
# initAllTaskFromCache方法", "devo criar um `SyncLog`?") that the next answer opens by agreeing with
_PROPOSE_VERBS = {
    "add": "add", "create": "create", "use": "use", "introduce": "introduce", "implement": "implement",
    "extract": "extract", "move": "move", "增加": "add", "添加": "add", "加": "add", "引入": "introduce",
    "创建": "create", "实现": "implement", "使用": "use", "adicionar": "add", "criar": "create", "usar": "use",
    "implementar": "implement", "añadir": "add", "agregar": "add", "crear": "create", "добавить": "add",
    "создать": "create", "использовать": "use", "сделать": "make",
}  # fmt: skip
_PROPOSE = re.compile(
    r"(?:\bshould(?:n'?t| not)?\s+(?:i|we)\s+(?:not\s+)?|应该|應該|\bdevo\s+|\bdeveria\s+|\bdevemos\s+|"
    r"\bdebería\s+|\bdeberíamos\s+|\bстоит\s+|\bнужно\s+|\bнадо\s+)"
    r"(?:also\s+)?(?P<verb>" + "|".join(sorted(_PROPOSE_VERBS, key=len, reverse=True)) + r")\s*"
    r"(?:an?\s+|the\s+|一个\s*|um\s+|uma\s+|un\s+|una\s+)?(?:new\s+)?"
    r"`?(?P<name>[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?)`?",
    re.I,
)
_IDENTIFIER = re.compile(r"[a-z][A-Z]|_|\(\)|\.\w")  # initAllTaskFromCache, load_cache, Cache.init, run()
_AGREES = re.compile(
    r"\b(?:yes|yeah|indeed|exactly|correct|right|absolutely|good idea|great idea)\b|确实|是的|正确|对的|没错|好主意|"
    r"\bsim\b|exatamente|correto|\bsí\b|exacto|correcto|\bда\b|верно|именно|правильно",
    re.I,
)
_DISAGREES = re.compile(
    r"\b(?:no|not|don'?t|shouldn'?t|wouldn'?t|instead)\b|不需要|不应该|没必要|不必|\bnão\b|\bнет\b|не нужно", re.I
)


def proposal(text: str) -> tuple[str, str] | None:
    """(verb, name) of a code element the user proposes to add, create or use; None otherwise."""
    for m in _PROPOSE.finditer(text[:1000]):
        name = m.group("name")
        backticked = text[m.start("name") - 1 : m.start("name")] == "`"
        if backticked or _IDENTIFIER.search(name):
            return _PROPOSE_VERBS[m.group("verb").lower()], name
    return None


def record_proposal(k: Knowledge, text: str, prov: Provenance) -> None:
    found = proposal(text)
    k.proposal = (found[0], found[1], prov) if found else None


def record_agreed(k: Knowledge, answer: str, prov: Provenance) -> None:
    """The user's proposal, taken as decided when the answer opens by agreeing with it by name."""
    waiting, k.proposal = k.proposal, None
    if waiting is None:
        return
    verb, name, said = waiting
    opening = answer[:300]
    if name not in opening or not _AGREES.search(opening) or _DISAGREES.search(opening[:120]):
        return
    k.decided.add(prov.node_ids[0])
    k.b.event(
        f"Decided: {verb} {name} (the user's proposal)",
        "decision",
        0.8,
        said,
        [k.subject],
        key=f"proposal:{said.session_id}:{said.node_ids[0]}:{name.lower()}",
    )
