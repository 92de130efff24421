"""Every memory tool on a store distilled from the real fixtures (../shared/fixtures): the
Claude Code and Codex transcripts and one LoCoMo conversation, imported, distilled by the rules
(`opmem distill`) and indexed (`opmem index rebuild`). The git tools need a project repository,
which the fixtures do not carry: they are tested on real repositories in test_git_tools.py."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.memory.core import CORE_BUDGET
from opmem_tui.backend.recall.context import Recall, recall_for
from opmem_tui.backend.recall.core_block import core_block
from tests.backend.distill.conftest import locomo_to_jsonl

from .conftest import ask
from .test_fixture_sessions import SOURCES, fixtures
from .test_read_only import snapshot

POINTER = re.compile(r"↪ session:(\S+)$")


@pytest.fixture(scope="module")
def distilled(tmp_path_factory: pytest.TempPathFactory) -> Home:
    root = fixtures()
    if not (root / "transcripts").is_dir() or not (root / "locomo" / "conv-26.json").is_file():
        pytest.skip("the real fixtures (../shared/fixtures) are absent")
    tmp = tmp_path_factory.mktemp("distilled")
    home = Home(tmp / "home", durable=False)
    for source, pattern in SOURCES.items():
        files = sorted((root / "transcripts").glob(pattern))
        if files:
            run_import(home, source, files, bind=False)
    run_import(home, "jsonl", [locomo_to_jsonl(root / "locomo" / "conv-26.json", tmp / "conv-26.jsonl")], bind=False)
    home.sessions.flush()
    report = run(home, RunOptions())
    assert report.written.total > 0, report
    home.search_index.rebuild()
    home.search_index.close()
    home.memory.close()
    return home


@pytest.fixture
def recall(distilled: Home) -> Recall:
    return dataclasses.replace(recall_for(distilled, cwd="/"), max_reply_bytes=4096)


def every_page(recall: Recall, name: str, key: str, **args: object) -> list[dict]:
    items: list[dict] = []
    page: int | None = 0
    while page is not None:
        reply = ask(recall, name, **args, page=page)
        assert "error" not in reply, reply
        items += reply[key]
        page = reply.get("next_page")
    return items


def opens(recall: Recall, source: str, turn: int | None) -> None:
    reply = ask(recall, "memory_open_session", session_id=source, turn=turn)
    assert "error" not in reply, (source, turn, reply)


def test_every_event_points_at_a_turn_that_opens(recall: Recall, distilled: Home) -> None:
    before = snapshot(distilled.path)
    events = every_page(recall, "memory_timeline", "events")
    assert len(events) >= 20
    sessions = {m.id for m in distilled.sessions.list_sessions().sessions}
    assert {e["source"].removeprefix("session:") for e in events} <= sessions
    for source, turn in sorted({(e["source"], e.get("turn")) for e in events}, key=str)[:150]:
        opens(recall, source, turn)
    decisions = ask(recall, "memory_timeline", kinds=["decision", "learning"])
    assert all(e["kind"] in ("decision", "learning") for e in decisions["events"])
    assert snapshot(distilled.path) == before


def test_neighbourhoods_of_the_entities_events_mention(recall: Recall, distilled: Home) -> None:
    before = snapshot(distilled.path)
    events = every_page(recall, "memory_timeline", "events")
    mentioned = list(dict.fromkeys(e for event in events for e in event.get("entities", ())))
    assert mentioned
    facts = same = 0
    for entity in mentioned[:40]:
        reply = ask(recall, "memory_graph_neighbors", entity=entity, hops=2)
        assert "error" not in reply, reply
        same += reply["entity"]["id"] == entity  # else merged into the canonical entity it names
        for edge in reply["edges"]:
            assert edge["source"].startswith("session:") and 1 <= edge["hop"] <= 2
        facts += len(reply["edges"])
    assert facts > 0 and same >= len(mentioned[:40]) * 0.8
    assert snapshot(distilled.path) == before


def test_search_finds_what_the_timeline_says_and_hits_open(recall: Recall, distilled: Home) -> None:
    before = snapshot(distilled.path)
    events = every_page(recall, "memory_timeline", "events")
    found = 0
    sample = events[:: max(1, len(events) // 15)][:15]
    for event in sample:  # an event's own words find the turn it came from
        reply = ask(recall, "memory_search", query=event["summary"], k=10)
        assert "error" not in reply, reply
        for hit in reply["hits"][:3]:
            if hit.get("source"):
                opens(recall, hit["source"], hit.get("turn"))
        found += any(h.get("source") == event["source"] and h.get("turn") == event.get("turn") for h in reply["hits"])
    assert found >= len(sample) * 0.8, (found, len(sample))
    assert snapshot(distilled.path) == before


def test_core_blocks_are_bounded_and_point_at_sessions(recall: Recall, distilled: Home) -> None:
    sessions = {m.id for m in distilled.sessions.list_sessions().sessions}
    block = core_block(recall)
    assert len(block.encode("utf-8")) <= CORE_BUDGET
    lines = [line for line in block.splitlines() if line.startswith("· ")]
    assert lines
    for line in lines:
        match = POINTER.search(line)
        assert match and match.group(1) in sessions, line
    assert Path(distilled.memory_dir / "core.md").read_text(encoding="utf-8") == block
