"""One bound project's own git repository, read: its log, a commit's diff, the commits of a time
window, and where a tool's path lies in it. Writes for the agent are agent_commit.py's.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, SortMode

from ..model import OpmemError
from .records import CommitDetail, CommitInfo, DiffLine, FileDiff, Hunk

OPMEM_DIR = ".opmem"
EXCLUDE_LINE = "/.opmem/"
_AGENT_NAME = re.compile(r"^agent \((?P<model>.*) via opmem\)$")
_AGENT_SUMMARY = re.compile(r"^\[agent (?P<session>[^\]\s]+)\] turn (?P<turn>\d+):")


class ProjectGitError(OpmemError):
    """A git problem in a bound project; the text names the repository."""


def _is_agent_name(raw: bytes) -> bool:
    """Cheap test on the raw author name, for filtering long walks."""
    return raw.startswith(b"agent (") and raw.endswith(b" via opmem)")


def _common_dir(repo: pygit2.Repository) -> Path:
    """The shared .git folder (a linked worktree keeps info/exclude in the main one)."""
    gitdir = Path(repo.path)
    marker = gitdir / "commondir"
    if marker.is_file():
        target = marker.read_text(encoding="utf-8").strip()
        return (gitdir / target).resolve() if not os.path.isabs(target) else Path(target)
    return gitdir


def ensure_excluded(repo: pygit2.Repository) -> bool:
    """Add `/.opmem/` to .git/info/exclude once, so `git status` never lists opmem's folder."""
    exclude = _common_dir(repo) / "info" / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        text = ""
    lines = {line.strip() for line in text.splitlines()}
    if EXCLUDE_LINE in lines or ".opmem/" in lines or ".opmem" in lines:
        return False
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = "" if not text or text.endswith("\n") else "\n"
    with open(exclude, "a", encoding="utf-8") as fh:
        fh.write(f"{prefix}# opmem keeps in-project session repos here\n{EXCLUDE_LINE}\n")
    return True


def commit_info(commit: pygit2.Commit, paths: tuple[str, ...] | None = None) -> CommitInfo:
    """One log line's record. Kept lean: a log page builds hundreds of them."""
    author = commit.author
    name = author.raw_name.decode("utf-8", "replace")
    message = commit.raw_message.decode("utf-8", "replace")
    summary = message.partition("\n")[0].strip()
    agent = _AGENT_NAME.match(name) if name.startswith("agent (") else None
    tagged = _AGENT_SUMMARY.match(summary) if agent else None
    return CommitInfo(
        str(commit.id),
        summary,
        message,
        name,
        author.raw_email.decode("utf-8", "replace"),
        float(author.time),
        author.offset,
        tuple(map(str, commit.parent_ids)),
        agent is not None,
        agent.group("model") if agent else "",
        tagged.group("session") if tagged else "",
        int(tagged.group("turn")) if tagged else None,
        paths,
    )


# --------------------------------------------------------------------------------------------


