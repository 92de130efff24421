"""Relative and absolute dates in conversation text, resolved against the session's date.

Only phrases of a closed grammar are read ("yesterday", "last Saturday", "two weeks ago",
"next month", "in May 2022", "on 8 May", ...): that is the guard against false matches such
as "We" read as Wednesday or the verb "may" read as May. Each phrase found is resolved with
`dateparser` against the message's own time (its relative base), then given the granularity
the phrase speaks of (a day, a week, a weekend, a month, a season, a year).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "weds": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple of": 2,
    "a couple of": 2,
    "couple": 2,
    "few": 3,
    "a few": 3,
    "several": 3,
}
_FULL_NAMES = {w for w in WEEKDAYS if w.endswith("day")} | {
    m for m in MONTHS if (len(m) > 3 and m != "sept") or m == "may"
}
_WD = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_MON = "|".join(m.capitalize() for m in sorted(MONTHS, key=len, reverse=True))
_NUM = r"\d{1,2}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_UNIT = r"days?|weeks?|months?|years?"
_PERIOD = r"weekend|week|month|year|summer|winter|spring|fall|autumn|night|morning|afternoon|evening"

PHRASE = re.compile(
    rf"(?P<simple>\b(?:the day before yesterday|day before yesterday|yesterday|today|tonight|tomorrow|last night)\b)"
    rf"|(?P<ago>\b(?:{_NUM})\s+(?:{_UNIT})\s+(?:ago|back|earlier)\b)"
    rf"|(?P<ahead>\b(?:in|within)\s+(?:{_NUM})\s+(?:{_UNIT})\b|\b(?:{_NUM})\s+(?:{_UNIT})\s+from now\b)"
    rf"|(?P<rel>\b(?:last|next|this past|this coming|this|past|coming|earlier this|later this)\s+(?:{_PERIOD})\b)"
    rf"|(?P<wd>\b(?:last|next|this|this past|this coming|on|past|coming)\s+(?:{_WD})\b\.?)"
    rf"|(?P<abs>\b(?:on\s+)?(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MON})\.?(?:,?\s+\d{{4}})?"
    rf"|(?:{_MON})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?)\b)"
    rf"|(?P<month>\b(?:in|since|until|during|last|next|this|early|late|mid|of)\s+(?:{_MON})(?:\s+(?:of\s+)?\d{{4}})?\b"
    rf"|\b(?:{_MON})\s+\d{{4}}\b)"
    rf"|(?P<year>\b(?:in|since|back in|until|during|of)\s+(?:19[5-9]\d|20[0-4]\d)\b)",
    re.IGNORECASE,
)
_FUTURE_HINT = re.compile(
    r"\b(will|going to|gonna|plan(?:ning)?|next|upcoming|soon|can't wait|looking forward)\b", re.I
)


@dataclass(frozen=True, slots=True)
class ResolvedDate:
    phrase: str  # as written
    start: dt.date  # the first day of what it names
    granularity: str  # day | week | weekend | month | season | year
    label: str  # "7 May 2023", "week of 1 May 2023", "May 2023", "summer 2022", "2022"

    @property
    def iso(self) -> str:
        return self.start.isoformat()


def _label(start: dt.date, granularity: str) -> str:
    day = f"{start.day} {start.strftime('%B')} {start.year}"
    if granularity == "week":
        return f"week of {day}"
    if granularity == "weekend":
        return f"weekend of {day}"
    if granularity == "month":
        return f"{start.strftime('%B')} {start.year}"
    if granularity == "season":
        name = {3: "spring", 6: "summer", 9: "autumn", 12: "winter"}[start.month]
        return f"{name} {start.year}"
    if granularity == "year":
        return str(start.year)
    return day


def _parse(text: str, base: dt.datetime, prefer: str) -> dt.datetime | None:
    return _cached_parse(text, base.replace(second=0, microsecond=0), prefer)


@lru_cache(maxsize=4096)
def _cached_parse(text: str, base: dt.datetime, prefer: str) -> dt.datetime | None:
    import dateparser  # a heavy import: only runs that meet a date phrase pay for it

    return dateparser.parse(
        text,
        languages=["en"],
        settings={"RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer, "RETURN_AS_TIMEZONE_AWARE": False},
    )


def _numbers(text: str) -> str:
    """`a couple of days ago` -> `2 days ago`: dateparser reads digits."""
    for word in sorted(NUMBERS, key=len, reverse=True):
        text = re.sub(rf"\b{word}\b(?=\s+(?:{_UNIT}))", str(NUMBERS[word]), text)
    return re.sub(r"\b(back|earlier)$", "ago", text)


def _week_start(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _relative_period(words: list[str], base: dt.date) -> tuple[dt.date, str] | None:
    which, unit = " ".join(words[:-1]), words[-1]
    step = -1 if which in ("last", "past", "this past") else 1 if which in ("next", "coming", "this coming") else 0
    if unit in ("night",):
        return (base - dt.timedelta(days=1) if which == "last" else base), "day"
    if unit in ("morning", "afternoon", "evening"):
        return base, "day"
    if unit == "week":
        return _week_start(base) + dt.timedelta(weeks=step), "week"
    if unit == "weekend":
        saturday = _week_start(base) + dt.timedelta(days=5)
        if step < 0 or (step == 0 and base.weekday() < 5 and which in ("this past",)):
            saturday -= dt.timedelta(weeks=1)
        elif step > 0 and base.weekday() >= 5:
            saturday += dt.timedelta(weeks=1)
        return saturday, "weekend"
    if unit == "month":
        month = base.month - 1 + step
        return dt.date(base.year + month // 12, month % 12 + 1, 1), "month"
    if unit == "year":
        return dt.date(base.year + step, 1, 1), "year"
    if unit in SEASONS:
        start_month = SEASONS[unit]
        year = base.year if start_month != 12 or base.month == 12 else base.year - 1
        this_start = dt.date(year, start_month, 1)
        if step < 0:
            return dt.date(this_start.year - 1, start_month, 1), "season"
        if step > 0:
            return dt.date(this_start.year + (1 if this_start <= base else 0), start_month, 1), "season"
        return this_start, "season"
    return None


def resolve(phrase: str, kind: str, when: dt.datetime, sentence: str = "") -> ResolvedDate | None:
    """One phrase the grammar matched, resolved against `when` (the message's time)."""
    text = " ".join(phrase.lower().rstrip(".").split())
    base = when.date()
    if kind == "rel":
        words = text.replace("earlier this", "this").replace("later this", "this").split()
        found = _relative_period(words, base)
        if found is None:
            return None
        return ResolvedDate(phrase, found[0], found[1], _label(found[0], found[1]))
    prefer = "future" if kind == "ahead" or _FUTURE_HINT.search(sentence) else "past"
    if kind == "wd":
        which, name = text.rsplit(" ", 1)
        if which in ("next", "coming", "this coming"):
            prefer = "future"
        elif which in ("last", "past", "this past"):
            prefer = "past"
        text = f"{'next' if prefer == 'future' and which != 'last' else 'last'} {name}"
    if kind in ("month", "year", "abs"):
        text = re.sub(r"^(on|in|since|until|during|back in|of|early|late|mid|this|next|last)\s+", "", text)
    parsed = _parse(_numbers(text), when.replace(tzinfo=None), prefer)
    if parsed is None:
        return None
    start = parsed.date()
    granularity = "day"
    if kind in ("ago", "ahead"):
        unit = re.search(_UNIT, text)
        granularity = (
            {"day": "day", "week": "week", "month": "month", "year": "year"}[unit.group(0).rstrip("s")]
            if unit
            else "day"
        )
        if granularity == "week":
            start = _week_start(start)
        elif granularity == "month":
            start = start.replace(day=1)
        elif granularity == "year":
            start = dt.date(start.year, 1, 1)
    elif kind == "month":
        granularity, start = "month", start.replace(day=1)
    elif kind == "year":
        granularity, start = "year", dt.date(start.year, 1, 1)
    return ResolvedDate(phrase, start, granularity, _label(start, granularity))


def find_dates(text: str, when: dt.datetime) -> list[ResolvedDate]:
    """Every date phrase of `text`, resolved against `when`."""
    out: list[ResolvedDate] = []
    for match in PHRASE.finditer(text):
        kind = match.lastgroup or ""
        phrase = match.group(0)
        if phrase.endswith(".") and phrase[:-1].rsplit(None, 1)[-1].lower() in _FULL_NAMES:
            phrase = phrase[:-1]  # the sentence's full stop, not an abbreviation's ("Sat.", "Aug.")
        if kind in ("wd", "month", "abs") and not _capitalized_name(phrase):
            continue
        start = max(0, text.rfind(".", 0, match.start()) + 1)
        end = text.find(".", match.end())
        sentence = text[start : end if end >= 0 else len(text)]
        resolved = resolve(phrase, kind, when, sentence)
        if resolved is not None:
            out.append(resolved)
    return out


def _capitalized_name(phrase: str) -> bool:
    """Month names must be written as names (the verb `may`); weekday abbreviations too, unless after last/next."""
    words = re.findall(r"[A-Za-z]+", phrase)
    lowered = [w.lower() for w in words]
    for word, low in zip(words, lowered, strict=True):
        if low in MONTHS:
            return word[0].isupper()
        if low in WEEKDAYS:
            full = low.endswith("day")
            return full or word[0].isupper() or (len(lowered) > 1 and lowered[0] in ("last", "next"))
    return True
