"""Backend reads the screens need, bundled per view. Run these in thread workers, never on
the UI thread; each returns plain dataclasses the widgets can take as they are."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opmem_tui.backend.model import SessionListing, SessionMeta, Turn
from opmem_tui.widgets.replay_view import ProjectLabel

COMMIT_PAGE = 100  # first page of a project log: enough to fill a screen, cheap to walk


@dataclass(frozen=True)
class ListingView:
    listing: SessionListing
    projects: dict[str, Any] = field(default_factory=dict)  # id -> registry Project record
    signature: int = 0
    projects_message: str = ""  # why the project list is empty, when it is not just empty
    project_names: dict[str, str] = field(default_factory=dict)  # id -> name, resolved once per listing
    missing_projects: frozenset[str] = frozenset()  # ids whose folder is gone


@dataclass(frozen=True)
class ReplayData:
    meta: SessionMeta
    turns: list[Turn]
    head_id: str | None
    project: ProjectLabel | None  # the bound project
    problems: tuple[str, ...] = ()  # files of the session the store could not read


@dataclass(frozen=True)
class CommitPage:
    commits: list[Any]  # CommitInfo records, newest first
    links: dict[str, tuple[str, int | None, str, str]]  # oid -> (session id, turn, session title, head id)
    complete: bool
    millis: float


def listing_signature(
    listing: SessionListing, projects: Mapping[str, Any], missing: frozenset[str] = frozenset()
) -> int:
    """Changes whenever a row would draw differently; cheap enough to run on every poll."""
    return hash(
        (
            listing.skipped,
            tuple(
                (m.id, m.updated_at, m.turn_count, m.title, m.head_id, m.project_id, m.source) for m in listing.sessions
            ),
            tuple((p.id, p.name, p.status, len(p.sessions)) for p in projects.values()),
            missing,
        )
    )


def project_registry(home: Any) -> Any | None:
    """The project registry, or None when this build has none yet."""
    try:
        return home.projects
    except ImportError:
        return None


def load_projects(home: Any) -> dict[str, Any]:
    registry = project_registry(home)
    if registry is None:
        return {}
    return {project.id: project for project in registry.list_projects()}


def load_listing(home: Any, *, rescan: bool = False) -> ListingView:
    listing = home.sessions.list_sessions(rescan=rescan)
    message = ""
    try:
        projects = load_projects(home)
    except Exception as exc:  # the session list must still show when the registry is broken
        projects = {}
        message = f"The project registry cannot be read: {exc}"
    names = {pid: project.name for pid, project in projects.items()}
    missing = frozenset(pid for pid, project in projects.items() if not os.path.isdir(project.workdir))
    return ListingView(listing, projects, listing_signature(listing, projects, missing), message, names, missing)


def project_label(meta: SessionMeta, projects: Mapping[str, Any]) -> ProjectLabel | None:
    """Name and folder of the session's project (a thread worker call: it checks the folder)."""
    if not meta.project_id:
        return None
    project = projects.get(meta.project_id)
    if project is None:
        return ProjectLabel(meta.project_id)
    workdir = str(project.workdir)
    return ProjectLabel(project.name, workdir, not os.path.isdir(workdir))


def load_replay(home: Any, session_id: str, head_id: str | None, projects: Mapping[str, Any]) -> ReplayData:
    store = home.sessions
    meta = store.get_meta(session_id)
    turns = store.get_turns(session_id, head_id=head_id)
    problems = tuple(store.problems(session_id)) if hasattr(store, "problems") else ()
    return ReplayData(meta, list(turns), head_id, project_label(meta, projects), problems)


def load_commit_page(home: Any, project_id: str, after: str | None, titles: Mapping[str, str]) -> CommitPage:
    """One page of a project's log (after=None: the newest) with the session turns linked to it."""
    started = time.perf_counter()
    registry = home.projects
    commits = registry.log(project_id, COMMIT_PAGE, after=after)
    links: dict[str, tuple[str, int | None, str, str]] = {}
    link_store = getattr(registry, "links", None)
    if link_store is not None:
        by_commit = link_store.by_commit(project_id)
        for commit in commits:
            link = by_commit.get(commit.oid)
            if link is not None:
                links[commit.oid] = (link.session_id, link.turn, titles.get(link.session_id, ""), link.head_id)
    for commit in commits:
        if commit.oid not in links and getattr(commit, "session_id", ""):
            links[commit.oid] = (commit.session_id, commit.turn, titles.get(commit.session_id, ""), "")
    return CommitPage(commits, links, len(commits) < COMMIT_PAGE, (time.perf_counter() - started) * 1000)


def branch_for_node(home: Any, session_id: str, node_id: str) -> tuple[str | None, str]:
    """(head id, branch name) to open a session at a node of one of its branches; (None, "")
    when the node is on the current branch (or unknown): the live view shows it."""
    store = home.sessions
    if not node_id or not store.has_node(session_id, node_id):
        return None, ""
    if any(n.id == node_id for n in store.get_branch(session_id)):
        return None, ""
    for branch in store.branches(session_id):
        if branch.head_id and any(n.id == node_id for n in store.get_branch(session_id, branch.head_id)):
            return branch.head_id, branch.name
    return node_id, ""
