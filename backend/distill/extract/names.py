"""People, places, organisations and activities named in a chat message, by patterns, no model.

Strict patterns carry a relation to the speaker ("I work at X" -> works-at, "my sister Anna"
-> has-sister, "went to a pottery class" -> attended); capitalised names elsewhere in a
sentence become mentions without a relation. `third_person` rewrites a statement so that an
event reads on its own ("I went" -> "Caroline went").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .dates import MONTHS, WEEKDAYS

KIN = (
    r"sister|brother|mom|mother|dad|father|husband|wife|partner|boyfriend|girlfriend|son|daughter|cousin|aunt|uncle|"
    r"grandma|grandmother|grandpa|grandfather|niece|nephew|best friend|friend|bff|boss|coworker|co-worker|colleague|"
    r"neighbor|neighbour|roommate|fiance|fiancee|fiancée|mentor|teacher|therapist|coach|dog|cat|puppy|kitten|pet|"
    r"horse|bird|rabbit|hamster|turtle"
)
PETS = frozenset({"dog", "cat", "puppy", "kitten", "pet", "horse", "bird", "rabbit", "hamster", "turtle"})
EVENT_NOUNS = (
    r"class|classes|course|workshop|group|meeting|meetup|conference|convention|concert|festival|party|parade|"
    r"trip|vacation|holiday|race|marathon|game|match|show|exhibition|exhibit|ceremony|wedding|camp|retreat|session|"
    r"lesson|lessons|tournament|fundraiser|event|hike|picnic|tour|rally|protest|performance|recital|audition|"
    r"interview|appointment|competition|fair|market|gala|service|club|program|programme|seminar|talk|"
    r"reunion|celebration|festival|drive|walk|run|ride|cruise"
)
PLACE_NOUNS = (
    r"beach|park|museum|gym|library|church|school|lake|mountains?|forest|zoo|aquarium|cafe|café|restaurant|bar|"
    r"hospital|office|studio|shelter|farm|garden|theater|theatre|cinema|mall|store|market|campsite|island|"
    r"countryside|city|downtown|pool|stadium|gallery|temple|mosque|bakery|river|coast|desert|canyon|trail"
)
HOBBIES = (
    r"pottery|yoga|photography|art|music|guitar|piano|violin|drums|poetry|chess|soccer|football|basketball|tennis|"
    r"golf|volleyball|baseball|hockey|karate|judo|ballet|salsa|theater|theatre|gardening|meditation|pilates|"
    r"crochet|knitting|sculpture|calligraphy|archery|fencing|surfing|skiing|snowboarding|climbing|kayaking|"
    r"camping|fishing|baking|cooking|painting|drawing|dancing|singing|swimming|running|hiking|cycling|reading|"
    r"writing|journaling|volunteering|skateboarding|bowling|boxing|rowing|sailing|horseback riding"
)
ORG_WORDS = (
    r"Inc|Corp|Corporation|LLC|Ltd|University|College|School|Academy|Institute|Club|Center|Centre|Foundation|"
    r"Association|Society|Company|Hospital|Clinic|Church|Bank|Group|Team|Band|Agency|Council|Museum|Library|"
    r"Studio|Studios|Cafe|Restaurant|Shelter|Network|Alliance|Organization|Organisation|Committee|Federation"
)
_NAME = r"[A-Z][\w'&.-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'&.-]*){0,3}"
_NOT_GERUND = frozenset(
    [
        "going",
        "doing",
        "thinking",
        "being",
        "having",
        "getting",
        "something",
        "nothing",
        "anything",
        "everything",
        "feeling",
        "looking",
        "saying",
        "trying",
        "making",
        "working",
        "morning",
        "evening",
        "thing",
        "king",
        "ring",
        "spring",
        "bring",
        "during",
        "wedding",
        "ceiling",
        "building",
        "sibling",
        "nothing",
        "amazing",
        "interesting",
        "exciting",
        "inspiring",
        "everything",
        "coming",
        "taking",
        "seeing",
        "hoping",
        "planning",
        "wondering",
        "talking",
        "telling",
        "asking",
        "keeping",
        "finding",
        "giving",
        "wanting",
        "needing",
        "loving",
        "liking",
        "putting",
        "letting",
        "sitting",
        "standing",
        "traumatizing",
        "breathtaking",
        "creating",
        "paying",
        "chasing",
        "learning",
        "helping",
        "playing",
        "caring",
        "sharing",
        "spending",
        "struggling",
        "dealing",
        "missing",
        "waiting",
        "living",
        "moving",
        "starting",
        "leaving",
        "meeting",
        "using",
        "reaching",
        "becoming",
        "growing",
        "changing",
        "supporting",
        "encouraging",
        "challenging",
        "rewarding",
        "relaxing",
        "fascinating",
        "touching",
        "heartwarming",
        "overwhelming",
        "surprising",
        "stunning",
        "refreshing",
        "satisfying",
        "calming",
        "soothing",
        "uplifting",
        "empowering",
    ]
)
STOP = (
    frozenset(
        [
            "i",
            "i'm",
            "i've",
            "i'll",
            "i'd",
            "the",
            "a",
            "an",
            "and",
            "but",
            "or",
            "so",
            "hey",
            "hi",
            "hello",
            "wow",
            "thanks",
            "thank",
            "oh",
            "yeah",
            "yes",
            "no",
            "nope",
            "ok",
            "okay",
            "sure",
            "great",
            "awesome",
            "cool",
            "nice",
            "good",
            "love",
            "lol",
            "haha",
            "omg",
            "aww",
            "congrats",
            "congratulations",
            "sounds",
            "that",
            "this",
            "these",
            "those",
            "it",
            "its",
            "it's",
            "what",
            "where",
            "when",
            "why",
            "how",
            "who",
            "which",
            "my",
            "your",
            "our",
            "their",
            "his",
            "her",
            "we",
            "you",
            "they",
            "he",
            "she",
            "me",
            "us",
            "them",
            "just",
            "also",
            "really",
            "totally",
            "absolutely",
            "definitely",
            "anyway",
            "well",
            "ah",
            "hmm",
            "btw",
            "by",
            "for",
            "from",
            "in",
            "on",
            "at",
            "to",
            "with",
            "of",
            "if",
            "not",
            "do",
            "did",
            "does",
            "is",
            "was",
            "are",
            "were",
            "be",
            "been",
            "have",
            "has",
            "had",
            "can",
            "could",
            "will",
            "would",
            "should",
            "may",
            "might",
            "must",
            "let",
            "let's",
            "here",
            "there",
            "then",
            "now",
            "today",
            "yesterday",
            "tomorrow",
            "mr",
            "mrs",
            "ms",
            "dr",
            "mom",
            "dad",
            "god",
            "yep",
            "yup",
            "hahaha",
            "wanna",
            "gonna",
            "gotta",
            "sorry",
            "please",
            "glad",
            "same",
            "true",
            "right",
            "exactly",
            "agreed",
            "indeed",
            "honestly",
            "seriously",
            "cheers",
            "bye",
            "see",
            "take",
            "keep",
            "stay",
            "thx",
            "ty",
            "happy",
            "best",
            "dear",
            "aw",
            "ooh",
            "whoa",
            "yay",
            "hope",
        ]
    )
    | frozenset(MONTHS)
    | frozenset(WEEKDAYS)
)

KIN_RX = re.compile(
    rf"\b[Mm]y\s+(?:(?:little|big|older|younger|elder|best|late|dear|new|ex|twin|baby)[- ]?)?({KIN})(?:,)?\s+(?:named\s+|called\s+)?([A-Z][a-z]+)\b"
)
WORK_RX = re.compile(
    rf"\bI(?:'m| am)?\s+(?:work|working|worked|started working|got a job|got hired|interned|interning|volunteer|volunteering|volunteered)\s+"
    rf"(?:at|for|with)\s+(?:(?:a|an|the)\s+)?({_NAME}|[a-z]+(?:\s+[a-z]+){{0,2}}?\s+(?:{PLACE_NOUNS}|company|firm|startup|agency|nonprofit|charity|organization|organisation|center|centre))\b"
)
LIVE_RX = re.compile(
    rf"\bI(?:'ve|'m| am| have)?\s+(?:live|lived|living|moved|moving|relocated|relocating)\s+(to|in|from)\s+(?:the\s+)?({_NAME})"
)
VISIT_RX = re.compile(
    rf"\b(went|go|goes|going|been|travel+ed|travel+ing|flew|fly|drove|trip|visit(?:ed|ing)?|vacation(?:ed)?|stayed)\s+"
    rf"(?:to|in|at|around|across)?\s*(?:the\s+)?({_NAME}|(?:{PLACE_NOUNS})\b)"
)
ATTEND_RX = re.compile(
    rf"\b(went to|attended|attend|attending|joined|join|joining|signed up for|participated in|took part in|going to|go to|"
    rf"volunteered at|ran|running|hosted|hosting|organized|organised|organizing|organising|started)\s+"
    rf"(?:(?:a|an|the|my|our|this|that|some|her|his|their)\s+)?((?:[\w'+#-]+\s+){{0,3}}?(?:{EVENT_NOUNS}))\b",
    re.IGNORECASE,
)
ACTIVITY_RX = re.compile(
    rf"\b(love|loves|loved|like|likes|liked|enjoy|enjoys|enjoyed|(?:I'm|I am|am|is|are|really|so) into|started|start|"
    rf"tried|try|took up|take up|go|goes|went|going|practice|practices|practiced|practicing|practising)\s+"
    rf"(?:to\s+)?(?:the\s+|some\s+)?(\w+ing|{HOBBIES})\b"
    rf"|\b(play|plays|played|playing|learn|learning|learned|learnt|teach|teaching|taught)\s+(?:the\s+)?({HOBBIES})\b",
    re.IGNORECASE,
)
ORG_RX = re.compile(rf"\b((?:[A-Z][\w'&.-]*\s+){{1,4}}(?:{ORG_WORDS}))\b")
PROPER_RX = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,}(?:\s+[A-Z][a-z]{2,}){0,2})\b")
_LIKE = {"love", "loves", "loved", "like", "likes", "liked", "enjoy", "enjoys", "enjoyed", "into"}
_PERSON_BEFORE = re.compile(
    r"(?:\b(?:with|and|told|met|named|called|hey|hi|thanks,?|thank you,?|dear|love,?)\s+)$", re.I
)
_PERSON_AFTER = re.compile(r"(?:'s\b|’s\b| and I\b| said\b| told\b| says\b| and me\b|!|,)")
_PLACE_PREP = re.compile(r"\b(?:in|at|to|from|near|visit(?:ed|ing)?|around|across|toward|towards)\s+(?:the\s+)?$")


@dataclass(frozen=True, slots=True)
class Mention:
    type: str  # person | place | organisation | activity | pet | concept
    name: str
    relation: str = ""  # from the subject (the speaker unless said otherwise)
    subject: str = "speaker"
    confidence: float = 0.8


def _clean(name: str) -> str:
    return re.sub(r"[\s'’]+$|[.,;:!?]+$", "", name.strip()).strip()


def is_stop_name(name: str) -> bool:
    """A "name" that is a common word (a greeting, a pronoun, a month...): not a name."""
    words = name.split()
    return not words or words[0].lower() in STOP or all(w.lower() in STOP for w in words)


_is_stop = is_stop_name


def _strict(text: str) -> list[Mention]:
    found: list[Mention] = []
    for kin, name in KIN_RX.findall(text):
        kin = kin.lower().replace(" ", "-")
        if not _is_stop(name):
            found.append(Mention("pet" if kin in PETS else "person", name, f"has-{kin}", confidence=0.9))
    for name in WORK_RX.findall(text):
        name = _clean(name)
        if name and not _is_stop(name):
            found.append(Mention("organisation", name, "works-at", confidence=0.85))
    for prep, name in LIVE_RX.findall(text):
        name = _clean(name)
        if name and not _is_stop(name):
            relation = "moved-from" if prep == "from" else "lives-in"
            found.append(Mention("place", name, relation, confidence=0.85))
    for verb, name in VISIT_RX.findall(text):
        name = _clean(name)
        if name and not _is_stop(name) and not ATTEND_RX.match(name):
            relation = "plans-to-visit" if verb == "going" else "visited"  # "going to Paris": not yet been
            found.append(Mention("place", name.lower() if name.islower() else name, relation, confidence=0.7))
    for verb, phrase in ATTEND_RX.findall(text):
        phrase = _clean(phrase.lower())
        words = [
            w for w in phrase.split() if w not in ("a", "an", "the", "my", "our", "some", "to", "of", "into", "in")
        ]
        if words:
            relation = (
                "organized"
                if verb.lower()
                in (
                    "hosted",
                    "hosting",
                    "organized",
                    "organised",
                    "organizing",
                    "organising",
                    "ran",
                    "running",
                    "started",
                )
                else "attended"
            )
            found.append(Mention("activity", " ".join(words), relation, confidence=0.75))
    for match in ACTIVITY_RX.finditer(text):
        verb = (match.group(1) or match.group(3) or "").lower()
        activity = (match.group(2) or match.group(4) or "").lower()
        if activity in _NOT_GERUND or len(activity) < 4:
            continue
        relation = "likes" if verb in _LIKE or verb.endswith(" into") else "does"
        found.append(Mention("activity", activity, relation, confidence=0.7))
    for name in ORG_RX.findall(text):
        name = _clean(name)
        if not _is_stop(name):
            found.append(Mention("organisation", name, confidence=0.7))
    return found


def find_mentions(text: str, *, speakers: Sequence[str] = (), known: dict[str, str] | None = None) -> list[Mention]:
    """Every mention of a message, strict ones first, without duplicates (same type and name).

    `known` (lower-case name -> type) carries what earlier messages established, so a name
    typed `person` once stays one; it is updated in place.
    """
    known = {} if known is None else known
    found = _strict(text)
    taken = {m.name.lower() for m in found}
    speaker_names = {s.lower(): s for s in speakers}
    for match in PROPER_RX.finditer(text):
        name = _clean(match.group(1))
        low = name.lower()
        if low in taken or _is_stop(name) or any(low in t for t in taken):
            continue
        taken.add(low)
        if low in speaker_names:
            found.append(Mention("person", speaker_names[low], confidence=0.9))
            continue
        if low in known:
            found.append(Mention(known[low], name, confidence=0.6))
            continue
        if len(low) >= 3 and " " not in low and any(s.startswith(low) for s in speaker_names):
            known[low] = "person"  # a short form of a speaker's name (Mel for Melanie)
            found.append(Mention("person", name, confidence=0.7))
            continue
        before = text[max(0, match.start() - 24) : match.start()]
        after = text[match.end() : match.end() + 12]
        if _PLACE_PREP.search(before):
            kind = "place"
        elif " " not in name and (_PERSON_BEFORE.search(before) or _PERSON_AFTER.match(after)):
            kind = "person"
        else:
            kind = "concept"
        if kind != "concept":
            known[low] = kind
        found.append(Mention(kind, name, confidence=0.5))
    for mention in found:
        if mention.type in ("person", "place", "organisation"):
            known.setdefault(mention.name.lower(), mention.type)
    unique: dict[tuple[str, str, str], Mention] = {}
    for mention in found:
        unique.setdefault((mention.type, mention.name.lower(), mention.relation), mention)
    return list(unique.values())


_INTERJECTION = re.compile(
    r"^(?:hey|hi|hello|wow|thanks|thank you|oh|yeah|yes|no|ok|okay|sure|great|awesome|cool|nice|lol|haha|aww|congrats|"
    r"congratulations|sounds (?:great|good|fun|amazing)|that's (?:great|awesome|amazing|cool|so cool|wonderful)|bye|"
    r"take care|talk (?:to you )?soon)\b[^.!?]{0,40}[.!?]*$",
    re.IGNORECASE,
)


def is_statement(sentence: str) -> bool:
    """A sentence that states something: not a question, not a bare greeting or cheer."""
    text = sentence.strip()
    if not text or text.endswith("?") or _INTERJECTION.match(text):
        return False
    return len(text.split()) >= 4


_FIRST_PERSON = [
    (re.compile(r"\bI'm\b|\bI am\b"), "{s} is"),
    (re.compile(r"\bI've\b|\bI have\b"), "{s} has"),
    (re.compile(r"\bI'd\b"), "{s} would"),
    (re.compile(r"\bI'll\b"), "{s} will"),
    (re.compile(r"\bI was\b"), "{s} was"),
    (re.compile(r"\bI\b"), "{s}"),
    (re.compile(r"\b[Mm]yself\b"), "{s}"),
    (re.compile(r"\b[Mm]y\b"), "{s}'s"),
    (re.compile(r"\b[Mm]ine\b"), "{s}'s"),
    (re.compile(r"(?<!['’])\b[Mm]e\b(?!-)"), "{s}"),
]
_SECOND_PERSON = [
    (re.compile(r"\b[Yy]ou're\b|\b[Yy]ou are\b"), "{a} is"),
    (re.compile(r"\b[Yy]ou've\b"), "{a} has"),
    (re.compile(r"\b[Yy]ou'll\b"), "{a} will"),
    (re.compile(r"\b[Yy]ou'd\b"), "{a} would"),
    (re.compile(r"\b[Yy]ours\b"), "{a}'s"),
    (re.compile(r"\b[Yy]our\b"), "{a}'s"),
    (re.compile(r"\b[Yy]ourself\b"), "{a}"),
    (re.compile(r"\b[Yy]ou\b"), "{a}"),
]


def third_person(sentence: str, speaker: str, addressee: str = "") -> str:
    """`I went to my class` said by Caroline -> `Caroline went to Caroline's class`."""
    out = sentence
    for pattern, template in _FIRST_PERSON:
        out = pattern.sub(lambda _m, t=template: t.format(s=speaker), out)
    if addressee:
        for pattern, template in _SECOND_PERSON:
            out = pattern.sub(lambda _m, t=template: t.format(a=addressee), out)
    return out
