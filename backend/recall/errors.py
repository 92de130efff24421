"""Structured recall errors: a code, a message, and "did you mean" suggestions for unknown ids."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rapidfuzz import fuzz, process, utils

from ..model import OpmemError

# Codes an agent can branch on; the message says the same thing in words.
UNKNOWN_SESSION = "unknown_session"
UNKNOWN_TURN = "unknown_turn"
UNKNOWN_BRANCH = "unknown_branch"
UNKNOWN_NODE = "unknown_node"
UNKNOWN_PROJECT = "unknown_project"
UNKNOWN_COMMIT = "unknown_commit"
UNKNOWN_PATH = "unknown_path"
UNKNOWN_ENTITY = "unknown_entity"
AMBIGUOUS_ENTITY = "ambiguous_entity"
UNKNOWN_TOOL = "unknown_tool"
BAD_ARGUMENT = "bad_argument"
NO_PROJECT = "no_project"
NO_HISTORY = "no_history"  # a project with no git repository here (known from sessions, or its folder gone)
STORE_ERROR = "store_error"
PRIVATE = "private"  # a private session or an excluded project: kept out of recall (backend/privacy/exclusions.py)

SUGGESTIONS = 5
_CUTOFF = 60.0


class RecallError(OpmemError):
    """A tool call that cannot be answered; `to_json` is the reply the caller gets."""

    def __init__(self, code: str, message: str, suggestions: Iterable[str] = ()) -> None:
        self.code = code
        self.message = message
        self.suggestions = tuple(suggestions)
        super().__init__(message + (f" (did you mean: {', '.join(self.suggestions)}?)" if self.suggestions else ""))

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.suggestions:
            error["did_you_mean"] = list(self.suggestions)
        return {"error": error}


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
