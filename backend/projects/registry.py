"""The project registry (<home>/projects/): which folders are bound as projects, their status,
their sessions, the warnings auto-commit raised, and the commit ↔ turn links.

Files:
    projects/projects.json     {"projects": [{id, name, workdir, status, created_at, sessions}]}
    projects/warnings.jsonl    append-only; `{"op": "dismiss", "id": ...}` lines hide a warning
    projects/links.jsonl       append-only commit ↔ turn links (links.LinkStore)

A bound project's own `.git` is the user's: binding reuses it (or runs git init), unbinding only
edits the registry. See agent_commit.py for what a commit writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pygit2

from ..file_lock import file_lock
from ..model import CorruptFile, Node, OpmemError, Turn, check_session_id
from ..store.files import write_atomic
from .agent_commit import AgentCommitter
from .folders import project_slug
from .identity import RepoIdentity, project_for_folder, same_repository
from .links import HIGH, CommitLink, LinkStore, link_session
from .records import AgentCommitResult, AgentTurnWatch, CommitDetail, CommitInfo
from .repository import ProjectGit, ensure_excluded

STATUSES = ("active", "paused", "done")
_PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class ProjectError(OpmemError, ValueError):
    pass


class ProjectNotFound(OpmemError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "project not found"


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    name: str
    workdir: str
    status: str = "active"
    created_at: float = 0.0
    sessions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "workdir": self.workdir,
            "status": self.status,
            "created_at": self.created_at,
            "sessions": list(self.sessions),
        }

    @classmethod
    def from_json(cls, data: Any, path: Path, index: int) -> Project:
        where = f"project #{index + 1}"
        if not isinstance(data, Mapping):
            raise CorruptFile(path, f"{where} is not a JSON object")
        for key in ("id", "name", "workdir"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise CorruptFile(path, f"{where} lacks a string {key!r}")
        if not _PROJECT_ID.fullmatch(data["id"]):
            raise CorruptFile(path, f"{where} has an unsafe id {data['id']!r}")
        status = data.get("status", "active")
        if status not in STATUSES:
            raise CorruptFile(path, f"{where} ({data['id']}) has unknown status {status!r}")
        created = data.get("created_at", 0.0)
        if isinstance(created, bool) or not isinstance(created, (int, float)):
            raise CorruptFile(path, f"{where} ({data['id']}) has a non-numeric created_at")
        sessions = data.get("sessions", [])
        if not isinstance(sessions, list) or not all(isinstance(s, str) for s in sessions):
            raise CorruptFile(path, f"{where} ({data['id']}) has sessions that are not a list of ids")
        return cls(data["id"], data["name"], data["workdir"], status, float(created), tuple(sessions))


@dataclass(frozen=True, slots=True)
class ProjectWarning:
    id: str
    project_id: str
    session_id: str
    turn: int
    message: str
    paths: tuple[str, ...] = ()
    created_at: float = 0.0


def _enclosing_repo(folder: Path) -> pygit2.Repository | None:
    found = pygit2.discover_repository(str(folder))
    if not found:
        return None
    repo = pygit2.Repository(found)
    if repo.is_bare or not repo.workdir:
        raise ProjectError(f"{folder}: lies inside a bare git repository ({found}); bind a folder with files")
    root = Path(repo.workdir).resolve()
    # A dotfiles repo at $HOME (or /) is not "the project" of every folder under it.
    if root != folder and root in (Path.home().resolve(), Path("/")):
        return None
    return repo


class ProjectRegistry:
    """Projects bound under one opmem home. Construct with the home folder."""

    def __init__(self, home_path: str | os.PathLike[str]) -> None:
        self.home = Path(home_path)
        self.dir = self.home / "projects"
        self.path = self.dir / "projects.json"
        self.warnings_path = self.dir / "warnings.jsonl"
        self.links = LinkStore(self.dir / "links.jsonl")
        self._gits: dict[str, ProjectGit] = {}
        self._identities: dict[str, RepoIdentity | None] = {}  # workdir -> its repository, asked once

    # -- the registry file --------------------------------------------------------------------

    def _lock(self) -> AbstractContextManager[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        return file_lock(self.path, consequence="nothing was changed")

    def _read(self) -> list[Project]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CorruptFile(self.path, f"cannot read ({exc.strerror})") from None
        if not raw.strip():
            raise CorruptFile(self.path, 'file is empty (expected {"projects": [...]})')
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise CorruptFile(self.path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise CorruptFile(self.path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except RecursionError:
            raise CorruptFile(self.path, "JSON nested too deeply to read") from None
        items = data.get("projects") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise CorruptFile(self.path, 'expected {"projects": [...]}')
        projects = [Project.from_json(item, self.path, i) for i, item in enumerate(items)]
        seen: set[str] = set()
        for project in projects:
            if project.id in seen:
                raise CorruptFile(self.path, f"project id {project.id!r} appears twice")
            seen.add(project.id)
        return projects

    def _write(self, projects: Sequence[Project]) -> None:
        payload = {"projects": [p.to_json() for p in projects]}
        write_atomic(self.path, json.dumps(payload, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")

    def _modify(self, project_id: str, change: Callable[[Project], Project]) -> Project:
        """Read, change one project and write back, all under the registry lock."""
        with self._lock():
            projects = self._read()
            for i, project in enumerate(projects):
                if project.id == project_id:
                    changed = change(project)
                    if changed != project:
                        projects[i] = changed
                        self._write(projects)
                    return changed
        raise ProjectNotFound(f"no project {project_id!r} in {self.path}")

    # -- public registry operations -----------------------------------------------------------

    def list_projects(self) -> list[Project]:
        return self._read()

    def get(self, project_id: str) -> Project:
        for project in self._read():
            if project.id == project_id:
                return project
        raise ProjectNotFound(f"no project {project_id!r} in {self.path}")

    def find(self, path: str | os.PathLike[str]) -> Project | None:
        """The bound project whose folder holds `path` (the innermost one)."""
        target = Path(os.path.realpath(path))
        best: Project | None = None
        for project in self._read():
            root = Path(project.workdir)
            inside = target == root or root in target.parents
            if inside and (best is None or len(project.workdir) > len(best.workdir)):
                best = project
        return best

    def project_for(
        self,
        folder: str | os.PathLike[str],
        *,
        remote: str = "",
        branch: str = "",
        known: Callable[[str], bool] | None = None,
    ) -> str:
        """The id of the project `folder` belongs to (identity.project_for_folder: its folder, its
        repository, the remote a session recorded, else a folder project `known` names), or ""."""
        kw = {"known": known} if known is not None else {}
        return project_for_folder(folder, self._read(), remote=remote, branch=branch, identities=self._identities, **kw)

    def resolve_project(self, path: str | os.PathLike[str], name: str | None = None) -> Project:
        """Bind a folder: reuse the git repository it is in, or git init one. Idempotent."""
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ProjectError(f"{folder}: not a folder")
        folder = folder.resolve()
        try:
            repo = _enclosing_repo(folder) or pygit2.init_repository(str(folder))
        except pygit2.GitError as exc:
            raise ProjectError(f"{folder}: cannot open or create a git repository ({exc})") from None
        root = Path(repo.workdir).resolve()
        ensure_excluded(repo)
        with self._lock():
            projects = self._read()
            for project in projects:
                if Path(project.workdir) == root:
                    return project
            same = same_repository(str(root), projects, identities=self._identities)
            if same:  # a worktree or another checkout of a bound repository: the same project
                return next(p for p in projects if p.id == same)
            label = (name or root.name or "project").strip() or "project"
            digest = hashlib.sha1(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:6]
            project = Project(
                id=f"{project_slug(label)}-{digest}",
                name=label,
                workdir=str(root),
                status="active",
                created_at=time.time(),
            )
            projects.append(project)
            self._write(projects)
            return project

    def add_session_to_project(self, project_id: str, session_id: str) -> Project:
        check_session_id(session_id)

        def add(project: Project) -> Project:
            if session_id in project.sessions:
                return project
            return replace(project, sessions=(*project.sessions, session_id))

        return self._modify(project_id, add)

    def set_status(self, project_id: str, status: str) -> Project:
        if status not in STATUSES:
            raise ProjectError(f"unknown project status {status!r}: use one of {', '.join(STATUSES)}")
        return self._modify(project_id, lambda project: replace(project, status=status))

    def unbind(self, project_id: str) -> Project:
        """Forget a project. Its folder, `.git` and `.opmem/` stay exactly as they are."""
        with self._lock():
            projects = self._read()
            kept = [p for p in projects if p.id != project_id]
            if len(kept) == len(projects):
                raise ProjectNotFound(f"no project {project_id!r} in {self.path}")
            self._write(kept)
        self._gits.pop(project_id, None)
        return next(p for p in projects if p.id == project_id)

    def session_location(self, project_id: str, session_id: str) -> Path:
        """Where a session repo bound to this project lives: <project>/.opmem/sessions/<id>/.

        Pass it to SessionStore.append_message(location=...); the folder is created there.
        """
        check_session_id(session_id)
        git = self.git(project_id)
        ensure_excluded(git.repo)
        return git.root / ".opmem" / "sessions" / session_id

    # -- the project's repository -------------------------------------------------------------

    def git(self, project_id: str) -> ProjectGit:
        git = self._gits.get(project_id)
        project = self.get(project_id)
        if git is None or str(git.workdir) != project.workdir:
            git = ProjectGit(project.workdir, project_id=project.id)
            self._gits[project_id] = git
        return git

    def log(
        self,
        project_id: str,
        limit: int = 100,
        agent_only: bool = False,
        *,
        after: str | None = None,
        since: float | None = None,
    ) -> list[CommitInfo]:
        return self.git(project_id).log(limit, agent_only, after=after, since=since)

    def project_commits(self, project_id: str, *, limit: int = 100) -> list[CommitInfo]:
        """Newest commits of a project's current branch (the provenance read primitive)."""
        return self.git(project_id).log(limit)

    def show(self, project_id: str, commit: str) -> CommitDetail:
        return self.git(project_id).show(commit)

    # -- auto-commit --------------------------------------------------------------------------

    def begin_turn(self, project_id: str) -> AgentTurnWatch:
        return AgentCommitter(self.git(project_id)).begin_turn()

    def commit_agent_turn(
        self,
        watch: AgentTurnWatch,
        turn: Turn | Sequence[Node],
        *,
        session_id: str,
        turn_number: int | None = None,
        user_message: str | None = None,
        model: str | None = None,
        early: Collection[str] = (),
    ) -> AgentCommitResult:
        """Commit a turn's agent-owned changes in an active project; keep warnings and the link.

        early: paths the agent wrote before the turn's start state was taken (AgentCommitter.commit_turn).
        """
        check_session_id(session_id)
        project = self.get(watch.project_id)
        if project.status != "active":
            return AgentCommitResult(None, skipped=f"project {project.id} is {project.status}")
        result = AgentCommitter(self.git(project.id)).commit_turn(
            watch,
            turn,
            session_id=session_id,
            turn_number=turn_number,
            user_message=user_message,
            model=model,
            early=early,
        )
        if result.warning:
            named = result.dirty_paths or (*result.changed_outside, *result.unverified) or result.paths
            self.record_warning(project.id, session_id, result.turn, result.warning, named)
        if result.commit:
            nodes = turn.nodes if isinstance(turn, Turn) else tuple(turn)
            chain = [n for n in nodes if not n.is_tool]
            head = chain[-1].id if chain else ""
            self.links.add(
                [CommitLink(result.commit, session_id, result.turn, HIGH, "opmem", head, project.id, result.paths)]
            )
            self.add_session_to_project(project.id, session_id)
        return result

    # -- warnings -----------------------------------------------------------------------------

    def record_warning(
        self, project_id: str, session_id: str, turn: int, message: str, paths: Iterable[str] = ()
    ) -> ProjectWarning:
        now = time.time()
        warning = ProjectWarning(
            id=hashlib.sha1(f"{project_id}\0{session_id}\0{turn}\0{message}\0{now}".encode()).hexdigest()[:12],
            project_id=project_id,
            session_id=session_id,
            turn=turn,
            message=message,
            paths=tuple(paths),
            created_at=now,
        )
        record = {
            "id": warning.id,
            "project_id": project_id,
            "session_id": session_id,
            "turn": turn,
            "message": message,
            "paths": list(warning.paths),
            "created_at": now,
        }
        self._append(self.warnings_path, record)
        return warning

    def dismiss_warning(self, warning_id: str) -> None:
        self._append(self.warnings_path, {"op": "dismiss", "id": warning_id, "at": time.time()})

    def warnings(self, project_id: str | None = None, *, include_dismissed: bool = False) -> list[ProjectWarning]:
        """Auto-commit warnings, newest first. A torn or bad line is skipped."""
        try:
            lines = self.warnings_path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        found: dict[str, ProjectWarning] = {}
        dismissed: set[str] = set()
        for raw in lines:
            try:
                data = json.loads(raw)
                if data.get("op") == "dismiss":
                    dismissed.add(str(data["id"]))
                    continue
                warning = ProjectWarning(
                    id=str(data["id"]),
                    project_id=str(data["project_id"]),
                    session_id=str(data["session_id"]),
                    turn=int(data.get("turn") or 0),
                    message=str(data["message"]),
                    paths=tuple(str(p) for p in data.get("paths") or ()),
                    created_at=float(data.get("created_at") or 0.0),
                )
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                continue
            found[warning.id] = warning
        out = [
            w
            for w in found.values()
            if (project_id is None or w.project_id == project_id) and (include_dismissed or w.id not in dismissed)
        ]
        return sorted(out, key=lambda w: w.created_at, reverse=True)

    def _append(self, path: Path, record: Mapping[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with file_lock(path, consequence="nothing was changed"):
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())

    # -- commit ↔ turn links ------------------------------------------------------------------

    def link_session(self, project_id: str, session_id: str, turns: Sequence[Turn]) -> list[CommitLink]:
        """Link the project's commits made during a session to its turns; store and return them."""
        check_session_id(session_id)
        git = self.git(project_id)
        times = [n.created_at for t in turns for n in t.nodes if n.created_at]
        if not times:
            return []
        commits = git.commits_between(min(times), max(times) + 3600.0)
        links = link_session(session_id, turns, commits, relative=git.relative, project_id=project_id)
        self.links.add(links)
        return links

    def links_for_commit(self, project_id: str, commit: str) -> list[CommitLink]:
        return self.links.for_commit(commit, project_id)
