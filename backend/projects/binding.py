"""Imported sessions meet projects: bind a session to the git repository its cwd lies in, and
link the project's commits made during the session to its turns.

`ProjectBinder` is the importers' default `on_project` hook (run_import, Watcher, the CLI):
- a cwd that exists here and lies in a non-bare git work tree binds the session to that
  repository's root (registry.resolve_project, which reuses the user's `.git`), adds it to the
  project's session list and sets `project_id` in the session's meta.json;
- a cwd that is gone, outside any repository, in a bare repository, or whose repository root is
  $HOME, `/` or inside the opmem home binds nothing.
It also remembers which sessions an import wrote to (`session_written`), so `link_pending()`
links each one that belongs to a project afterwards, bound now or before (every branch; the
LinkStore keeps no duplicates, so a re-import adds no links).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pygit2

from ..model import OpmemError
from ..store.sessions import SessionStore
from .links import CommitLink
from .registry import ProjectNotFound, ProjectRegistry

if TYPE_CHECKING:
    from ..home import Home


class Warnings(Protocol):
    """Where linking problems go (an importer's ImportReport)."""

    def warn(self, path: Path | str, line: int | None, problem: str) -> None: ...


def project_root(cwd: str | os.PathLike[str], *, exclude: tuple[Path, ...] = ()) -> Path | None:
    """The work-tree root of the git repository holding `cwd`, or None when there is none to bind."""
    try:
        folder = Path(cwd).expanduser()
        if not folder.is_absolute() or not folder.is_dir():
            return None
        found = pygit2.discover_repository(str(folder))
        if not found:
            return None
        repo = pygit2.Repository(found)
        if repo.is_bare or not repo.workdir:
            return None
        root = Path(repo.workdir).resolve()
    except (OSError, ValueError, pygit2.GitError):
        return None
    # A dotfiles repository at $HOME (or /) is not the project of every folder under it.
    if root in (Path.home().resolve(), Path("/")):
        return None
    if any(root == ex or ex in root.parents for ex in exclude):
        return None  # opmem's own session repositories
    return root


class ProjectBinder:
    """Binds imported sessions to projects and links their history; one per import or watch."""

    def __init__(self, store: SessionStore, registry: ProjectRegistry, *, home_path: Path | None = None) -> None:
        self.store = store
        self.registry = registry
        self._exclude = (Path(home_path).resolve(),) if home_path is not None else ()
        self._projects: dict[Path, str | None] = {}  # repository root -> project id
        self._roots: dict[str, Path | None] = {}  # cwd -> repository root
        self.written: dict[str, None] = {}  # sessions an import wrote to, in order
        self.bound: dict[str, str] = {}  # sessions bound by this binder -> project id
        self._linked_seq: dict[str, int] = {}  # session -> newest node seq already linked

    @classmethod
    def for_home(cls, home: Home) -> ProjectBinder:
        """A binder over a Home's sessions and projects; the home's own folder is never a project."""
        return cls(home.sessions, home.projects, home_path=home.path)

    # -- binding ------------------------------------------------------------------------------

    def root_for(self, cwd: str) -> Path | None:
        if cwd not in self._roots:
            self._roots[cwd] = project_root(cwd, exclude=self._exclude)
        return self._roots[cwd]

    def project_for(self, cwd: str) -> str | None:
        """The id of the project for `cwd` (binding its repository the first time), or None."""
        root = self.root_for(cwd)
        if root is None:
            return None
        if root not in self._projects:
            project = next((p for p in self.registry.list_projects() if Path(p.workdir) == root), None)
            if project is None:
                project = self.registry.resolve_project(root)
            self._projects[root] = project.id
        return self._projects[root]

    def __call__(self, session_id: str, cwd: str) -> str | None:
        """The on_project hook: bind `session_id` to the project holding `cwd`."""
        project_id = self.project_for(cwd)
        if project_id is None:
            return None
        self.registry.add_session_to_project(project_id, session_id)
        # only project_id: passing a title would mark it as the user's own
        self.store.update_session(session_id, project_id=project_id)
        self.bound[session_id] = project_id
        self.written.setdefault(session_id, None)
        return project_id

    # -- linking ------------------------------------------------------------------------------

    def session_written(self, session_id: str) -> None:
        """The on_session hook: an import wrote nodes to this session; link it later."""
        self.written.setdefault(session_id, None)

    def link_session(self, session_id: str, project_id: str | None = None) -> list[CommitLink]:
        """Link the project's commits to the session's turns on every branch; returns the links found.

        A binder remembers the newest node it linked per session: a later call looks only at the
        turns from the first one holding a newer node (the tail of each branch that grew).
        """
        if project_id is None:
            project_id = self.store.get_meta(session_id).project_id
        if not project_id:
            return []
        mark = self._linked_seq.get(session_id, -1)
        newest = mark
        found: list[CommitLink] = []
        for head in self.store.leaves(session_id) or [None]:
            turns = self.store.get_turns(session_id, head_id=head)
            start = next((i for i, t in enumerate(turns) if any(n.seq > mark for n in t.nodes)), len(turns))
            tail = turns[start:]
            if not tail:
                continue
            newest = max(newest, max(n.seq for t in tail for n in t.nodes))
            found.extend(self.registry.link_session(project_id, session_id, tail))
        self._linked_seq[session_id] = newest
        return found

    def link_pending(self, report: Warnings | None = None, *, ready: Callable[[str], bool] | None = None) -> int:
        """Link every session written since the last call that belongs to a project.

        ready(session_id) False leaves a session for a later call (its file is still busy).
        Returns the number of links found.
        """
        count = 0
        for session_id in list(self.written):
            if ready is not None and not ready(session_id):
                continue
            del self.written[session_id]
            try:
                count += len(self.link_session(session_id))
            except ProjectNotFound:
                continue  # the project was unbound since: nothing to link
            except (OpmemError, OSError, pygit2.GitError) as exc:
                if report is not None:
                    report.warn(session_id, None, f"cannot link project commits: {exc}")
        return count
