"""The session tools on real transcripts (../shared/fixtures), imported through the importers."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.recall.context import recall_for

from .conftest import ask

REPO = Path(__file__).resolve().parents[3]
SOURCES = {"claude": "claude-code/**/*.jsonl", "codex": "codex/*.jsonl"}


def fixtures() -> Path:
    env = os.environ.get("OPMEM_FIXTURES")
    return Path(env) if env else (REPO / ".." / "shared" / "fixtures").resolve()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Home:
    folder = fixtures() / "transcripts"
    if not folder.is_dir():
        pytest.skip("the real transcripts (../shared/fixtures/transcripts) are absent")
    home = Home(tmp_path_factory.mktemp("fixtures") / "home", durable=False)
    for source, pattern in SOURCES.items():
        files = sorted(folder.glob(pattern))
        if files:
            run_import(home, source, files, bind=False)
    home.sessions.flush()
    if not home.sessions.list_sessions().sessions:
        pytest.skip("no fixture session imported")
    return home


@pytest.mark.parametrize("max_bytes", [2048, 16384])
def test_every_turn_of_every_fixture_session_opens_within_bounds(imported: Home, max_bytes: int) -> None:
    recall = dataclasses.replace(recall_for(imported, cwd="/"), max_reply_bytes=max_bytes)
    sessions = imported.sessions.list_sessions().sessions
    turns_seen = tool_calls = 0
    for meta in sessions:
        overview = ask(recall, "memory_open_session", session_id=meta.id)
        assert overview["session"]["id"] == meta.id
        count = overview["session"]["turns"]
        for number in range(1, count + 1):
            page = 0
            while page is not None:
                reply = ask(recall, "memory_open_session", session_id=meta.id, turn=number, page=page)
                assert "error" not in reply, reply
                tool_calls += sum(1 for m in reply["messages"] if m["role"] == "tool")
                page = reply.get("next_page")
            turns_seen += 1
    store = imported.sessions
    assert turns_seen == sum(len(store.get_turns(m.id)) for m in sessions)
    assert tool_calls == sum(len(t.tool_nodes) for m in sessions for t in store.get_turns(m.id))
    assert tool_calls > 30


def test_fixture_tool_results_read_back_whole(imported: Home) -> None:
    recall = dataclasses.replace(recall_for(imported, cwd="/"), max_reply_bytes=2048)
    store = imported.sessions
    longest = max(
        ((meta.id, node) for meta in store.list_sessions().sessions for node in store.get_nodes(meta.id)),
        key=lambda item: len(item[1].content),
    )
    sid, node = longest
    offset, text = 0, ""
    while offset is not None:
        part = ask(recall, "memory_open_session", session_id=sid, node=node.id, offset=offset)
        text += part["text"]
        offset = part["next_offset"]
    assert text == node.content and len(text) > 2048
