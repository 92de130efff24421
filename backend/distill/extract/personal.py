"""Personal facts a speaker states about themself, by English patterns, no model.

Only first-person statements count: a clause whose subject is "I" or "we" (the speaker, with
their family), not negated ("never", "n't", "no longer") and not wished or supposed ("would",
"if", "wish", "hope", "maybe"). What it finds, each with the relation from the speaker:
  - learning or taking up something: "I've been learning the guitar" -> learns guitar;
  - moves and origins: "we moved to Denver" -> lives-in Denver; "I'm from Ohio", "I grew up
    in Ohio" -> from Ohio;
  - work: "I work as a nurse", "I'm a teacher" (a word from a list of occupations), "I got a
    job as a barista" -> works-as;
  - pets with their names: "we adopted a dog named Max", "our cat Luna" -> has-pet Max;
  - family: "my sister" -> has-sister (an entity "<speaker>'s sister"); counts: "I have three
    kids" -> has-kids "<speaker>'s 3 kids" (names come from names.py's KIN patterns);
  - activities done: "I painted a sunset", "we hiked" -> does painting / hiking (a fixed list
    of verbs and their activity); "we took the kids to the museum" -> visited museum;
  - plans: "I'm going to Paris", "we're planning to visit Japan" -> plans-to-visit;
  - titles in quotes after read/watch/listen: "I'm reading "Dune"" -> read Dune (type work);
  - favourites: "my favorite band is Queen" -> favorite-band Queen;
  - purchases: "I bought a new bike" -> bought bike (below the core's confidence floor).
A person's name never comes from a sentence's first word alone, and the words taken are cut at
the first preposition or punctuation: a fact is either clearly said or left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .names import HOBBIES, PETS, PLACE_NOUNS, is_stop_name

CLAUSE_SPLIT = re.compile(
    r"[;:!?]|,\s*(?=(?:and|but|so|then|because|since)\b)|\s+-\s+|\s+[–—]\s+|(?<=[.])\s+"
    r"|,\s*(?=(?:I|[Ww]e)\b)|\s+(?:and|but|so|then)\s+(?=(?:I|[Ww]e)\b)"  # a new subject starts a clause
)
SUBJECT = re.compile(
    r"(?:^(?:(?:yesterday|today|tonight|recently|lately|finally|so|well|oh|yeah|yes|actually|also|last \w+|this \w+|"
    r"\w+ \w+ ago)\s*,?\s+)?|,\s*|\b(?:and|but|so|then|because|since|when|now|today|recently|finally|also|actually)\s+)"
    r"(I|[Ww]e)(?P<rest>(?:'ve|'m|'d|'re|'ll)?\s+.+)$"
)
_CONTRACTIONS = (("'ve", "have"), ("'m", "am"), ("'re", "are"), ("'ll", "will"), ("'d", "had"))
AUX = (
    r"(?:(?:have|has|had|am|are|was|were|will|just|finally|recently|also|really|still|actually|both|all|even|already|"
    r"now|been|officially|happily|currently|lately)\s+)*"
)
NEGATED = re.compile(
    r"\b(?:not|never|no longer|n't|nobody|nothing|neither|nor|cannot|can't|won't|didn't|don't)\b|n't\b"
)
SUPPOSED = re.compile(
    r"\b(?:would|could|might|should|if|wish|wished|hope|hoping|maybe|perhaps|unless|whether|imagine|pretend)\b|'d\b",
    re.IGNORECASE,
)
_WORD = r"[a-z][a-z'-]+"
_STOP_AFTER = frozenset(
    ["a", "an", "the", "my", "our", "your", "his", "her", "their", "this", "that", "these", "those", "some", "any", "to", "of", "in", "on", "at", "for", "with", "from", "by", "and", "or", "but", "so", "it", "them", "him", "me", "us", "you", "up", "out", "about", "into", "it's", "last", "next", "yesterday", "today", "tonight", "tomorrow", "ago", "recently", "week", "weekend", "month", "year", "when", "while", "because", "after", "before", "since"]
)  # fmt: skip
OCCUPATIONS = frozenset(
    [
        "teacher",
        "nurse",
        "doctor",
        "engineer",
        "developer",
        "programmer",
        "designer",
        "artist",
        "writer",
        "author",
        "musician",
        "singer",
        "dancer",
        "lawyer",
        "accountant",
        "chef",
        "cook",
        "baker",
        "barista",
        "waiter",
        "waitress",
        "bartender",
        "pilot",
        "mechanic",
        "electrician",
        "plumber",
        "carpenter",
        "firefighter",
        "paramedic",
        "pharmacist",
        "dentist",
        "therapist",
        "counselor",
        "counsellor",
        "psychologist",
        "scientist",
        "researcher",
        "professor",
        "student",
        "librarian",
        "journalist",
        "photographer",
        "architect",
        "farmer",
        "veterinarian",
        "vet",
        "nanny",
        "babysitter",
        "consultant",
        "manager",
        "cashier",
        "driver",
        "soldier",
        "officer",
        "detective",
        "surgeon",
        "midwife",
        "tutor",
        "coach",
        "trainer",
        "instructor",
        "translator",
        "editor",
        "producer",
        "director",
        "actor",
        "actress",
        "painter",
        "sculptor",
        "potter",
        "gardener",
        "landscaper",
        "realtor",
        "banker",
        "analyst",
        "entrepreneur",
        "volunteer",
        "intern",
        "receptionist",
        "secretary",
        "caregiver",
        "carer",
        "social-worker",
    ]
)
FAMILY = (
    r"sister|brother|mom|mother|dad|father|husband|wife|partner|boyfriend|girlfriend|son|daughter|cousin|aunt|"
    r"uncle|grandma|grandmother|grandpa|grandfather|niece|nephew|fiance|fiancee|fiancée|kids|children|parents|"
    r"grandkids|grandchildren|siblings"
)
COUNTED = (
    r"kids|children|sons|daughters|brothers|sisters|siblings|dogs|cats|pets|grandkids|grandchildren|"
    r"puppies|kittens|horses|birds|rabbits"
)
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
}  # fmt: skip
_PET_WORDS = "|".join(sorted(PETS))
_LEARN = re.compile(
    rf"^{AUX}(?:been\s+|started\s+|begun\s+|began\s+)?(?:learning|learnt|learned|studying|studied|practicing|practising|"
    rf"practiced|taking up|took up|picked up|taking)\s+(?:how\s+)?(?:to\s+)?(?:play\s+)?(?:the\s+)?"
    rf"(?P<what>[A-Z][a-z]+|{_WORD}(?:\s+{_WORD})?)"
)
_MOVE = re.compile(
    rf"^{AUX}(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated|moving)\s+(?:back\s+|here\s+)?(?:to|into)\s+(?:the\s+)?"
    rf"(?P<place>[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){{0,2}})"
)
_FROM = re.compile(
    rf"^{AUX}(?:(?:am|'m)\s+(?:originally\s+)?from|grew up in|was born in|was raised in)\s+(?:the\s+)?"
    rf"(?P<place>[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){{0,2}})"
)
_WORK_AS = re.compile(
    rf"^{AUX}(?:work|works|worked|working|started working|got a job|got a new job|have a job|found a job|am employed)\s+"
    rf"as\s+(?:a|an)\s+(?P<job>(?:{_WORD}\s+){{0,2}}?{_WORD})\b"
)
_IS_A = re.compile(rf"^{AUX}(?:am|became|become)\s+(?:a|an)\s+(?:(?P<adj>[a-z]+)\s+)??(?P<job>[a-z-]+)\b")
_PET = re.compile(
    rf"\b(?:adopted|got|have|has|rescued|bought|brought home|welcomed)\s+(?:a|an|one|two|three|our|my)?\s*"
    rf"(?:new\s+|little\s+|rescue\s+|baby\s+|sweet\s+)?(?P<kind>{_PET_WORDS})\s*,?\s+(?:named|called)\s+"
    rf"(?P<name>[A-Z][a-z]+)\b"
)
_OUR_PET = re.compile(rf"\b[Oo]ur\s+(?:new\s+|little\s+)?(?P<kind>{_PET_WORDS}),?\s+(?P<name>[A-Z][a-z]+)\b")
_TREE_WORDS = (
    r"nodes?|elements?|components?|process(?:es)?|class(?:es)?|widgets?|items?|dirs?|directories|folders?|keys?|"
    r"tags?|commits?|branch(?:es)?|packages?|modules?|objects?|views?|rows?|records?|tables?|threads?|tasks?|jobs?"
)
_FAMILY = re.compile(
    rf"\b[Mm]y\s+(?:little\s+|big\s+|older\s+|younger\s+|elder\s+|twin\s+|late\s+)?(?P<kin>{FAMILY})\b"
    rf"(?!\s+(?:{_TREE_WORDS})\b)"  # "my parent nodes", "my children components": code, not family
)
_COUNT = re.compile(
    rf"^{AUX}(?:have|has|got|had)\s+(?P<n>\d+|{'|'.join(n for n in NUMBERS if n not in ('a', 'an'))})\s+"
    rf"(?:(?:lovely|wonderful|beautiful|amazing|little|young|grown|adult|sweet)\s+)?(?P<what>{COUNTED})\b"
)
_PLAN = re.compile(
    rf"^{AUX}(?:(?:am|'m|are|'re)\s+)?(?:going\s+to|planning\s+to|plan\s+to|will|'ll)\s+(?:go\s+to\s+|visit\s+|travel\s+to\s+|"
    rf"fly\s+to\s+|move\s+to\s+)?(?:go\s+)?(?:the\s+)?(?P<place>[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){{0,2}})"
)
ACTIVITY_VERBS = {
    "painted": "painting", "paint": "painting", "swam": "swimming",
    "swim": "swimming", "hiked": "hiking", "hike": "hiking", "baked": "baking", "bake": "baking",
    "cooked": "cooking", "cook": "cooking", "danced": "dancing", "dance": "dancing", "sang": "singing",
    "sing": "singing", "biked": "cycling", "cycled": "cycling",
    "surfed": "surfing", "surf": "surfing", "skied": "skiing", "ski": "skiing", "camped": "camping",
    "fished": "fishing", "knitted": "knitting", "knit": "knitting", "gardened": "gardening",
    "volunteered": "volunteering", "volunteer": "volunteering", "climbed": "climbing", "kayaked": "kayaking",
    "sculpted": "sculpting", "meditated": "meditation", "meditate": "meditation", "jogged": "jogging",
    "jog": "jogging", "journaled": "journaling", "sketched": "drawing", "sketch": "drawing",
    "photographed": "photography", "skated": "skating", "skate": "skating", "sewed": "sewing", "sew": "sewing",
}  # fmt: skip
_DID = re.compile(
    rf"^{AUX}(?:also\s+|often\s+|usually\s+|always\s+|sometimes\s+)?(?P<verb>{'|'.join(ACTIVITY_VERBS)})\b"
)
# "ran" is running only with a race or a distance ("ran into a friend", "ran the tests" are not)
_RAN = re.compile(
    rf"^{AUX}(?:ran|run|jogged)\s+(?:a\s+|the\s+|my\s+|another\s+|his\s+|her\s+|our\s+|\d+\s*)?(?:[a-z-]+\s+){{0,2}}?"
    r"(?:race|marathon|half-marathon|half marathon|5k|10k|miles?|kilometers?|km|ultra)\b"
)
_TOOK_TO = re.compile(
    rf"^{AUX}(?:took|take|brought|bring)\s+(?:[a-z']+\s+){{1,3}}?to\s+(?:the\s+|a\s+)?(?P<place>{PLACE_NOUNS})\b"
)
_FAVORITE = re.compile(
    r"\b[Mm]y\s+(?:all-time\s+|absolute\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|was|has to be)\s+"
    r"(?:probably\s+|definitely\s+|still\s+)?(?P<value>[\"“][^\"”]{2,60}[\"”]|[A-Za-z][\w'&.-]*(?:\s+[A-Za-z][\w'&.-]*){0,3})"
)
_TITLE = re.compile(
    r"\b(?P<verb>read|reading|reread|finished|watched|watching|saw|seen|listened to|listening to|love|loved|"
    r"recommend|recommended)\s+(?:the\s+|a\s+)?(?:book|novel|movie|film|show|series|album|song|podcast)?\s*"
    r"[\"“](?P<title>[^\"”]{2,60})[\"”]"
)
_BOUGHT = re.compile(
    rf"^{AUX}(?:just\s+)?(?:bought|purchased)\s+(?:(?:a|an|the|some|my|our|myself|ourselves|new|brand|brand-new)\s+)*"
    rf"(?P<what>{_WORD}(?:\s+{_WORD}){{0,2}})"
)


def _title_relation(verb: str) -> str:
    if verb.startswith(("watch", "saw", "seen")):
        return "watched"
    if verb.startswith("listen"):
        return "listened-to"
    return "likes" if verb.startswith(("love", "recommend")) else "read"


@dataclass(frozen=True, slots=True)
class Fact:
    """One statement of the speaker about themself: relation -> an entity of `type` named `name`.

    A thing that is the speaker's alone is named with the speaker ("Anna's sister", "Anna's 3
    kids", types `relative` and `group`, which the linker never merges by similarity)."""

    relation: str
    type: str
    name: str
    confidence: float
    attrs: dict[str, object] = field(default_factory=dict)


