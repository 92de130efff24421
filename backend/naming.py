"""One way to name a session or a project, in every command, tool and screen.

A session is named by its id, a unique prefix of its id, or its title; a project by its id, its
name, or a unique prefix of either; no project named means the current folder's. An unknown or
ambiguous name is an error that names the candidates. The project registry (backend/projects)
stays the authority on what a project is; this module only finds one by what a user typed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .model import OpmemError, SessionMeta, SessionNotFound, check_session_id
from .projects.known import folder_projects, project_of_folder
from .projects.registry import Project, ProjectNotFound
from .session_pointers import POINTER_PREFIX
from .suggestions import did_you_mean

if TYPE_CHECKING:
    from .home import Home

SHOWN_CANDIDATES = 10


class AmbiguousName(OpmemError):
    """A name more than one session or project answers to; `candidates` are their ids."""

    def __init__(self, message: str, candidates: Sequence[str]) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


class NoProjectHere(OpmemError):
    """No project given, and the current folder is in none."""


def _listing(candidates: Sequence[str]) -> str:
    shown = "\n  ".join(candidates[:SHOWN_CANDIDATES])
    more = f"\n  … and {len(candidates) - SHOWN_CANDIDATES} more" if len(candidates) > SHOWN_CANDIDATES else ""
    return f"\n  {shown}{more}"


def _one(text: str, found: Sequence[str], how: str) -> str | None:
    """The single id in `found`; None for none; AmbiguousName for several (`how`: "the start
    of {n} session ids")."""
    if len(found) == 1:
        return found[0]
    if found:
        ids = sorted(found)
        said = how.format(n=len(ids))
        raise AmbiguousName(f"{text!r} is {said}; give more of it:{_listing(ids)}", ids)
    return None


def session_id(home: Home, text: str, *, hidden: Callable[[SessionMeta], bool] | None = None) -> str:
    """The id of the session `text` names: its id (or `session:<id>`), a prefix only one id
    starts with (core.md's short pointers are such prefixes: backend/session_pointers), or a title only one session has (case aside). `hidden` sessions are not
    candidates (recall keeps private ones out)."""
    wanted = text.strip()
    if wanted.startswith(POINTER_PREFIX):
        wanted = wanted[len(POINTER_PREFIX) :]
    store = home.sessions
    invalid: OpmemError | None = None
    try:
        check_session_id(wanted)  # "../etc" is never a path; it may still be a title
    except OpmemError as exc:
        invalid = exc
    as_id = invalid is None
    metas = [m for m in store.list_sessions().sessions if hidden is None or not hidden(m)]
    if as_id and any(m.id == wanted for m in metas):
        return wanted
    if as_id and hidden is None and store.exists(wanted):  # listed or not (e.g. being written)
        return wanted
    if as_id:
        found = _one(wanted, [m.id for m in metas if m.id.startswith(wanted)], "the start of {n} session ids")
        if found is not None:
            return found
    folded = wanted.casefold()
    found = _one(wanted, [m.id for m in metas if m.display_title.casefold() == folded], "the title of {n} sessions")
    if found is not None:
        return found
    if invalid is not None:
        raise invalid
    choices = {m.id: f"{m.id} {m.display_title}" for m in metas}
    close = did_you_mean(wanted, choices)
    hint = f"; did you mean:{_listing(close)}" if close else ""
    raise SessionNotFound(f"no session {wanted!r} (by id, id prefix or title) in {store.root}{hint}")


def project(home: Home, text: str | None = None, *, cwd: str | os.PathLike[str] | None = None) -> Project:
    """The project `text` names (id, name, or a unique prefix of either), else the current
    folder's (`cwd`, default the process's). Projects the memory knows by a folder no binding
    names count too (recall.context.folder_projects)."""
    bound = home.projects.list_projects()
    exact = next((p for p in bound if text and p.id == text.strip()), None)
    if exact is not None:  # a bound project's own id: no need to read the memory for folder projects
        return exact
    known = {p.id: p for p in bound}
    for extra in folder_projects(home):
        known.setdefault(extra.id, extra)
    if not text:
        here = project_of_folder(home, Path.cwd() if cwd is None else cwd)
        if here in known:
            return known[here]
        names = sorted(f"{p.name} ({p.id})" for p in known.values())
        listing = f"; give one of:{_listing(names)}" if names else "; none is bound yet (opmem projects add PATH)"
        raise NoProjectHere(f"no project given, and {Path.cwd() if cwd is None else cwd} is in none{listing}")
    wanted = text.strip()
    if wanted in known:
        return known[wanted]
    for test, how in (
        (lambda p: p.name == wanted, "the name of {n} projects"),
        (lambda p: p.name.casefold() == wanted.casefold(), "the name of {n} projects"),
        (
            lambda p: p.id.startswith(wanted) or p.name.casefold().startswith(wanted.casefold()),
            "the start of {n} projects",
        ),
    ):
        found = _one(wanted, [p.id for p in known.values() if test(p)], how)
        if found is not None:
            return known[found]
    close = did_you_mean(wanted, {p.id: f"{p.id} {p.name}" for p in known.values()})
    hint = f"; did you mean:{_listing(close)}" if close else ""
    raise ProjectNotFound(f"no project {wanted!r} (by id, name or prefix){hint}")
