"""Stage 2, extract: a batch of turns becomes entities, edges and events.

`extract_rules` is the default (deterministic, offline); `extract_commits` turns project commits
into events; the LLM extractor (llm.py) adds to the rules' result, never replaces it.
"""

from __future__ import annotations

from ..model import CONVERSATION, Extraction, ProjectCommits, SessionBatch
from .builder import RecordBuilder
from .coding import extract_coding
from .commits import commit_records
from .conversation import extract_conversation


def extract_rules(batch: SessionBatch, *, ingestion_time: float, knowledge: bool = True) -> Extraction:
    """The rules' records of one batch; `knowledge=False` leaves out what the knowledge rules learn
    (knowledge/: stack, commands, conventions, decisions, state), keeping the activity."""
    builder = RecordBuilder(batch.session, ingestion_time)
    if not batch.turns:
        return Extraction()
    if batch.session.kind == CONVERSATION:
        extract_conversation(builder, batch)
    else:
        extract_coding(builder, batch, knowledge=knowledge)
    return builder.build()


def extract_commits(commits: ProjectCommits, *, ingestion_time: float) -> Extraction:
    builder = RecordBuilder(None, ingestion_time)
    for commit in commits.commits:
        commit_records(builder, commit)
    return builder.build()


__all__ = ["extract_commits", "extract_rules"]
