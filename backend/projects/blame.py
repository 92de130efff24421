"""Which prompt wrote a line: `git blame` of a file in a bound project, each line's commit traced
to the session turn that made it.

Blame runs the git command line (`git blame --porcelain -M -C`): a line a later commit moved
(inside the file, or from another file that commit changed) keeps the commit that wrote it,
which libgit2's blame does not follow. It blames the file as it is in the work tree, so lines
not committed yet say so.

A commit comes from a turn when opmem made it (`[agent <session>] turn N:` by `agent (<model>
via opmem)`) or when projects/links.jsonl links it to a turn (links.py: its hash or summary in a
turn's `git commit`, or, with low confidence, its time and paths). Anything else is the user's
own commit and is never given to an agent. The prompt's first line passes the privacy gate.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from ..model import OpmemError, Turn
from ..node_text import model_of
from ..privacy import redact_text
from ..safe_text import plain
from .blame_records import BlameLine, BlameReport, TurnOrigin
from .links import HIGH
from .repository import ProjectGitError, commit_info

if TYPE_CHECKING:
    from ..store.sessions import SessionStore
    from .registry import ProjectRegistry

UNCOMMITTED = "0" * 40
GIT_TIMEOUT = 120.0
_HEADER = re.compile(r"^([0-9a-f]{40}) (\d+) (\d+)(?: (\d+))?$")
_SPEC = re.compile(r"^(?P<path>.+?):(?P<a>\d+)(?:-(?P<b>\d+))?$")


def parse_spec(spec: str, exists: Callable[[str], bool] = os.path.exists) -> tuple[str, int | None, int | None]:
    """`PATH`, `PATH:LINE` or `PATH:LINE-LINE` as (path, first, last); a file whose own name ends
    in `:N` is taken whole when it exists."""
    m = _SPEC.match(spec)
    if m is None or exists(spec):
        return (spec, None, None)
    first = int(m.group("a"))
    last = int(m.group("b")) if m.group("b") else first
    if first < 1 or last < first:
        raise OpmemError(f"{spec}: lines run from 1, and the first may not come after the last")
    return (m.group("path"), first, last)


def _git() -> str:
    found = shutil.which("git")
    if found is None:
        raise ProjectGitError("blame needs the git command line (git blame follows moved lines); install git")
    return found


def git_blame(
    root: Path, rel: str, first: int | None = None, last: int | None = None
) -> list[tuple[int, str, str, float, str]]:
    """(line, commit, author, author time, text) per line of the work-tree file, from
    `git blame --porcelain -M -C`."""
    args = [_git(), "-C", str(root), "blame", "--porcelain", "-M", "-C"]
    if first is not None:
        args += ["-L", f"{first},{last if last is not None else first}"]
    args += ["--", rel]
    env = {**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat"}
    try:
        done = subprocess.run(args, capture_output=True, timeout=GIT_TIMEOUT, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise ProjectGitError(f"{root / rel}: git blame took longer than {GIT_TIMEOUT:.0f}s") from None
    except OSError as exc:
        raise ProjectGitError(f"{root / rel}: git blame could not run ({exc})") from None
    if done.returncode != 0:
        message = plain(done.stderr.decode("utf-8", "replace")).strip().removeprefix("fatal: ")
        raise ProjectGitError(f"{root / rel}: git blame failed: {message or f'exit {done.returncode}'}")
    return parse_porcelain(done.stdout)


def parse_porcelain(out: bytes) -> list[tuple[int, str, str, float, str]]:
    authors: dict[str, tuple[str, float]] = {}
    rows: list[tuple[int, str, str, float, str]] = []
    commit = ""
    final = 0
    fields: dict[str, str] = {}
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):
            if commit not in authors:
                who = f"{fields.get('author', '')} {fields.get('author-mail', '')}".strip()
                try:
                    when = float(fields.get("author-time") or 0)
                except ValueError:
                    when = 0.0
                authors[commit] = ("not committed yet" if commit == UNCOMMITTED else who, when)
            who, when = authors[commit]
            rows.append((final, commit, who, when, raw[1:].decode("utf-8", "replace")))
            continue
        line = raw.decode("utf-8", "replace")
        m = _HEADER.match(line)
        if m is not None:
            commit, final, fields = m.group(1), int(m.group(3)), {}
            continue
        key, _, value = line.partition(" ")
        if key:
            fields[key] = value
    return rows


class Blamer:
    """Blame files of one bound project and trace their commits to turns (cached per commit)."""

    def __init__(self, registry: ProjectRegistry, sessions: SessionStore, project_id: str) -> None:
        self.registry = registry
        self.sessions = sessions
        self.project_id = project_id
        self.git = registry.git(project_id)
        self._origins: dict[str, TurnOrigin | None] = {}
        self._turns: dict[tuple[str, str], list[Turn]] = {}
        self.problems: list[str] = []

    def blame(self, rel: str, first: int | None = None, last: int | None = None) -> BlameReport:
        rows = git_blame(self.git.root, rel, first, last)
        lines = tuple(
            BlameLine(line, text, None if commit == UNCOMMITTED else commit, author, when, self.origin(commit))
            for line, commit, author, when, text in rows
        )
        return BlameReport(self.project_id, rel, lines, tuple(dict.fromkeys(self.problems)))

    def origin(self, oid: str) -> TurnOrigin | None:
        if oid == UNCOMMITTED:
            return None
        if oid not in self._origins:
            self._origins[oid] = self._trace(oid)
        return self._origins[oid]

    def _trace(self, oid: str) -> TurnOrigin | None:
        try:
            info = commit_info(self.git.repo[oid].peel(pygit2.Commit))
        except (KeyError, ValueError, pygit2.GitError):
            return None
        links = self.registry.links.for_commit(oid, self.project_id)
        if info.is_agent and info.session_id and info.turn is not None:
            # opmem's own commit names its turn; the link (if any) adds the branch's head
            head = next((li.head_id for li in links if li.session_id == info.session_id and li.turn == info.turn), "")
            base = TurnOrigin(info.session_id, info.turn, HIGH, "opmem", head, model=info.model)
        elif links:
            best = links[0]
            base = TurnOrigin(best.session_id, best.turn, best.confidence, best.reason, best.head_id)
        else:
            return None
        return self._with_turn(base, info.model)

    def _with_turn(self, origin: TurnOrigin, commit_model: str) -> TurnOrigin:
        turn = self._find_turn(origin.session_id, origin.turn, origin.head_id)
        if turn is None:
            return origin
        user = turn.user
        prompt = ""
        if user is not None:
            first = next((part.strip() for part in user.content.splitlines() if part.strip()), "")
            prompt = plain(redact_text(first))[:200]
        model = commit_model or next((m for m in map(model_of, turn.nodes) if m), "")
        when = user.created_at if user is not None else (turn.nodes[0].created_at if turn.nodes else 0.0)
        head = origin.head_id or turn.last.id
        return TurnOrigin(
            origin.session_id,
            origin.turn,
            origin.confidence,
            origin.reason,
            head,
            prompt,
            plain(redact_text(model)),
            when,
        )

    def _find_turn(self, session_id: str, number: int, head_id: str) -> Turn | None:
        """Turn `number` on the branch through `head_id` (the session's head line without one).
        A branch read once answers for every turn on it: most commits of a file share one."""
        for (sid, read_for), turns in self._turns.items():
            if sid != session_id or (not head_id and read_for):
                continue  # no head: only the head line itself answers
            found = next((t for t in turns if t.number == number), None)
            if found is not None and (not head_id or any(n.id == head_id for n in found.nodes)):
                return found
        key = (session_id, head_id)
        if key in self._turns:
            return None
        try:
            head = head_id if head_id and self.sessions.has_node(session_id, head_id) else None
            turns = self.sessions.get_turns(session_id, head)
        except OpmemError as exc:
            self.problems.append(f"session {session_id}: {exc}")
            turns = []
        self._turns[key] = turns
        return next((t for t in turns if t.number == number), None)


def blame_path(
    registry: ProjectRegistry,
    sessions: SessionStore,
    path: str | os.PathLike[str],
    first: int | None = None,
    last: int | None = None,
) -> BlameReport:
    """Blame a file given by its path (absolute, or relative to the current folder) in the
    bound project that holds it."""
    full = os.path.abspath(path)
    project = registry.find(full)
    if project is None:
        raise OpmemError(f"{path}: not in a bound project (bind its folder: opmem projects add DIR)")
    blamer = Blamer(registry, sessions, project.id)
    rel = blamer.git.relative(full)
    if rel is None:
        raise OpmemError(f"{path}: not a file of the project {project.id} ({project.workdir})")
    if not os.path.isfile(full):
        raise OpmemError(f"{path}: no such file")
    return blamer.blame(rel, first, last)
