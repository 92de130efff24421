"""core.md's short session pointers (backend/session_pointers): the shortest prefix unique among
every session the store holds, lengthened when a later session shares it, and resolved back by
everything that takes a session id (backend/naming, memory_open_session, the CLI)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend import naming
from opmem_tui.backend.memory.core import CORE_BUDGET, CoreLine, compose_core
from opmem_tui.backend.recall.context import Recall, recall_for
from opmem_tui.backend.recall.core_block import core_block
from opmem_tui.backend.recall.registry import call
from opmem_tui.backend.session_pointers import short_session_ids
from opmem_tui.cli import main
from tests.backend.recall.stores import T0, Built, add_memory, build_store

UUID = "specstory-b7eb0f5d-7937-456d-9eb9-7f2c3bd9c6df"


@pytest.fixture
def built(tmp_path: Path) -> Built:
    built = build_store(tmp_path)
    add_memory(built)
    return built


def recall_of(built: Built) -> Recall:
    return recall_for(built.home, cwd=built.workdir, now=T0 + 400)


def add_session(built: Built, sid: str) -> None:
    built.home.sessions.append_message(sid, "user", "Another question", created_at=T0 + 2000, node_id="x1")
    built.home.sessions.commit_turn(sid)


def test_eight_characters_past_the_source_then_as_long_as_uniqueness_needs() -> None:
    bare = "b7eb0f5d-7937-456d-9eb9-7f2c3bd9c6df"
    short = short_session_ids([UUID, bare, "cc-5f1c2a9e-aa", "docs"], [])
    assert short == {UUID: "specstory-b7eb0f5d", bare: "b7eb0f5d", "cc-5f1c2a9e-aa": "cc-5f1c2a9e", "docs": "docs"}
    # another session sharing the prefix lengthens it, past a separator too
    twin = "specstory-b7eb0f5d-7937-4000-8000-000000000000"
    assert short_session_ids([UUID], [UUID, twin])[UUID] == "specstory-b7eb0f5d-7937-45"
    assert short_session_ids([UUID], [twin])[UUID] == "specstory-b7eb0f5d-7937-45"
    # an id another starts with keeps its whole self (an exact id always wins)
    assert short_session_ids(["cc-shop-session"], ["cc-shop-session2"])["cc-shop-session"] == "cc-shop-session"


def test_the_block_spends_its_bytes_on_facts_and_stays_in_budget() -> None:
    ids = [f"specstory-{i:08x}-7937-456d-9eb9-7f2c3bd9c6df" for i in range(40)]
    events = [CoreLine(f"· 2026-01-{1 + i % 28:02d} Event number {i} " + "x" * 40, sid, i) for i, sid in enumerate(ids)]
    long = compose_core("p", date(2026, 2, 1), events, [])
    short = compose_core("p", date(2026, 2, 1), events, [], sessions=ids)
    for block in (long, short):
        assert len(block.encode("utf-8")) <= CORE_BUDGET
    pointers = [line.rpartition("↪ session:")[2] for line in short.splitlines() if "↪ session:" in line]
    assert pointers and all(len(p) == len("specstory-00000000") for p in pointers)
    assert short.count("↪ session:") > long.count("↪ session:")  # the bytes freed hold more lines


def test_a_later_session_sharing_the_prefix_lengthens_the_pointer(built: Built) -> None:
    assert "↪ session:cc-shop-ses\n" in core_block(recall_of(built))
    add_session(built, "cc-shop-sesame")
    block = core_block(recall_of(built))
    assert "↪ session:cc-shop-sess\n" in block and "↪ session:cc-shop-ses\n" not in block
    assert naming.session_id(built.home, "session:cc-shop-sess") == built.session_id


def test_memory_open_session_takes_a_unique_prefix_and_names_both_of_an_ambiguous_one(built: Built) -> None:
    opened = call(recall_of(built), "memory_open_session", {"session_id": "session:cc-shop-ses"})
    assert opened["session"]["id"] == built.session_id
    add_session(built, "cc-shop-sesame")
    shared = call(recall_of(built), "memory_open_session", {"session_id": "session:cc-shop-ses"})
    assert shared["error"]["code"] == "unknown_session"
    assert "start of 2 session ids" in shared["error"]["message"]
    assert set(shared["error"]["did_you_mean"]) == {built.session_id, "cc-shop-sesame"}
    unknown = call(recall_of(built), "memory_open_session", {"session_id": "session:zz-nothing1"})
    assert unknown["error"]["code"] == "unknown_session"


def test_cli_commands_open_a_session_by_its_pointer(built: Built) -> None:
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "120"})
    for args in (["show", "session:cc-shop-ses"], ["sessions", "show", "cc-shop-ses"]):
        shown = runner.invoke(main, args, catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        assert "Add a greeting to the shop" in shown.output
    add_session(built, "cc-shop-sesame")
    for args in (["show", "session:cc-shop-ses"], ["sessions", "show", "cc-shop-ses"]):
        shared = runner.invoke(main, args, catch_exceptions=False)
        assert shared.exit_code != 0
        assert built.session_id in shared.output and "cc-shop-sesame" in shared.output
