"""Which project a folder belongs to: the one function every caller asks (ARCHITECTURE.md §4).

A project is its repository, not its folder's name. In order:
1. the bound project whose folder holds it (the innermost);
2. a bound project of the same repository: a git worktree of it, or another checkout of the same
   origin (the git common dir, else the `origin` remote, read from git's own files);
3. for a folder not on this machine (sessions synced from another one, a folder since removed):
   the bound project whose repository has the remote the session recorded; with no remote
   recorded, the one bound project of the folder's name (the branch recorded, when it is not a
   trunk such as main, must exist there);
4. the folder project the memory knows for the folder or one it lies in (folders.folder_project:
   sessions in a folder no binding names, a plain folder that is no repository); a folder in a
   repository here is keyed by that repository's main work tree (`project_folder`), so its
   worktrees and subfolders are one project even unbound.
The SessionStart hook (agents/session_start.py), `opmem core`, the MCP server, the distiller and
the search index all ask `project_for_folder`, so they agree. Light on purpose (the hook imports
it): no pygit2 but to check a branch of a folder that is not on this machine.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .folders import folder_project

__all__ = [
    "Bound",
    "RepoIdentity",
    "normalize_remote",
    "project_folder",
    "project_for_folder",
    "recorded_remote",
    "repository_identity",
    "same_repository",
]


class Bound:
    """A bound project as the registry lists it: what identity needs of it."""

    __slots__ = ("id", "workdir")

    def __init__(self, project_id: str, workdir: str) -> None:
        self.id, self.workdir = project_id, workdir


class RepoIdentity:
    """A repository on this machine. (Plain slots, not a NamedTuple: making one such class costs
    milliseconds, and the SessionStart hook imports this module before every session.)"""

    __slots__ = ("branch", "common_dir", "remote", "root")

    def __init__(self, root: str, common_dir: str, remote: str, branch: str) -> None:
        self.root = root  # the work tree's root
        self.common_dir = common_dir  # the repository's own .git folder, shared by its worktrees
        self.remote = remote  # the origin's URL, normalized ("" when none)
        self.branch = branch

    def _key(self) -> tuple[str, str, str, str]:
        return (self.root, self.common_dir, self.remote, self.branch)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RepoIdentity) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "RepoIdentity(root={!r}, common_dir={!r}, remote={!r}, branch={!r})".format(*self._key())


# patterns, not compiled ones: re compiles (and caches) them on first use, not when the hook imports
_SCP_LIKE = r"^(?:[\w.+-]+@)?([\w.-]+):(?!//)(.+)$"


def normalize_remote(url: str) -> str:
    """A remote URL as `host/owner/name`: ssh, scp-like and https forms of one repository agree."""
    url = (url or "").strip()
    if not url:
        return ""
    match = re.match(_SCP_LIKE, url)
    if match and "://" not in url:
        host, path = match.groups()
    else:
        rest = url.split("://", 1)[-1]
        rest = rest.split("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest
        host, _, path = rest.partition("/")
        host = host.split(":", 1)[0]  # a port
    path = path.strip("/")
    path = path[: -len(".git")] if path.endswith(".git") else path
    return f"{host.lower()}/{path}" if path else ""


def recorded_remote(extra: Mapping[str, Any]) -> str:
    """The git remote a session's meta.json recorded (the importers keep it in `source_extra`)."""
    for holder in (extra, extra.get("source_extra")):
        if isinstance(holder, Mapping):
            for key in ("git_remote", "repository_url", "remote"):
                value = holder.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
    return ""


def repository_identity(folder: str | os.PathLike[str]) -> RepoIdentity | None:
    """The repository holding `folder` on this machine (None: no folder, no repository, a bare one).

    Read from git's own files, as git lays them out (gitrepository-layout(5)): the `.git` folder
    or `.git` file (`gitdir: ...`) found upwards, a worktree's `commondir`, `HEAD`, and the
    `[remote "origin"]` url of the common `config`. No pygit2 here: the SessionStart hook asks this
    before every session, and loading pygit2 alone costs more than the hook's whole budget."""
    path = os.fspath(folder)
    if not os.path.isdir(path):
        return None
    found = _discover(os.path.realpath(path))
    if found is None:
        return None
    root, git_dir = found
    if root in (os.path.realpath(os.path.expanduser("~")), "/"):
        return None  # a dotfiles repository is not the project of every folder under it
    common = _common_dir(git_dir)
    return RepoIdentity(root, common, normalize_remote(_remote_url(common)), _branch(git_dir))


