"""From any user text to what the index can take: terms, an FTS5 expression, names and dates.

Every input is valid: FTS5 syntax characters, quotes, NEAR, `*`, an empty or a very long text
all become a plain OR of quoted terms (or no query at all), never an FTS5 syntax error. Terms
are letters and digits only (the index's unicode61 tokenizer splits on everything else), so a
quoted term cannot hold a quote.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime

MAX_TERMS = 24
MAX_QUERY_CHARS = 4000
_TERM = re.compile(r"[^\W_]+", re.UNICODE)

# Function words, and the words every question is made of: they carry no topic. Chosen as a
# list of English grammar words, not from any benchmark's questions.
_STOPWORD_TEXT = """
a about above after again against all am an and any are aren as at be because been before being
below between both but by can cannot could couldn did didn do does doesn doing don down during each
few for from further had hadn has hasn have haven having he her here hers herself him himself his
how i if in into is isn it its itself just ll me might more most must my myself no nor not now of
off on once only or other ought our ours ourselves out over own re s same shall she should so some
such t than that the their theirs them themselves then there these they this those through to too
under until up ve very was wasn we were weren what when where which while who whom whose why will
with won would wouldn you your yours yourself yourselves d m o y
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS.pop("may", None)  # "may" is a verb far more often; "May" with a year or a day is read below
_YEAR = r"(19\d\d|20\d\d)"
_MONTH_NAMES = "|".join(sorted((n for n in _MONTHS), key=len, reverse=True)) + "|may"
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_NAMES})\.?,?\s+{_YEAR}\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)
_MONTH_ALONE = re.compile(rf"\b(?:in|during|since|until|of|last|this|early|late|mid)\s+({_MONTH_NAMES})\b", re.I)
_YEAR_ALONE = re.compile(rf"\b(?:in|during|since|until|of|year)\s+{_YEAR}\b", re.I)


@dataclass(frozen=True, slots=True)
class DateRange:
    """[start, end) in epoch seconds (UTC); `month` set for a month named without a year."""

    start: float | None
    end: float | None
    month: int | None = None

    def contains(self, when: float) -> bool:
        if self.month is not None:
            return datetime.fromtimestamp(when, UTC).month == self.month
        return (self.start is None or when >= self.start) and (self.end is None or when < self.end)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    terms: tuple[str, ...]  # lower-cased, stopwords out (all kept when nothing else is left)
    words: tuple[str, ...]  # every lower-cased word, in order (for name matching)
    dates: tuple[DateRange, ...]

    @property
    def empty(self) -> bool:
        return not self.terms

    def fts(self, terms: tuple[str, ...] | None = None) -> str:
        """An FTS5 expression: the quoted terms joined by OR ("" when there is nothing to look for)."""
        return " OR ".join(f'"{t}"' for t in (self.terms if terms is None else terms))


def parse_query(text: object) -> ParsedQuery:
    raw = text if isinstance(text, str) else ""
    raw = raw[:MAX_QUERY_CHARS]
    words = tuple(w.lower() for w in _TERM.findall(raw))
    content = [w for w in words if w not in STOPWORDS]
    chosen = content or list(words)
    terms = tuple(dict.fromkeys(chosen))[:MAX_TERMS]
    return ParsedQuery(text=raw, terms=terms, words=words, dates=tuple(find_dates(raw)))


def _month(name: str) -> int:
    return _MONTHS.get(name.lower().rstrip("."), 5)  # only "may" is missing from the table


def _span(year: int, month: int | None = None, day: int | None = None) -> DateRange | None:
    try:
        if day is not None and month is not None:
            start = datetime(year, month, day, tzinfo=UTC)
            end = datetime.fromtimestamp(start.timestamp() + 86400, UTC)
        elif month is not None:
            start = datetime(year, month, 1, tzinfo=UTC)
            end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
        else:
            start = datetime(year, 1, 1, tzinfo=UTC)
            end = datetime(year + 1, 1, 1, tzinfo=UTC)
    except ValueError:
        return None
    return DateRange(start.timestamp(), end.timestamp())


def find_dates(text: str) -> list[DateRange]:
    """Explicit dates in a question: ISO days, "7 May 2023", "May 7, 2023", "June 2023", "in June", "in 2022"."""
    found: list[DateRange] = []
    taken: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        return not any(a < match.end() and match.start() < b for a, b in taken)

    def add(match: re.Match[str], span: DateRange | None) -> None:
        if span is not None:
            found.append(span)
            taken.append((match.start(), match.end()))

    for m in _ISO_DATE.finditer(text):
        add(m, _span(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _DAY_MONTH_YEAR.finditer(text):
        if free(m):
            add(m, _span(int(m.group(3)), _month(m.group(2)), int(m.group(1))))
    for m in _MONTH_DAY_YEAR.finditer(text):
        if free(m):
            add(m, _span(int(m.group(3)), _month(m.group(1)), int(m.group(2))))
    for m in _MONTH_YEAR.finditer(text):
        if free(m):
            add(m, _span(int(m.group(2)), _month(m.group(1))))
    for m in _MONTH_ALONE.finditer(text):
        name = m.group(1)
        if free(m) and (name.lower() != "may" or name[0] == "M"):
            add(m, DateRange(None, None, month=_month(name)))
    for m in _YEAR_ALONE.finditer(text):
        if free(m):
            add(m, _span(int(m.group(1))))
    return found
