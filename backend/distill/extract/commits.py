"""Project commits made since the last run, each an event linked to the turn that made it (when known)."""

from __future__ import annotations

from ...memory.records import project_scope
from ...model import Node
from ..model import ProjectCommit, SessionInfo
from . import patterns
from .builder import RecordBuilder


def commit_records(b: RecordBuilder, commit: ProjectCommit) -> str:
    """The commit's entity, its part-of / fixed-by edges and its event; returns the event id."""
    b.session = SessionInfo(
        session_id=commit.session_id,
        project_id=commit.project_id,
        project_name=commit.project_name,
        scope=project_scope(commit.project_id),
    )
    nodes = [Node(id=commit.head_id, seq=0, role="assistant", created_at=commit.time)] if commit.head_id else []
    prov = b.provenance(nodes, turn=commit.turn, commit=commit.oid, event_time=commit.time)
    short = commit.oid[:7]
    project = b.entity("project", commit.project_name or commit.project_id, prov, key=commit.project_id)
    commit_id = b.entity("commit", short, prov, attrs={"oid": commit.oid, "message": commit.summary[:200]})
    b.edge(commit_id, "part-of", project, prov)
    named = [project, commit_id]
    for issue in patterns.issue_refs(commit.message):
        issue_id = b.entity("issue", issue, prov)
        named.append(issue_id)
    for issue in patterns.fixed_issues(commit.message):
        b.edge(b.entity("issue", issue, prov), "fixed-by", commit_id, prov, confidence=0.9)
    summary = f"Committed {short} to {commit.project_name or commit.project_id}: {commit.summary}"
    importance = 0.6 if commit.session_id else 0.5
    return b.event(summary, "work", importance, prov, named, key=f"commit:{commit.project_id}:{commit.oid}")
