"""Reading a session's git mirror: its branches, its log, a commit's conversation, what is missing."""

from __future__ import annotations

import json

import pygit2

from ..model import Branch, CorruptFile, Node, OpmemError, TurnCommit
from .commit_text import trailers
from .git_mirror import GIT_ERRORS, GitMirror, mirror_op


@mirror_op(list)
def branches(mirror: GitMirror) -> list[Branch]:
    mirror.flush_pending()
    if not mirror.exists():
        return []
    repo = mirror.repo()
    try:
        current = repo.head.shorthand if not repo.head_is_unborn else None
    except pygit2.GitError:
        current = None
    out: list[Branch] = []
    for name, tip in sorted(mirror.tips().items(), key=lambda kv: (kv[0] != "main", kv[0])):
        head, turn = trailers(repo[tip].peel(pygit2.Commit).message)
        out.append(Branch(name=name, head_id=head or "", tip=tip, turns=turn, is_current=name == current))
    return out


@mirror_op(list)
def session_commits(mirror: GitMirror, limit: int = 100) -> list[TurnCommit]:
    """`git log --all`, newest first, each commit with the branches that point at it."""
    mirror.flush_pending()
    if not mirror.exists():
        return []
    repo = mirror.repo()
    tips = mirror.tips()
    if not tips:
        return []
    decorations: dict[str, list[str]] = {}
    for name, tip in tips.items():
        decorations.setdefault(tip, []).append(name)
    walker = repo.walk(None, pygit2.enums.SortMode.TIME | pygit2.enums.SortMode.TOPOLOGICAL)
    for oid in set(tips.values()):
        walker.push(pygit2.Oid(hex=oid))
    out: list[TurnCommit] = []
    for commit in walker:
        if len(out) >= limit:
            break
        head, turn = trailers(commit.message)
        oid = str(commit.id)
        out.append(
            TurnCommit(
                oid=oid,
                turn=turn,
                head_id=head or "",
                summary=commit.message.split("\n", 1)[0],
                message=commit.message,
                time=float(commit.commit_time),
                branches=tuple(sorted(decorations.get(oid, ()))),
                parents=tuple(str(p) for p in commit.parent_ids),
            )
        )
    return out


def nodes_at(mirror: GitMirror, commit: str, label: str) -> list[Node]:
    """The conversation exactly as it stood at a commit, read from its tree (moves no file)."""
    mirror.flush_pending()
    if mirror.broken:
        raise OpmemError(f"{label}: {mirror.broken}")
    if not mirror.exists():  # a read makes no repository
        raise OpmemError(f"{label}: no commit {commit!r} (no git mirror)")
    repo = mirror.repo()
    try:
        tree = repo.revparse_single(commit).peel(pygit2.Tree)
    except GIT_ERRORS:
        raise OpmemError(f"{label}: no commit {commit!r}") from None
    if "history" not in tree:
        return []
    nodes: list[Node] = []
    for entry in tree["history"].peel(pygit2.Tree):
        try:
            blob = repo[entry.id].peel(pygit2.Blob)
        except GIT_ERRORS as exc:
            mirror.failed(exc)
            raise OpmemError(f"{label}: {mirror.broken}") from None
        where = f"{mirror.path}@{commit[:12]}:history/{entry.name}"
        try:
            nodes.append(Node.from_json(json.loads(blob.data), where))
        except (ValueError, CorruptFile) as exc:
            raise CorruptFile(where, str(exc)) from None
    nodes.sort(key=lambda n: n.seq)
    return nodes


def missing_objects(mirror: GitMirror) -> list[str]:
    """What the mirror lacks: any commit or tree of any branch, and each tip's files. [] when whole."""
    if not mirror.exists():
        return []
    try:
        mirror.flush_pending()
        repo = mirror.repo()
        tips = set(mirror.tips().values())
        if not tips:
            return []
        walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL)
        for oid in tips:
            walker.push(pygit2.Oid(hex=oid))
        for commit in walker:
            tree = commit.tree
            if "history" in tree:
                tree["history"].peel(pygit2.Tree)
        odb = repo.odb
        for oid in tips:
            tree = repo[oid].peel(pygit2.Tree)
            entries = list(tree["history"].peel(pygit2.Tree)) if "history" in tree else []
            for entry in [*entries, *(e for e in tree if e.name == "meta.json")]:
                if not odb.exists(entry.id):
                    return [f"{mirror.git_dir}: object {entry.id} ({entry.name}) is missing"]
    except GIT_ERRORS as exc:
        return [f"{mirror.git_dir}: {type(exc).__name__}: {exc}"]
    return []