def _gerund(verb: str) -> str:
    """`paint` -> `painting`, `swim` -> `swimming`, `dance` -> `dancing` (regular English)."""
    if verb.endswith("ing"):
        return verb
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if len(verb) <= 4 and re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _object(words: str) -> str:
    """The leading words of a phrase up to the first function word; "" when none is left."""
    kept: list[str] = []
    for word in words.split():
        if word.lower() in _STOP_AFTER:
            break
        kept.append(word)
    return " ".join(kept)


_HOBBY_SET = frozenset(HOBBIES.split("|"))


def _learned(what: str, had_to: bool) -> str:
    words = _object(what)
    if not words:
        return ""
    if words[0].isupper():  # a language or a named thing: "Spanish", "Python"
        return words.split()[0]
    first = words.split()[0]
    if had_to:
        return _gerund(first)
    if words in _HOBBY_SET or first in _HOBBY_SET or (first.endswith("ing") and len(first) > 5):
        return words if words in _HOBBY_SET else first
    return ""


def _clause_facts(subject: str, rest: str, speaker: str) -> list[Fact]:
    found: list[Fact] = []
    if m := _LEARN.match(rest):
        thing = _learned(m.group("what"), " to " in m.group(0) and "how" not in m.group(0))
        if thing:
            found.append(Fact("learns", "activity", thing, 0.8))
    if m := _DID.match(rest):
        found.append(Fact("does", "activity", ACTIVITY_VERBS[m.group("verb")], 0.75))
    if _RAN.match(rest):
        found.append(Fact("does", "activity", "running", 0.75))
    if m := _TOOK_TO.match(rest):
        found.append(Fact("visited", "place", m.group("place"), 0.7))
    if m := _MOVE.match(rest):
        found.append(Fact("lives-in", "place", m.group("place"), 0.8))
    if (m := _FROM.match(rest)) and subject == "I":
        found.append(Fact("from", "place", m.group("place"), 0.8))
    if m := _WORK_AS.match(rest):
        job = _object(m.group("job"))
        if job:
            found.append(Fact("works-as", "occupation", job, 0.8))
    elif (m := _IS_A.match(rest)) and subject == "I" and m.group("job") in OCCUPATIONS:
        found.append(Fact("works-as", "occupation", m.group("job"), 0.75))
    if m := _COUNT.match(rest):
        n = m.group("n")
        count = int(n) if n.isdigit() else NUMBERS[n]
        what = m.group("what")
        found.append(Fact(f"has-{what}", "group", f"{speaker}'s {count} {what}", 0.8, attrs={"count": count}))
    if m := _PLAN.match(rest):
        found.append(Fact("plans-to-visit", "place", m.group("place"), 0.7))
    if m := _BOUGHT.match(rest):
        thing = _object(m.group("what"))
        if thing:
            found.append(Fact("bought", "thing", thing, 0.6))
    return found


