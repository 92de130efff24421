"""Which sessions the memory never sees: private sessions and excluded projects or folders.

One question, asked by the distillation, the search index, the memory queries and the recall
tools alike: `is_excluded(meta, config) -> reason | None`. A session is excluded when

- its meta.json says `"private": true` (`opmem sessions private ID`, the TUI's palette);
- its project (id or name) is in `[memory] exclude_projects`;
- its working folder (meta.json `cwd`, else its project's folder) matches a glob of
  `[memory] exclude_paths` (`~` expanded; `**` any depth, `*` and `?` within one folder name;
  `dir/**` also matches `dir` itself).

Such a session is kept and browsable (list, replay), but never distilled, never indexed for
search (the app's search-everywhere included), never returned by the recall tools or MCP.
Turning it private (`set_private`, backend/orchestration.py) or adding an exclusion (the next distillation run notices the
change: `sync_exclusions`, distill/withheld.py) also withdraws what it already gave: its search index rows and records
are dropped and core.md and the entity views re-projected without it. The memory logs keep their
lines (append-only: nothing is deleted) while every memory query skips them: `Visibility` is the
MemoryStore's session filter, as for a deleted session. `set_private(..., False)` resets the
session's distillation cursor, so the next run takes it from scratch (its records, deterministic,
are the ones already in the logs, and show again).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..config import Config, MemorySettings
from ..model import OpmemError, SessionMeta
from ..projects.folders import folder_project, stands_for_a_project
from ..projects.identity import project_folder
from ..store.files import read_json_object

if TYPE_CHECKING:
    from ..home import Home

PRIVATE_KEY = "private"
REASON_PRIVATE = "private session"

ProjectLookup = Callable[[str], "tuple[str, str] | None"]  # project id -> (name, workdir)


def is_private(meta: SessionMeta) -> bool:
    return meta.extra.get(PRIVATE_KEY) is True


def _glob_regex(pattern: str) -> re.Pattern[str]:
    return _compiled(_norm(os.path.expanduser(pattern.strip())))  # `~` now: HOME may change


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: `**` any depth, `*`/`?` within one name, `dir/**` matches dir too."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    if len(path) > 1:
        path = path.rstrip("/")
    return os.path.normpath(path).replace("\\", "/") if path else path


def path_matches(path: str, pattern: str) -> bool:
    """Whether folder `path` matches the glob `pattern` (both with `~` expanded)."""
    if not path or not pattern.strip():
        return False
    return _glob_regex(pattern).fullmatch(_norm(os.path.expanduser(path))) is not None


@dataclass(frozen=True, slots=True)
class Exclusions:
    """The `[memory]` exclusions with a way to name a session's project; `reason(meta)` decides."""

    projects: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    lookup: ProjectLookup | None = None

    @classmethod
    def of(cls, settings: MemorySettings, lookup: ProjectLookup | None = None) -> Exclusions:
        projects = tuple(p.strip() for p in settings.exclude_projects if str(p).strip())
        paths = tuple(p.strip() for p in settings.exclude_paths if str(p).strip())
        return cls(projects, paths, lookup)

    @property
    def fingerprint(self) -> str:
        """A token of the configured exclusions ("" when there are none): a run that sees it change
        withdraws what they now exclude and readmits what they no longer do."""
        if not self.configured:
            return ""
        text = json.dumps([sorted(self.projects), sorted(self.paths)], ensure_ascii=False)
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()

    @property
    def configured(self) -> bool:
        return bool(self.projects or self.paths)

    def project(self, project_id: str) -> tuple[str, str] | None:
        if not project_id or self.lookup is None:
            return None
        try:
            return self.lookup(project_id)
        except OpmemError:
            return None

    def project_reason(self, project_id: str, name: str = "", workdir: str = "") -> str | None:
        """Why a project is excluded (by id, name or folder), None when it is not."""
        if not project_id and not workdir:
            return None
        if not name and not workdir:
            known = self.project(project_id)
            if known is not None:
                name, workdir = known
        for wanted in self.projects:
            if wanted in (project_id, name):
                return f"project {wanted} is excluded ([memory] exclude_projects)"
        return self.path_reason(workdir)

    def path_reason(self, folder: str) -> str | None:
        for pattern in self.paths:
            if path_matches(folder, pattern):
                return f"folder matches {pattern} ([memory] exclude_paths)"
        return None

    def reason(self, meta: SessionMeta) -> str | None:
        """Why this session is kept out of the memory, None when it is not."""
        if is_private(meta):
            return REASON_PRIVATE
        if not self.configured:
            return None
        cwd = meta.extra.get("cwd")
        if isinstance(cwd, str) and cwd:
            found = self.path_reason(cwd)
            if found:
                return found
        if meta.project_id:
            return self.project_reason(meta.project_id)
        if isinstance(cwd, str) and stands_for_a_project(cwd):  # no binding: the folder's project, by its id or name
            keyed = project_folder(cwd)  # a worktree's memory is its repository's (projects/identity.py)
            return self.project_reason(*folder_project(cwd)) or (
                self.project_reason(*folder_project(keyed)) if keyed != cwd else None
            )
        return None


