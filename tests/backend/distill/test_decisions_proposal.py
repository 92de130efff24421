"""A code element the user proposes, that the next answer opens by agreeing with, is a decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract.knowledge.decisions import proposal

from .history import Session, Turn, brief_of, distil_history


@pytest.mark.parametrize(
    "text, expected",
    [
        ("所以，我还不是应该增加 一个 initAllTaskFromCache方法，将数据库中存的数据，放到缓存中",
         ("add", "initAllTaskFromCache")),
        ("Shouldn't we use `load_index()` here?", ("use", "load_index()")),
        ("Devo criar um `SyncLog`?", ("create", "SyncLog")),
        ("Should I add a cache?", None),  # a plain word names no element of the code
        ("We should add retries", None),  # the user's rule or plan, not a proposal put to the agent
    ],
)  # fmt: skip
def test_a_proposal_names_a_code_element(text, expected):
    assert proposal(text) == expected


def _decided(tmp_path: Path, reply: str) -> list[str]:
    turns = [Turn("Should I add a `restoreQueue()` call at startup so no task is lost?", reply=reply)]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-p", turns)]))
    return [line for line in core.splitlines() if line.startswith("· decided ")]


def test_a_proposal_the_answer_agrees_with_is_decided(tmp_path: Path):
    decided = _decided(tmp_path, "Yes, exactly: `restoreQueue()` at startup restores the pending tasks.")
    assert len(decided) == 1 and "add restoreQueue() (the user's proposal)" in decided[0], decided


@pytest.mark.parametrize(
    "reply",
    [
        "No, `restoreQueue()` is not needed: the worker reloads them.",  # declined
        "Good question. Let me look at the scheduler first.",  # not taken up by name
    ],
)
def test_a_proposal_declined_or_not_taken_up_is_no_decision(tmp_path: Path, reply: str):
    assert _decided(tmp_path, reply) == []