def _discover(start: str) -> tuple[str, str] | None:
    """(work tree root, its git dir) for the repository holding `start`."""
    folder = start
    while True:
        dotgit = os.path.join(folder, ".git")
        if os.path.isdir(dotgit):
            return (folder, dotgit) if os.path.exists(os.path.join(dotgit, "HEAD")) else None
        if os.path.isfile(dotgit):  # a worktree or a submodule: `gitdir: <path>`
            try:
                with open(dotgit, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            pointed = os.path.join(folder, line[len("gitdir:") :].strip())
            return (folder, os.path.realpath(pointed)) if os.path.isdir(pointed) else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


_SECTION = r'^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]'
_URL = r"(?i)^\s*url\s*=\s*(.*?)\s*$"


def _remote_url(common_dir: str) -> str:
    """The `origin` remote's url in the repository's config, else the one remote's; "" when none."""
    try:
        with open(os.path.join(common_dir, "config"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 20).splitlines()
    except OSError:
        return ""
    urls: dict[str, str] = {}
    section: str | None = None
    for line in lines:
        if line.lstrip().startswith("["):
            match = re.match(_SECTION, line)
            section = match.group(1) if match else None
        elif section is not None and section not in urls:
            url = re.match(_URL, line)
            if url:
                urls[section] = url.group(1).strip('"')
    if "origin" in urls:
        return urls["origin"]
    return next(iter(urls.values())) if len(urls) == 1 else ""


def _branch(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as handle:
            head = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""


def _common_dir(git_dir: str) -> str:
    """The .git folder a worktree's own git dir points to (`commondir`), else the git dir itself."""
    git_dir = os.path.realpath(git_dir)
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            pointed = handle.read().strip()
    except OSError:
        return git_dir
    return os.path.realpath(os.path.join(git_dir, pointed)) if pointed else git_dir


def _inside(target: str, root: str) -> bool:
    root = root.rstrip(os.sep) or os.sep
    return target == root or target.startswith(root + os.sep) or root == os.sep


def _innermost(target: str, bound: Iterable[Bound]) -> str:
    best_id, best_len = "", -1
    for project in bound:
        if project.workdir and _inside(target, project.workdir) and len(project.workdir) > best_len:
            best_id, best_len = project.id, len(project.workdir)
    return best_id


def same_repository(
    folder: str,
    bound: Iterable[Bound | Any],
    *,
    remote: str = "",
    identities: dict[str, RepoIdentity | None] | None = None,
) -> str:
    """The id of the bound project whose repository is the one at `folder` (a worktree of it, a
    checkout of the same origin) or has the `remote` a session recorded; "" when none is."""
    projects = [Bound(p.id, p.workdir) for p in bound]
    if not projects:
        return ""
    cache: dict[str, RepoIdentity | None] = {} if identities is None else identities

    def identity(workdir: str) -> RepoIdentity | None:
        if workdir not in cache:
            cache[workdir] = repository_identity(workdir)
        return cache[workdir]

    here = identity(folder) if os.path.isdir(folder) else None
    wanted_remote = (here.remote if here else "") or normalize_remote(remote)
    if here is None and not wanted_remote:
        return ""
    for project in projects:
        other = identity(project.workdir)
        if other is None:
            continue
        if here is not None and other.common_dir == here.common_dir:
            return project.id
        if wanted_remote and other.remote == wanted_remote:
            return project.id
    return ""


def project_folder(folder: str) -> str:
    """The folder a project no binding names is keyed by: the main work tree of the repository
    holding `folder` on this machine (a worktree's and a subfolder's too), else `folder` itself."""
    identity = repository_identity(folder) if folder.startswith("/") else None
    if identity is None:
        return folder
    common = identity.common_dir
    return os.path.dirname(common) if os.path.basename(common) == ".git" else identity.root


def _by_name(folder: str, projects: list[Bound], branch: str) -> str:
    """A folder not on this machine, no remote recorded: the one bound project of its folder's
    name (a branch the session recorded picks among several, and must exist in the one found)."""
    name = posixpath.basename(posixpath.normpath(folder))
    named = [p for p in projects if name and posixpath.basename(posixpath.normpath(p.workdir)) == name]
    if branch:
        named = [p for p in named if _has_branch(p.workdir, branch)] or (named if branch in _TRUNKS else [])
    return named[0].id if len(named) == 1 else ""


_TRUNKS = frozenset({"main", "master", "trunk", "develop"})  # every repository may have one: says nothing


def _has_branch(workdir: str, branch: str) -> bool:
    import pygit2

    try:
        repo = pygit2.Repository(workdir)
        return repo.branches.get(branch) is not None or repo.branches.get(f"origin/{branch}") is not None
    except (OSError, ValueError, KeyError, pygit2.GitError):
        return False


def project_for_folder(
    folder: str | os.PathLike[str],
    bound: Iterable[Bound | Any],
    *,
    known: Callable[[str], bool] = lambda _pid: False,
    remote: str = "",
    branch: str = "",
    identities: dict[str, RepoIdentity | None] | None = None,
) -> str:
    """The id of the project `folder` belongs to, or "" (see the module's rules).

    `bound`: the registry's projects (anything with `id` and `workdir`); `known(id)`: whether the
    memory holds a folder project of that id; `remote`, `branch`: what a session recorded for the
    folder; `identities`: a cache of workdir -> identity the caller keeps between calls."""
    projects = [Bound(p.id, p.workdir) for p in bound]
    raw = os.fspath(folder)
    if not raw:
        return ""
    target = os.path.realpath(raw) if os.path.isabs(raw) else raw
    found = _innermost(target, projects) or (_innermost(raw, projects) if raw != target else "")
    if found:
        return found
    found = same_repository(target, projects, remote=remote, identities=identities)
    if found:
        return found
    if not remote and not os.path.isdir(target):
        found = _by_name(raw, projects, branch)
        if found:
            return found
    keyed = project_folder(target)
    if keyed != target and known(folder_project(keyed)[0]):  # a worktree of a repository no binding names
        return folder_project(keyed)[0]
    for start in dict.fromkeys((raw, target)):
        path = posixpath.normpath(start)
        while path.startswith("/"):
            pid = folder_project(path)[0]
            if known(pid):
                return pid
            parent = posixpath.dirname(path)
            if parent == path:
                break
            path = parent
    return ""