def is_excluded(meta: SessionMeta, config: Config | MemorySettings, lookup: ProjectLookup | None = None) -> str | None:
    """The reason `meta`'s session is kept out of the memory (None: it is not). `lookup` names a
    project id's (name, workdir) so exclusions by name and by the project's folder apply."""
    settings = config.memory if isinstance(config, Config) else config
    return Exclusions.of(settings, lookup).reason(meta)


def project_lookup(home: Home) -> ProjectLookup:
    """Project id -> (name, workdir) from the home's registry (read once, at the first question); None
    for an unknown id. One Exclusions answers a whole listing or run with a single registry read."""
    table: dict[str, tuple[str, str]] | None = None

    def lookup(project_id: str) -> tuple[str, str] | None:
        nonlocal table
        if table is None:
            try:
                table = {p.id: (p.name, p.workdir) for p in home.projects.list_projects()}
            except OpmemError:
                table = {}
        return table.get(project_id)

    return lookup


def exclusions(home: Home) -> Exclusions:
    return Exclusions.of(home.config.memory, project_lookup(home))


def read_meta(home: Home, session_id: str) -> SessionMeta | None:
    """meta.json of a session read straight from its file (no repair, no lock); None if unreadable."""
    try:
        path = home.sessions.path_for(session_id) / "meta.json"
        return SessionMeta.from_json(read_json_object(path), path, fallback_id=session_id)
    except (OpmemError, OSError, ValueError):
        return None


def session_reason(home: Home, session_id: str, rules: Exclusions | None = None) -> str | None:
    """Why session `session_id` is kept out of the memory; None when it is not (or cannot be read)."""
    meta = read_meta(home, session_id)
    return None if meta is None else (rules or exclusions(home)).reason(meta)


class Visibility:
    """`session_id -> bool`: the session exists and the memory may show it (the MemoryStore's
    session filter and the recall tools use it). Asked once per session per query by the caller
    (SessionFilter keeps the answers for one query), so a session made private stops showing at once."""

    def __init__(self, home: Home) -> None:
        self._home = home
        self._metas: dict[str, tuple[tuple[int, int, int], SessionMeta]] = {}  # by meta.json's stat
        self._reasons: dict[str, tuple[tuple[str, tuple[int, int]], SessionMeta, bool]] = {}

    def __call__(self, session_id: str) -> bool:
        meta = self.meta(session_id)
        if meta is None:
            return False
        rules = exclusions(self._home)
        if not rules.configured or not meta.project_id:
            return rules.reason(meta) is None
        # a project's name and folder come from the registry: the answer is kept while neither
        # the rules, meta.json nor projects.json changed
        key = (rules.fingerprint, self._registry_stamp())
        known = self._reasons.get(session_id)
        if known is not None and known[0] == key and known[1] is meta:
            return known[2]
        answer = rules.reason(meta) is None
        self._reasons[session_id] = (key, meta, answer)
        return answer

    def _registry_stamp(self) -> tuple[int, int]:
        try:
            st = os.stat(self._home.projects_dir / "projects.json")
        except OSError:
            return (0, 0)
        return (st.st_mtime_ns, st.st_size)

    def meta(self, session_id: str) -> SessionMeta | None:
        """meta.json, parsed again only when its size, mtime or inode changed (a stat, as exists() cost)."""
        try:
            path = self._home.sessions.path_for(session_id) / "meta.json"
            st = os.stat(path)
        except (OpmemError, OSError):
            self._metas.pop(session_id, None)
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        known = self._metas.get(session_id)
        if known is not None and known[0] == key:
            return known[1]
        meta = read_meta(self._home, session_id)
        if meta is not None:
            self._metas[session_id] = (key, meta)
        return meta


def hidden_sessions(
    home: Home, metas: Iterable[SessionMeta] | None = None, *, rules: Exclusions | None = None
) -> dict[str, str]:
    """{session id: reason} of every excluded session of the store (one meta read each)."""
    rules = rules or exclusions(home)
    if metas is None:
        try:
            metas = home.sessions.list_sessions().sessions
        except OpmemError:
            return {}
    out: dict[str, str] = {}
    for meta in metas:
        why = rules.reason(meta)
        if why:
            out[meta.id] = why
    return out


def describe(meta: SessionMeta, rules: Exclusions) -> Mapping[str, Any]:
    """{"private": bool, "excluded": reason|None} for listings."""
    return {"private": is_private(meta), "excluded": rules.reason(meta)}
