"""`opmem resume`: a stored session written into another agent's own store, to go on there.

    conversation.py  what is carried: the branch up to a turn, redacted unless raw (export's select)
    files.py         writing a new file whole into an agent's folder, never over one
    claude.py, codex.py, gemini.py, opencode.py   one target each: its format, where it looks, its command

`resume` picks the target; every target writes under a new id and adds nothing else but what the
agent needs to list that session (docs/resume.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from . import claude, codex, gemini, opencode
from .conversation import Conversation, ResumeError, conversation_of
from .files import Written

if TYPE_CHECKING:
    from ..store.sessions import SessionStore

TARGETS: dict[str, ModuleType] = {"claude": claude, "codex": codex, "gemini": gemini, "opencode": opencode}

__all__ = ["TARGETS", "Conversation", "ResumeError", "Written", "conversation_of", "resume"]


def resume(
    store: SessionStore,
    session_id: str,
    target: str,
    *,
    turn: int | None = None,
    branch: str | None = None,
    raw: bool = False,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Written:
    """Write the session (its branch, up to `turn`) into `target`'s store; what to run to go on."""
    writer = TARGETS.get(target)
    if writer is None:
        raise ResumeError(f"unknown agent {target!r} (one of {', '.join(TARGETS)})")
    conv = conversation_of(store, session_id, turn=turn, branch=branch, raw=raw)
    folder = cwd or conv.cwd or os.getcwd()
    return writer.write(conv, os.path.abspath(os.path.expanduser(folder)), os.environ if env is None else env)
