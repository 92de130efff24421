"""The app's one way to the store: `StoreData` over a `Home`.

Every method blocks on files or git, so the app calls them from thread workers, never on the
UI thread; each returns frozen dataclasses the widgets can take as they are. Screens and tabs
reach the backend only through here (the backend stays free of Textual; the widgets never
see it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opmem_tui.backend.activity import Activity, ActivityCounter
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.discovery import Found
from opmem_tui.backend.importers.registry import LABELS as SOURCE_LABEL_TABLE
from opmem_tui.backend.model import Node, OpmemError, SessionListing, SessionMeta, Turn, TurnCommit, VerifyReport
from opmem_tui.backend.orchestration import PrivacyChange, set_private
from opmem_tui.backend.privacy.exclusions import hidden_sessions
from opmem_tui.backend.projects.blame_records import BlameReport
from opmem_tui.backend.projects.records import CommitDetail, CommitInfo
from opmem_tui.backend.projects.registry import Project
from opmem_tui.backend.store.mirror_backlog import MirrorWriter
from opmem_tui.backend.usage.index import Progress
from opmem_tui.backend.usage.reports import Usage, session_costs
from opmem_tui.widgets.commit_log import TurnLink
from opmem_tui.widgets.replay_view import ProjectLabel
from opmem_tui.widgets.safe_text import one_line

from .masking import NodeMasks, mask, mask_commit, mask_commit_detail, mask_listing, mask_meta, mask_turn_commits
from .memory_data import MemoryData

COMMIT_PAGE = 100  # first page of a project log: enough to fill a screen, cheap to walk

# Importer sources the palette offers, with the label users know them by (each importer's own).
SOURCE_LABELS = SOURCE_LABEL_TABLE


@dataclass(frozen=True)
class ListingView:
    """The session list and what draws beside it (project names, missing folders)."""

    listing: SessionListing
    projects: Mapping[str, Project] = field(default_factory=dict)
    signature: int = 0
    projects_message: str = ""  # why the project list is empty, when it is not just empty
    project_names: Mapping[str, str] = field(default_factory=dict)  # id -> name, resolved once per listing
    missing_projects: frozenset[str] = frozenset()  # ids whose folder is gone
    withheld: frozenset[str] = frozenset()  # ids the memory never sees (private, [memory] exclusions)
    costs: Mapping[str, Usage] = field(default_factory=dict)  # tokens and cost by session (usage index)

    def find(self, session_id: str) -> SessionMeta | None:
        return next((m for m in self.listing.sessions if m.id == session_id), None)


@dataclass(frozen=True)
class ReplayData:
    meta: SessionMeta
    turns: Sequence[Turn]
    head_id: str | None
    project: ProjectLabel | None  # the bound project
    problems: tuple[str, ...] = ()  # files of the session the store could not read
    total: int = 0  # the branch's turn count when `turns` are only its last ones (0: they are all)
    # Secrets in `turns` are masked (masking.py); these are the messages that held one, as
    # written, for the replay's reveal key. Nothing else on screen ever gets the values.
    originals: Mapping[str, Node] = field(default_factory=dict)
    cost: Usage | None = None  # the session's tokens and cost (usage index), None when it has none

    @property
    def turn_total(self) -> int:
        return max(self.total, len(self.turns))


@dataclass(frozen=True)
class CommitPage:
    commits: Sequence[CommitInfo]  # newest first
    links: Mapping[str, TurnLink]  # by commit oid
    complete: bool
    millis: float


@dataclass(frozen=True)
class BranchChoice:
    head_id: str
    name: str  # branch name, e.g. main or retry-<id>
    preview: str  # that branch's reply in this turn, one line, already cleaned
    turns: int
    current: bool = False  # the session's current branch (new messages continue it)
    viewing: bool = False  # the branch the replay shows now


@dataclass(frozen=True)
class SessionHistory:
    title: str
    commits: Sequence[TurnCommit]


def listing_signature(
    listing: SessionListing,
    projects: Mapping[str, Project],
    missing: frozenset[str] = frozenset(),
    withheld: frozenset[str] = frozenset(),
) -> int:
    """Changes whenever a row would draw differently; cheap enough to run on every change."""
    return hash(
        (
            listing.skipped,
            tuple(
                (m.id, m.updated_at, m.turn_count, m.title, m.head_id, m.project_id, m.source) for m in listing.sessions
            ),
            tuple((p.id, p.name, p.status, len(p.sessions)) for p in projects.values()),
            missing,
            withheld,
        )
    )


def _cost_signature(costs: Mapping[str, Usage]) -> int:
    return hash(tuple(sorted((sid, u.total, u.cost) for sid, u in costs.items())))


def project_label(meta: SessionMeta, projects: Mapping[str, Project]) -> ProjectLabel | None:
    """Name and folder of the session's project (it checks the folder: a worker call)."""
    if not meta.project_id:
        return None
    project = projects.get(meta.project_id)
    if project is None:
        return ProjectLabel(meta.project_id)
    workdir = str(project.workdir)
    return ProjectLabel(project.name, workdir, not os.path.isdir(workdir))


