"""memory_git_log and memory_git_show: a bound project's history, agent commits and their turns."""

from __future__ import annotations

from typing import Any

from ..privacy import redact_text
from ..projects.links import CommitLink
from ..projects.records import CommitDetail, CommitInfo, FileDiff
from ..projects.registry import Project, ProjectNotFound
from ..projects.repository import ProjectGit, ProjectGitError
from .context import Recall
from .dates import iso, parse_when
from .errors import (
    BAD_ARGUMENT,
    NO_HISTORY,
    PRIVATE,
    STORE_ERROR,
    UNKNOWN_COMMIT,
    UNKNOWN_PATH,
    RecallError,
    did_you_mean,
)
from .reply import cut_text, page_of, size, text_chunk

MAX_LIMIT = 200
DIFF_LINES = 60
MESSAGE_CHARS = 2000
SUMMARY_CHARS = 100
SUGGEST_FROM = 500  # recent commits searched for "did you mean"
WHOLE_FILE_LINES = 1_000_000  # reading one file's diff on: no per-file line cap


def memory_git_log(
    recall: Recall,
    project_id: str | None = None,
    since: str | None = None,
    limit: int = 50,
    after: str | None = None,
) -> dict[str, Any]:
    """Newest commits of a project (the caller's by default), agent commits marked with their
    session and turn, other commits with the turn linked to them. Page on with `after`."""
    if not 1 <= limit <= MAX_LIMIT:
        raise RecallError(BAD_ARGUMENT, f"limit must be 1..{MAX_LIMIT}, got {limit}")
    project = recall.project(project_id)
    git = _git(recall, project)
    since_ts = parse_when(since, "since", now=recall.now) if since else None
    cursor = _resolve(git, project, after) if after else None
    try:
        commits = git.log(limit, since=since_ts, after=cursor)
    except ProjectGitError as exc:
        raise RecallError(STORE_ERROR, str(exc)) from None
    links = recall.home.projects.links.by_commit(project.id)
    items = [_log_line(c, links.get(c.oid)) for c in commits if not _withheld(recall, c, links.get(c.oid))]
    envelope: dict[str, Any] = {"project": _project_line(project)}
    if since_ts is not None:
        envelope["since"] = iso(since_ts)
    reply, _ = page_of(envelope, "commits", items, 0, recall.max_reply_bytes)
    shown = len(reply["commits"])
    for key in ("page", "pages", "next_page"):
        reply.pop(key, None)
    if shown < len(items) or len(commits) == limit:
        last = commits[shown - 1].oid if shown else cursor
        reply["more"] = {"project_id": project.id, "after": last}
    return reply