def _clauses(sentence: str):
    for clause in CLAUSE_SPLIT.split(sentence):
        clause = clause.strip(" ,.")
        if clause:
            yield clause


def personal_facts(sentence: str, speaker: str) -> list[Fact]:
    """The facts one sentence states about its speaker (first person, affirmative, real)."""
    if sentence.rstrip().endswith("?") or SUPPOSED.search(sentence):
        return []
    found: list[Fact] = []
    for clause in _clauses(sentence):
        if NEGATED.search(clause):
            continue
        first_person = SUBJECT.search(clause)
        if first_person is not None:
            subject = "I" if first_person.group(1) == "I" else "we"
            body = first_person.group("rest")
            for short, full in _CONTRACTIONS:
                if body.startswith(short):
                    body = full + body[len(short) :]
                    break
            body = body.strip()
            found += _clause_facts(subject, body, speaker)
            for m in _PET.finditer(clause):
                found.append(Fact("has-pet", "pet", m.group("name"), 0.85, attrs={"kind": m.group("kind")}))
            for m in _TITLE.finditer(clause):
                found.append(Fact(_title_relation(m.group("verb")), "work", m.group("title").strip(), 0.75))
        for m in _OUR_PET.finditer(clause):
            found.append(Fact("has-pet", "pet", m.group("name"), 0.85, attrs={"kind": m.group("kind").lower()}))
        for m in _FAVORITE.finditer(clause):
            value = m.group("value").strip('"“” ')
            value = value if m.group("value")[0] in '"“' else _object(value)
            if value and not is_stop_name(value):
                what = m.group("what").replace(" ", "-")
                found.append(Fact(f"favorite-{what}", "concept", value, 0.8))
        for m in _FAMILY.finditer(clause):
            kin = m.group("kin").lower()
            found.append(
                Fact(f"has-{kin}", "relative", f"{speaker}'s {kin}", 0.65)
            )  # true, but says little: below the core.md floor
    unique: dict[tuple[str, str], Fact] = {}
    for fact in found:
        if fact.type in ("place", "pet") and is_stop_name(fact.name):
            continue
        unique.setdefault((fact.relation, fact.name.lower()), fact)
    return list(unique.values())
