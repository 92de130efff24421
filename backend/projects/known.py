"""Projects the memory knows from sessions that no binding names, and which project a folder is in.

Read by naming (a project given by name), recall (a caller's scope) and the SessionStart hook
alike, so all of them agree on a folder's project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import OpmemError
from .registry import Project

if TYPE_CHECKING:
    from ..home import Home


def folder_projects(home: Home) -> list[Project]:
    """The projects the memory holds records of that no binding names: each folder's project
    entity (its name and workdir), status "folder"."""
    try:
        memory = home.memory_readonly()
        scopes = {s.split(":", 1)[1] for s in memory.scopes() if s.startswith("project:")}
        entities = memory.entity_records(["project"]) if scopes else ()
    except OpmemError:
        return []
    found: dict[str, Project] = {}
    for entity in entities:
        pid = entity.scope.split(":", 1)[1] if entity.scope.startswith("project:") else ""
        if pid in scopes and pid not in found:
            workdir = entity.attrs.get("workdir", "")
            found[pid] = Project(pid, entity.name, workdir if isinstance(workdir, str) else "", status="folder")
    return sorted(found.values(), key=lambda p: p.id)


NOT_HERE = "not on this machine"
PLAIN_FOLDER = "plain folder"


@dataclass(frozen=True, slots=True)
class UnboundProject:
    """A project the memory knows from sessions that no binding names: where its folder is."""

    id: str
    name: str
    workdir: str
    where: str  # NOT_HERE (synced from another machine, or removed) or PLAIN_FOLDER (here, no binding)


def unbound_projects(home: Home) -> list[UnboundProject]:
    """Every project the memory holds records of that no binding names, each with where it is."""
    bound = {p.id for p in home.projects.list_projects()}
    out = []
    for project in folder_projects(home):
        if project.id in bound:
            continue
        here = bool(project.workdir) and os.path.isdir(project.workdir)
        out.append(UnboundProject(project.id, project.name, project.workdir, PLAIN_FOLDER if here else NOT_HERE))
    return out


def project_of_folder(home: Home, folder: str | os.PathLike[str]) -> str:
    """The id of the project `folder` belongs to (projects/identity.py, as the SessionStart hook
    decides): a bound project by folder or repository, else a folder project the memory knows, or ""."""
    folders: set[str] | None = None

    def known(project_id: str) -> bool:
        nonlocal folders
        if folders is None:
            folders = {p.id for p in folder_projects(home)}
        return project_id in folders

    return home.projects.project_for(folder, known=known)
