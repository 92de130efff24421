"""The project a folder stands for when no binding names it: an id and a name from its path alone.

`ProjectRegistry.resolve_project` gives a repository at a path the same id, so the memory of a
folder that is not a repository here (a session from another machine, a scratch folder) has a
project, and keeps it once one is bound. Pure: no git, no files (privacy and the distiller use it).
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["folder_project", "project_slug", "stands_for_a_project"]


def project_slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return slug[:40].rstrip("-._") or "project"


# a home folder, the root, /tmp: where sessions start that belong to no project (quick questions)
_NOT_A_PROJECT = re.compile(r"^/(?:(?:home|Users)/[^/]+|root|tmp|var/tmp)?/?$")


def stands_for_a_project(path: str) -> bool:
    """Whether a session folder no binding names is taken as a project of its own."""
    return path.startswith("/") and not _NOT_A_PROJECT.match(posixpath.normpath(path))


def folder_project(path: str) -> tuple[str, str]:
    """(id, name) of the project the folder at `path` stands for."""
    import hashlib  # here: the SessionStart hook imports this module and rarely needs it

    root = posixpath.normpath(path)
    name = posixpath.basename(root) or "project"
    digest = hashlib.sha1(root.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    return f"{project_slug(name)}-{digest}", name
