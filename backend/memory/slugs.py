"""Safe, one-to-one file names for untrusted names (entity ids, project ids) inside one folder.

`safe_name(name)` is the name itself when that is already a plain lower-case file name
(`[a-z0-9][a-z0-9.-]*`, no `..`, not ending in `.`, not a Windows device name, <= 100 chars);
anything else becomes a readable lower-case ASCII part, `_`, and 16 hex digits of a hash of
the exact name. The two forms cannot meet (only the second has `_`), every result is lower
case (so no two differ only by case, which case-insensitive file systems would merge), and no
result holds a separator, NUL, `..` or a leading dot: nothing can leave the folder.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_PLAIN = re.compile(r"[a-z0-9][a-z0-9.-]{0,99}")
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", "clock$", "conin$", "conout$"}
    | {f"com{i}" for i in "0123456789¹²³"}
    | {f"lpt{i}" for i in "0123456789¹²³"}
)
_READABLE_MAX = 60


def _reserved(name: str) -> bool:
    stem = name.split(".", 1)[0]
    return stem in _RESERVED


def safe_name(name: str) -> str:
    """A file name (without extension) for `name`; distinct names give distinct results."""
    if _PLAIN.fullmatch(name) and ".." not in name and not name.endswith(".") and not _reserved(name):
        return name
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    readable = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")[:_READABLE_MAX].strip("-")
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{readable or 'x'}_{digest}"
