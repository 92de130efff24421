"""Close names for a name that matched nothing: what an error offers as "did you mean"."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rapidfuzz import fuzz, process, utils

SUGGESTIONS = 5
_CUTOFF = 60.0


def did_you_mean(query: str, choices: Mapping[str, str] | Iterable[str], limit: int = SUGGESTIONS) -> list[str]:
    """The keys of `choices` closest to `query`: prefixes first, then fuzzy matches (rapidfuzz).

    `choices` is either keys alone or {key: text to match, e.g. "id title"}.
    """
    table = dict(choices) if isinstance(choices, Mapping) else {key: key for key in choices}
    if not query or not table:
        return []
    needle = query.casefold()
    out: list[str] = [key for key in table if key.casefold().startswith(needle)][:limit]
    if len(out) < limit:
        found = process.extract(
            query,
            table,
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=limit + len(out),
            score_cutoff=_CUTOFF,
        )
        for _text, _score, key in found:
            if key not in out:
                out.append(key)
            if len(out) >= limit:
                break
    return out
