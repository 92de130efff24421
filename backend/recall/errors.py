"""Structured recall errors: a code, a message, and "did you mean" suggestions for unknown ids."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import OpmemError
from ..suggestions import SUGGESTIONS, did_you_mean  # noqa: F401  (recall's modules name it from here)

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