class ProjectGit:
    """Read and write one project repository. Cheap to build; the Repository is opened lazily."""

    def __init__(self, workdir: str | os.PathLike[str], *, project_id: str = "") -> None:
        self.workdir = Path(workdir)
        self.project_id = project_id
        self._repo: pygit2.Repository | None = None
        # Continuations of recent log walks: (cursor oid, agent_only) -> the walker past it.
        self._walks: OrderedDict[tuple[str, bool], pygit2.Walker] = OrderedDict()

    # -- opening ------------------------------------------------------------------------------

    @property
    def repo(self) -> pygit2.Repository:
        if self._repo is None:
            try:
                repo = pygit2.Repository(str(self.workdir))
            except (pygit2.GitError, KeyError) as exc:
                raise ProjectGitError(f"{self.workdir}: not a git repository ({exc})") from None
            if repo.is_bare or not repo.workdir:
                raise ProjectGitError(f"{self.workdir}: a bare repository has no files to bind")
            self._repo = repo
        return self._repo

    @property
    def root(self) -> Path:
        return Path(self.repo.workdir)

    def head_oid(self) -> pygit2.Oid | None:
        repo = self.repo
        if repo.head_is_unborn:
            return None
        try:
            return repo.head.target
        except pygit2.GitError:
            return None

    # -- reading ------------------------------------------------------------------------------

    def log(
        self,
        limit: int = 100,
        agent_only: bool = False,
        *,
        after: str | None = None,
        since: float | None = None,
    ) -> list[CommitInfo]:
        """Newest first from HEAD, `limit` commits. Page on with `after=<last oid of a page>`.

        git's default order (by commit date, no topo sort) and no diffs, so the first page of a
        huge history costs only the commits shown. Agent commits are told by their author name.
        """
        if limit <= 0:
            return []
        head = self.head_oid()
        if head is None:
            return []
        walker = None
        if after:
            walker = self._walks.pop((after, agent_only), None)
            if walker is None:
                walker = self._walker(head)
                for commit in walker:  # a cold cursor: skip to it
                    if str(commit.id) == after:
                        break
                else:
                    return []
        else:
            walker = self._walker(head)
        out: list[CommitInfo] = []
        for commit in walker:
            if since is not None and commit.commit_time < since:
                break
            if agent_only and not _is_agent_name(commit.author.raw_name):
                continue
            out.append(commit_info(commit))
            if len(out) >= limit:
                self._walks[(out[-1].oid, agent_only)] = walker
                while len(self._walks) > 8:
                    self._walks.popitem(last=False)
                break
        return out

    def _walker(self, head: pygit2.Oid) -> pygit2.Walker:
        # SortMode.NONE is git's own default order (newest first by commit date, parents queued
        # by date) and streams; TIME uses an unstable heap that misorders commits with equal
        # timestamps (scripted or rebased history), and TOPOLOGICAL reads the whole history first.
        return self.repo.walk(head, SortMode.NONE)

    def resolve(self, rev: str) -> pygit2.Commit:
        try:
            obj = self.repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise ProjectGitError(f"{self.workdir}: no commit {rev!r} ({exc})") from None
        return commit

    def show(self, rev: str, *, context_lines: int = 3, max_lines_per_file: int = 2000) -> CommitDetail:
        """A commit and its changes against its first parent, file by file with hunks."""
        commit = self.resolve(rev)
        repo = self.repo
        if commit.parents:
            diff = repo.diff(commit.parents[0].tree, commit.tree, context_lines=context_lines)
        else:
            diff = commit.tree.diff_to_tree(context_lines=context_lines, swap=True)
        diff.find_similar(DiffFind.FIND_RENAMES)
        files = [self._file_diff(patch, max_lines_per_file) for patch in diff]
        paths = tuple(f.path for f in files)
        return CommitDetail(commit=commit_info(commit, paths), files=tuple(files))

    @staticmethod
    def _file_diff(patch: pygit2.Patch, max_lines: int) -> FileDiff:
        delta = patch.delta
        status = delta.status_char()
        old_path = delta.old_file.path
        new_path = delta.new_file.path
        path = old_path if delta.status == DeltaStatus.DELETED else new_path
        _, additions, deletions = patch.line_stats
        hunks: list[Hunk] = []
        budget = max_lines
        truncated = False
        binary = bool(delta.is_binary)
        if not binary:
            for hunk in patch.hunks:
                if budget <= 0:
                    truncated = True
                    break
                lines = []
                for line in hunk.lines:
                    if budget <= 0:
                        truncated = True
                        break
                    lines.append(
                        DiffLine(
                            line.origin, line.raw_content.decode("utf-8", "replace"), line.old_lineno, line.new_lineno
                        )
                    )
                    budget -= 1
                hunks.append(
                    Hunk(
                        header=hunk.header.rstrip("\n"),
                        old_start=hunk.old_start,
                        old_lines=hunk.old_lines,
                        new_start=hunk.new_start,
                        new_lines=hunk.new_lines,
                        lines=tuple(lines),
                    )
                )
        return FileDiff(path, old_path, status, additions, deletions, binary, tuple(hunks), truncated)

    def changed_paths(self, commit: pygit2.Commit) -> tuple[str, ...]:
        """Paths a commit changed against its first parent (no patches are generated)."""
        if commit.parents:
            diff = self.repo.diff(commit.parents[0].tree, commit.tree)
        else:
            diff = commit.tree.diff_to_tree(swap=True)
        out: dict[str, None] = {}
        for delta in diff.deltas:
            out.setdefault(delta.new_file.path or delta.old_file.path, None)
            if delta.old_file.path:
                out.setdefault(delta.old_file.path, None)
        return tuple(out)

    def commits_between(self, since: float, until: float, *, slack: float = 3600.0) -> list[CommitInfo]:
        """Commits on any branch with author time in [since, until], with their changed paths."""
        repo = self.repo
        tips = set()
        head = self.head_oid()
        if head is not None:
            tips.add(head)
        for name in repo.listall_references():
            if not name.startswith("refs/heads/"):
                continue
            try:
                tips.add(repo.lookup_reference(name).peel(pygit2.Commit).id)
            except (KeyError, pygit2.GitError, ValueError):
                continue
        if not tips:
            return []
        walker = None
        for tip in tips:
            if walker is None:
                walker = repo.walk(tip, SortMode.NONE)
            else:
                walker.push(tip)
        out = []
        for commit in walker:
            when = commit.author.time
            if commit.commit_time < since - slack:
                break
            if since <= when <= until:
                out.append(commit_info(commit, self.changed_paths(commit)))
        return out

    # -- mapping tool paths into the repository -----------------------------------------------

    def relative(self, path: str) -> str | None:
        """A tool's path as a repo-relative posix path, or None when it lies outside the repo."""
        root = self.root
        roots = dict.fromkeys((os.path.normpath(str(root)), os.path.realpath(str(root))))
        full = path if os.path.isabs(path) else os.path.join(str(root), path)
        # the path as written first: a symlink inside the repo is committed as the link itself
        for candidate in dict.fromkeys((os.path.normpath(full), os.path.realpath(full))):
            for base in roots:
                try:
                    rel = Path(candidate).relative_to(base)
                except ValueError:
                    continue
                text = rel.as_posix()
                if text in ("", ".") or text.split("/", 1)[0] in (".git", OPMEM_DIR):
                    return None
                return text
        return None


def iter_commits(repo_git: ProjectGit, page: int = 300) -> Iterator[CommitInfo]:
    """Every commit from HEAD, a page at a time (for exports and tests)."""
    after = None
    while True:
        batch = repo_git.log(page, after=after)
        yield from batch
        if len(batch) < page:
            return
        after = batch[-1].oid