class StoreData:
    """Reads bundled per view and the writes the app makes, over one Home."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.memory = MemoryData(home)  # the memory panes' and the search's reads (memory_data.py)
        self._activity = ActivityCounter(home.usage)  # the usage index: a recount reads only changed sessions
        self.masks = NodeMasks()  # each message masked once (masking.py)
        self._mirrors: MirrorWriter | None = None

    def activity(self, view: ListingView, *, progress: Progress | None = None) -> Activity:
        """Sessions, turns, tokens and cost per day over the listed sessions (backend/activity.py);
        `progress(done, total)` while the usage index reads sessions."""
        return self._activity.count(view.listing.sessions, view.project_names, progress=progress)

    # -- listing ---------------------------------------------------------------------------
    def listing(self, *, rescan: bool = False) -> ListingView:
        listing = mask_listing(self.home.sessions.list_sessions(rescan=rescan))  # titles: often the first prompt
        message = ""
        try:
            projects = {project.id: project for project in self.home.projects.list_projects()}
        except OpmemError as exc:  # the session list must still show when the registry is broken
            projects = {}
            message = f"The project registry cannot be read: {exc}"
        names = {pid: project.name for pid, project in projects.items()}
        missing = frozenset(pid for pid, project in projects.items() if not os.path.isdir(project.workdir))
        withheld = frozenset(hidden_sessions(self.home, listing.sessions))
        costs = self._costs()
        signature = hash((listing_signature(listing, projects, missing, withheld), _cost_signature(costs)))
        return ListingView(listing, projects, signature, message, names, missing, withheld, costs)

    def _costs(self, session_id: str | None = None) -> dict[str, Usage]:
        """Tokens and cost by session from the usage index; none when it cannot be read (derived data)."""
        try:
            return session_costs(self.home.usage, session_id)
        except OpmemError:
            return {}

    def watched_folders(self) -> list[Path]:
        """Folders whose entries change whenever the listing may: the sessions folder (every
        opmem write touches its `.changed` token; folders come and go) and the registry's."""
        folders = [self.home.sessions_dir, self.home.projects_dir]
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        return folders

    # -- one session -----------------------------------------------------------------------
    def replay(self, session_id: str, head_id: str | None, projects: Mapping[str, Project]) -> ReplayData:
        store = self.home.sessions
        meta = mask_meta(store.get_meta(session_id))
        masked = self.masks.turns(session_id, store.get_turns(session_id, head_id=head_id))
        problems = tuple(store.problems(session_id))
        return ReplayData(
            meta,
            masked.turns,
            head_id,
            project_label(meta, projects),
            problems,
            originals=masked.originals,
            cost=self._costs(session_id).get(session_id),
        )

    def last_turn(self, session_id: str, projects: Mapping[str, Project]) -> ReplayData:
        """The last turn of the session's current branch and its turn count, for a first paint:
        cheap for a session not opened yet; `replay` brings the rest."""
        quick = self.home.sessions.last_turn(session_id)
        meta = mask_meta(quick.meta)
        masked = self.masks.turns(session_id, [quick.turn] if quick.turn is not None else [])
        return ReplayData(
            meta,
            masked.turns,
            None,
            project_label(meta, projects),
            total=quick.turn_count,
            originals=masked.originals,
            cost=self._costs(session_id).get(session_id),
        )

    def commit_view(self, session_id: str, oid: str, projects: Mapping[str, Project]) -> ReplayData:
        """The session as one of its commits left it (read-only)."""
        store = self.home.sessions
        masked = self.masks.turns(session_id, store.turns_at(session_id, oid))
        meta = mask_meta(store.get_meta(session_id))
        return ReplayData(
            meta,
            masked.turns,
            None,
            project_label(meta, projects),
            originals=masked.originals,
            cost=self._costs(session_id).get(session_id),
        )

    def branch_choices(
        self, session_id: str, number: int, fork_heads: Sequence[str], shown_head: str | None
    ) -> list[BranchChoice]:
        """The branches to offer at turn `number`: the one on screen first, then the forks."""
        store = self.home.sessions
        branches = {b.head_id: b for b in store.branches(session_id)}
        session_head = store.get_meta(session_id).head_id
        shown = shown_head or session_head
        heads = [shown] if shown else []
        heads += [h for h in fork_heads if h not in heads]
        choices = []
        for head in heads:
            turns = store.get_turns(session_id, head_id=head)
            reply = ""
            if 0 < number <= len(turns):
                chain = [n for n in turns[number - 1].nodes if n.role == "assistant" and not n.is_tool]
                reply = chain[-1].content if chain else ""
            branch = branches.get(head)
            name = branch.name if branch else f"head {head[:8]}"
            current = head == session_head or (branch is not None and branch.is_current)
            choices.append(
                BranchChoice(head, name, one_line(mask(reply), 100), len(turns), current=current, viewing=head == shown)
            )
        return choices

    def history(self, session_id: str, limit: int = 1000) -> SessionHistory:
        store = self.home.sessions
        commits = mask_turn_commits(store.session_commits(session_id, limit=limit))
        return SessionHistory(mask_meta(store.get_meta(session_id)).display_title, commits)

    def branch_for_node(self, session_id: str, node_id: str) -> tuple[str | None, str]:
        """(head id, branch name) to open a session at a node of one of its branches; (None, "")
        when the node is on the current branch (or unknown): the live view shows it."""
        store = self.home.sessions
        if not node_id or not store.has_node(session_id, node_id):
            return None, ""
        if any(n.id == node_id for n in store.get_branch(session_id)):
            return None, ""
        for branch in store.branches(session_id):
            if branch.head_id and any(n.id == node_id for n in store.get_branch(session_id, branch.head_id)):
                return branch.head_id, branch.name
        return node_id, ""

    def rename(self, session_id: str, title: str) -> SessionMeta:
        return self.home.sessions.rename_session(session_id, title)

    def delete(self, session_id: str) -> None:
        self.home.sessions.delete_session(session_id)

    def set_private(self, session_id: str, private: bool) -> PrivacyChange:
        """Keep a session out of the memory (or let it back in): backend/privacy/exclusions.py."""
        return set_private(self.home, session_id, private)

    def switch_head(self, session_id: str, head_id: str) -> None:
        self.home.sessions.switch_head(session_id, head_id)

    # -- projects --------------------------------------------------------------------------
    def commit_page(self, project_id: str, after: str | None, titles: Mapping[str, str]) -> CommitPage:
        """One page of a project's log (after=None: the newest) with the session turns linked to it."""
        started = time.perf_counter()
        registry = self.home.projects
        commits = [mask_commit(c) for c in registry.log(project_id, COMMIT_PAGE, after=after)]
        by_commit = registry.links.by_commit(project_id)
        links: dict[str, TurnLink] = {}
        for commit in commits:
            link = by_commit.get(commit.oid)
            if link is not None:
                title = titles.get(link.session_id, "")
                links[commit.oid] = TurnLink(link.session_id, link.turn, title, link.head_id)
            elif commit.session_id:  # an agent commit names its session in the message
                links[commit.oid] = TurnLink(commit.session_id, commit.turn, titles.get(commit.session_id, ""), "")
        return CommitPage(commits, links, len(commits) < COMMIT_PAGE, (time.perf_counter() - started) * 1000)

    def commit_detail(self, project_id: str, oid: str) -> CommitDetail:
        return mask_commit_detail(self.home.projects.show(project_id, oid))

    # -- export, blame (issue 26) -----------------------------------------------------------
    def export_session(self, session_id: str, path: Path, fmt: str | None = None) -> Path:
        """Write the session (redacted) to `path`; the format from its suffix unless given."""
        from opmem_tui.backend.export import export_session, write_export

        suffix = {".md": "md", ".markdown": "md", ".json": "json"}
        chosen = fmt or suffix.get(path.suffix.lower(), "html")
        return write_export(export_session(self.home.sessions, session_id, chosen), path)

    def blame(self, project_id: str, path: str) -> BlameReport:
        """Each line of a project file (repo-relative path) and the session turn that wrote it."""
        from opmem_tui.backend.projects.blame import Blamer

        blamer = Blamer(self.home.projects, self.home.sessions, project_id)
        rel = blamer.git.relative(path) if os.path.isabs(path) else path
        if rel is None:
            raise OpmemError(f"{path}: not a file of the project {project_id}")
        return blamer.blame(rel)

    # -- jobs ------------------------------------------------------------------------------
    def import_sources(self) -> list[tuple[str, str]]:
        """(source, label) for every importer this build has."""
        from opmem_tui.backend.importers import SOURCES

        return [(source, SOURCE_LABELS.get(source, source)) for source in SOURCES]

    def import_needs_path(self, source: str) -> bool:
        """True for a source with no default folder (e.g. the generic JSONL one)."""
        from opmem_tui.backend.importers import get_importer

        return not get_importer(source).default_paths()

    def store_is_empty(self) -> bool:
        return not self.home.sessions.list_sessions().sessions

    def find_agents(self, progress: Callable[[str], object] | None = None) -> list[Found]:
        """Every agent keeping sessions on this machine, with what an import would bring (backend/importers/discovery.py)."""
        from opmem_tui.backend.importers import SOURCES
        from opmem_tui.backend.importers.discovery import find_agents

        return find_agents(SOURCES, progress=progress)

    def run_import(
        self,
        source: str,
        paths: Iterable[Path] | None,
        *,
        progress: Callable[[int, int | None, str], None],
        cancel: Callable[[], bool],
    ) -> ImportReport:
        """Run one importer over `paths` (None: the agent's default folder), with the same
        ingest hooks as `opmem import` (the search index takes the new sessions in)."""
        from opmem_tui.backend.importers import run_import

        paths = list(paths) if paths else None
        hooks = self.home.ingest_hooks()
        report = run_import(self.home, source, paths, progress=progress, cancel=cancel, hooks=hooks, defer_mirror=True)
        self.mirrors.add(self.home.sessions.owed_mirrors())  # browsable now; the git mirror in the background
        self.mirrors.start()
        return report

    @property
    def mirrors(self) -> MirrorWriter:
        """Writes the git mirror of imported sessions in the background (store/mirror_backlog.py)."""
        if self._mirrors is None:
            self._mirrors = MirrorWriter(self.home.sessions, on_written=self.home.search_index.after_ingest)
        return self._mirrors

    def start_mirrors(self, on_problems: Callable[[list[str]], object] | None = None) -> None:
        """At start: write the git mirrors an earlier run left unfinished, in the background;
        `on_problems` is told (on the writer's thread) what a background run could not do."""
        self.mirrors.on_problems = on_problems
        self.mirrors.start(adopt=True)

    def stop_mirrors(self) -> None:
        if self._mirrors is not None:
            self._mirrors.stop()

    def verify(self, *, repair: bool) -> VerifyReport:
        return self.home.sessions.verify(repair=repair)

    # -- config ----------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.home.config.path

    def save_theme(self, name: str) -> None:
        config = self.home.config
        try:
            current = config.ui.theme
        except OpmemError:
            current = None  # a broken [ui] section: writing a valid theme mends it
        if current != name:
            config.set("ui.theme", name)
            config.save()