def memory_git_show(
    recall: Recall,
    commit: str,
    project_id: str | None = None,
    path: str | None = None,
    page: int = 0,
    offset: int = 0,
) -> dict[str, Any]:
    """One commit: message, author, linked turns and its diff file by file (paged). With `path`:
    that file's whole diff read on from character `offset`."""
    project = recall.project(project_id)
    git = _git(recall, project)
    found = _resolve(git, project, commit)
    lines = WHOLE_FILE_LINES if path is not None else DIFF_LINES * 4
    try:
        detail = git.show(found, max_lines_per_file=lines)
    except ProjectGitError as exc:
        raise RecallError(STORE_ERROR, str(exc)) from None
    links = recall.home.projects.links.for_commit(detail.commit.oid, project.id)
    if _withheld(recall, detail.commit, links[0] if links else None):
        raise RecallError(PRIVATE, f"commit {detail.commit.oid[:12]} was made in a private session: kept out of recall")
    if path is not None:
        return _file_text(recall, project, detail, path, offset)
    envelope: dict[str, Any] = {"project": _project_line(project), "commit": _commit_head(detail.commit)}
    if links:
        envelope["turns"] = [_link(link) for link in links[:10]]
    envelope["changed"] = {
        "files": len(detail.files),
        "additions": sum(f.additions for f in detail.files),
        "deletions": sum(f.deletions for f in detail.files),
    }
    chars = max(300, min(4000, recall.max_reply_bytes // 5))
    files = [_file_entry(project.id, detail.commit.oid, f, chars) for f in detail.files]
    reply, _ = page_of(envelope, "files", files, page, recall.max_reply_bytes)
    return reply


def _withheld(recall: Recall, commit: CommitInfo, link: CommitLink | None) -> bool:
    """A commit an agent made in a private session (its message quotes that session's prompt)."""
    sessions = {commit.session_id or "", link.session_id if link is not None else ""} - {""}
    return any(recall.withheld_session(sid) for sid in sessions)


def _git(recall: Recall, project: Project) -> ProjectGit:
    if project.status == "folder":  # known from sessions only: opmem holds no repository for it
        raise RecallError(NO_HISTORY, _no_history(project))
    try:
        git = recall.home.projects.git(project.id)
        git.repo  # noqa: B018 - opening it is the check
    except ProjectNotFound:
        raise RecallError(NO_HISTORY, _no_history(project)) from None
    except ProjectGitError:
        raise RecallError(
            NO_HISTORY,
            f"project {project.name!r} ({project.id}) has no git history on this machine: its folder is gone or "
            "no longer a git repository",
        ) from None
    return git


def _no_history(project: Project) -> str:
    where = f" (folder {project.workdir})" if project.workdir else ""
    return (
        f"project {project.name!r} ({project.id}) is known from its sessions only{where}: it is not a bound git "
        "repository, so it has no commit history to show. Its sessions: memory_search / memory_timeline; "
        "bind it on a machine that has it with `opmem projects add PATH`."
    )


def _resolve(git: ProjectGit, project: Project, rev: str) -> str:
    rev = rev.strip()
    if not rev or rev.startswith("-"):
        raise RecallError(BAD_ARGUMENT, f"commit must be a hash or revision, got {rev!r}")
    try:
        return str(git.resolve(rev).id)
    except ProjectGitError:
        pass
    try:
        recent = git.log(SUGGEST_FROM)
    except ProjectGitError:
        recent = []
    choices = {c.oid[:12]: f"{c.oid} {c.summary}" for c in recent}
    raise RecallError(UNKNOWN_COMMIT, f"project {project.id} has no commit {rev!r}", did_you_mean(rev, choices))


def _project_line(project: Project) -> dict[str, Any]:
    return {"id": project.id, "name": project.name}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _agent(commit: CommitInfo) -> dict[str, Any] | None:
    if not commit.is_agent:
        return None
    agent: dict[str, Any] = {"model": commit.model}
    if commit.session_id:
        agent["session"] = commit.session_id
    if commit.turn is not None:
        agent["turn"] = commit.turn
    return agent


def _link(link: CommitLink) -> dict[str, Any]:
    return {"session": link.session_id, "turn": link.turn, "confidence": link.confidence, "reason": link.reason}


def _log_line(commit: CommitInfo, link: CommitLink | None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "commit": commit.oid[:12],
        "time": iso(commit.time),
        "author": commit.author_name,
        "summary": _short(commit.summary, SUMMARY_CHARS),
    }
    agent = _agent(commit)
    if agent is not None:
        line["agent"] = agent
    if link is not None:
        line["turn"] = _link(link)
    return line


def _commit_head(commit: CommitInfo) -> dict[str, Any]:
    head: dict[str, Any] = {
        "oid": commit.oid,
        "time": iso(commit.time),
        "author": f"{commit.author_name} <{commit.author_email}>",
        "message": cut_text(redact_text(commit.message.rstrip("\n")), max_lines=40, max_chars=MESSAGE_CHARS).text,
        "parents": [p[:12] for p in commit.parents],
    }
    agent = _agent(commit)
    if agent is not None:
        head["agent"] = agent
    return head


def diff_text(diff: FileDiff) -> str:
    """A file's hunks as unified diff text."""
    out: list[str] = []
    for hunk in diff.hunks:
        out.append(hunk.header + "\n")
        for line in hunk.lines:
            if line.origin in "<>=":  # "\\ No newline at end of file"
                out.append(line.content.lstrip("\n"))
                continue
            text = line.content if line.content.endswith("\n") else line.content + "\n"
            out.append(line.origin + text)
    return "".join(out)


def _file_entry(project_id: str, oid: str, diff: FileDiff, chars: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": diff.path, "status": diff.status}
    if diff.old_path and diff.old_path != diff.path:
        entry["old_path"] = diff.old_path
    entry["additions"] = diff.additions
    entry["deletions"] = diff.deletions
    if diff.binary:
        entry["binary"] = True
        return entry
    text = redact_text(diff_text(diff))  # before the cut: half a value would pass the last gate
    cut = cut_text(text, max_lines=DIFF_LINES, max_chars=chars)
    entry["diff"] = cut.text
    if not cut.complete or diff.truncated:
        entry["more"] = {
            "project_id": project_id,
            "commit": oid[:12],
            "path": diff.path,
            "offset": len(text) - cut.more_chars,
        }
    return entry


def _file_text(recall: Recall, project: Project, detail: CommitDetail, path: str, offset: int) -> dict[str, Any]:
    diff = next((f for f in detail.files if path in (f.path, f.old_path)), None)
    if diff is None:
        raise RecallError(
            UNKNOWN_PATH,
            f"commit {detail.commit.oid[:12]} does not change {path!r}",
            did_you_mean(path, [f.path for f in detail.files]),
        )
    text = "" if diff.binary else diff_text(diff)
    if not 0 <= offset <= len(text):
        raise RecallError(BAD_ARGUMENT, f"offset {offset} is outside the diff (0..{len(text)})")
    envelope: dict[str, Any] = {
        "project": project.id,
        "commit": detail.commit.oid[:12],
        "path": diff.path,
        "status": diff.status,
        "length": len(text),
        "offset": offset,
        "diff": "",
        "next_offset": None,
    }
    if diff.binary:
        envelope["binary"] = True
    chunk = text_chunk(text, offset, recall.max_reply_bytes - size(envelope) - 32)
    envelope["diff"] = chunk
    end = offset + len(chunk)
    envelope["next_offset"] = end if end < len(text) else None
    return envelope
