"""Codex, Gemini, aider and OpenProgram sessions written into a real store through ingest.

Checks the turns and branches the store ends up with, that importing again writes nothing,
and that lines appended to a file import only the new turn.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.session_ids import session_id_for

from .dag_helpers import fixture
from .test_aider import CHAT, INPUTS
from .test_codex import Rollout
from .test_gemini import HEADER, call, reply, user
from .test_openprogram import Folder

OLD = 1_600_000_000  # an mtime long past: the file is finished, nothing is held back


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "opmem-home")


def finished(path: Path) -> Path:
    os.utime(path, (OLD, OLD))
    return path


def run(home: Home, source: str, path: Path, **kwargs) -> ImportReport:
    report = run_import(home, source, [path], **kwargs)
    assert not [w for w in report.warnings if "internal error" in w], report.warnings
    return report


def turns_on_head(home: Home, sid: str) -> list[str]:
    """The user text of each turn on the current branch."""
    return [turn.user.content if turn.user else "" for turn in home.sessions.get_turns(sid)]


def test_real_codex_rollout_into_the_store(home: Home):
    report = run(
        home,
        "codex",
        fixture("transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"),
    )
    sid = session_id_for("codex", "019a93b9-f380-7600-98ff-940e6b99603c")
    store = home.sessions
    assert report.new_sessions == 1 and report.nodes == 80
    assert len(store.get_nodes(sid)) == 80
    (turn,) = store.get_turns(sid)
    assert turn.user.content.startswith("finish up the users work")
    assert len(turn.tool_nodes) == 39
    assert len(store.branches(sid)) == 1
    meta = store.get_meta(sid)
    assert meta.source == "codex" and meta.extra["model"] == "gpt-5.1-codex"


def test_codex_rollback_growth_and_reimport(home: Home, tmp_path: Path):
    r = Rollout().meta().turn("first", "1").turn("second", "2", calls=1).turn("third", "3")
    r.event(type="thread_rolled_back", num_turns=2)
    r.turn("second, edited", "2b")
    path = finished(r.write(tmp_path / "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"))
    first = run(home, "codex", path)
    sid = session_id_for("codex", "0199aaaa-0000-7000-8000-000000000001")
    store = home.sessions
    assert turns_on_head(home, sid) == ["first", "second, edited"]
    assert len(store.branches(sid)) == 2  # the rolled-back turns stay as their own branch
    assert store.get_node(sid, store.head(sid)).content == "2b"
    commits = len(store.session_commits(sid))

    again = run(home, "codex", path, force=True)
    assert again.nodes == 0 and len(store.session_commits(sid)) == commits

    r.turn("fourth", "4")
    finished(r.write(path))
    grown = run(home, "codex", path)
    assert grown.nodes == 2  # the new prompt and its reply, nothing else
    assert turns_on_head(home, sid) == ["first", "second, edited", "fourth"]
    assert len(store.get_nodes(sid)) == first.nodes + 2


def test_codex_subagent_links_to_the_spawning_call(home: Home, tmp_path: Path):
    parent = Rollout().meta("0199cccc-0000-7000-8000-00000000000a").prompt("split the work")
    parent.item(type="function_call", name="spawn_agent", arguments="{}", call_id="spawn-1")
    parent.item(type="function_call_output", call_id="spawn-1", output="spawned")
    parent.event(type="collab_agent_spawn_end", call_id="spawn-1", new_thread_id="0199dddd-0000-7000-8000-00000000000b")
    child = (
        Rollout()
        .meta(
            "0199dddd-0000-7000-8000-00000000000b",
            source={"subagent": {"thread_spawn": {"parent_thread_id": "0199cccc-0000-7000-8000-00000000000a"}}},
        )
        .turn("write the tests", "written")
    )
    folder = tmp_path / "sessions"
    folder.mkdir()
    finished(child.write(folder / "rollout-2026-01-01T00-00-01-0199dddd-0000-7000-8000-00000000000b.jsonl"))
    finished(parent.write(folder / "rollout-2026-01-01T00-00-00-0199cccc-0000-7000-8000-00000000000a.jsonl"))
    run(home, "codex", folder)
    child_meta = home.sessions.get_meta(session_id_for("codex", "0199dddd-0000-7000-8000-00000000000b"))
    assert child_meta.extra["parent_session"] == session_id_for("codex", "0199cccc-0000-7000-8000-00000000000a")
    assert child_meta.extra["kind"] == "subagent" and child_meta.extra["parent_node"] == "spawn-1"


def test_gemini_rewind_growth_and_reimport(home: Home, tmp_path: Path):
    records = [
        HEADER,
        user("u1", "first"),
        reply("g1", "", calls=[call("c1", "a.txt")]),
        reply("g1b", "1"),
        user("u2", "second", 1),
        reply("g2", "2", 1),
        {"$rewindTo": "u2"},
        user("u3", "second, edited", 2),
        reply("g3", "2b", 2),
    ]
    path = tmp_path / "chats" / "session-2026-04-29T21-39-5f0c2a1e.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run(home, "gemini", finished(path))
    sid = session_id_for("gemini", HEADER["sessionId"])
    store = home.sessions
    assert turns_on_head(home, sid) == ["first", "second, edited"]
    assert len(store.branches(sid)) == 2
    assert run(home, "gemini", path, force=True).nodes == 0
    with path.open("a") as handle:
        for record in (user("u4", "third", 3), reply("g4", "3", 3)):
            handle.write(json.dumps(record) + "\n")
    assert run(home, "gemini", finished(path)).nodes == 2
    assert turns_on_head(home, sid) == ["first", "second, edited", "third"]


def test_aider_runs_growth_and_reimport(home: Home, tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    path = repo / ".aider.chat.history.md"
    path.write_text(CHAT)
    (repo / ".aider.input.history").write_text(INPUTS)
    report = run(home, "aider", finished(path))
    assert report.new_sessions == 2
    listing = home.sessions.list_sessions()
    second = next(m for m in listing.sessions if m.id.endswith("20250505T090000"))
    assert turns_on_head(home, second.id) == ["second day"]
    assert run(home, "aider", path, force=True).nodes == 0
    with path.open("a") as handle:
        handle.write("\n#### and tomorrow?  \n\nTomorrow too.\n")
    grown = run(home, "aider", finished(path))
    assert grown.nodes == 2 and grown.new_sessions == 0
    assert turns_on_head(home, second.id) == ["second day", "and tomorrow?"]


def test_openprogram_branches_growth_and_reimport(home: Home, tmp_path: Path):
    f = Folder(tmp_path / "state" / "sessions")
    f.root()
    r1 = f.turn("u1", "first", "1", pred="ROOT", tools=1)
    f.node("user", "u2", "second", caller="ROOT", pred=r1, metadata={"rewound": True})
    f.node("llm", "u2_reply", "2", pred="u2", metadata={"rewound": True})
    r3 = f.turn("u3", "second, edited", "2b", pred=r1)
    f.meta(head_id=r3)
    for file in [f.path / "history", *(f.path / "history").iterdir()]:
        finished(file)
    run(home, "openprogram", f.path)
    sid = session_id_for("openprogram", f.path.name)
    store = home.sessions
    assert turns_on_head(home, sid) == ["first", "second, edited"]
    assert len(store.branches(sid)) == 2
    assert store.get_meta(sid).title == "Fix the build"
    assert run(home, "openprogram", f.path, force=True).nodes == 0
    f.turn("u4", "third", "3", pred=r3)
    f.meta(head_id="u4_reply")
    for file in [f.path / "history", *(f.path / "history").iterdir()]:
        finished(file)
    assert run(home, "openprogram", f.path, force=True).nodes == 2
    assert turns_on_head(home, sid) == ["first", "second, edited", "third"]
