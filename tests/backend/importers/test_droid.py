"""Factory droid: the fixtures' session store files and stream-json outputs, and a settings file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, stored
from .dag_helpers import assert_well_formed

droid = SOURCES["droid"]
STAGE0 = "factory-droid/jazzyalex+agent-sessions/stage0"


def parse(name: str, final: bool = True):
    report = ImportReport()
    [s] = droid.parse_file(agent_fixture(f"{STAGE0}/{name}"), report, final=final)
    return s, report


def shape(s) -> list[tuple]:
    return [(n.role, n.name, n.content) for n in s.nodes]


def test_session_store_small_large_and_drift() -> None:
    small, report = parse("session_store_small.jsonl")
    assert report.warnings == [] and (small.native_id, small.title, small.cwd) == (
        "droid_s1",
        "Stage0 Droid Small",
        "/tmp",
    )
    assert shape(small) == [
        ("user", None, "Run a command"),
        ("assistant", None, ""),
        ("tool", "Execute", "Error: Command failed (exit code: 1)\nls: /nope: No such file or directory"),
    ]
    assert small.nodes[0].created_at == 1766793000.0 and small.nodes[2].input == {"command": "ls /nope"}
    large, _ = parse("session_store_large.jsonl")
    assert [n.content for n in large.nodes if n.role == "user"] == ["Step 1", "Step 2"]
    assert (len(large.nodes), large.cwd) == (7, "/tmp/large")
    drift, _ = parse("session_store_schema_drift.jsonl")
    assert shape(drift) == [
        ("user", None, "Do the thing"),
        ("system", None, "<system-reminder>\nBe concise.\n</system-reminder>"),
        ("assistant", None, "Ok"),
    ]
    for s in (small, large, drift):
        assert_well_formed(s)


def test_stream_json_outputs() -> None:
    small, report = parse("stream_json_small.jsonl")
    assert report.warnings == [] and small.native_id == "sid_stage0_small"
    assert shape(small) == [
        ("user", None, "Do thing"),
        ("assistant", None, ""),
        ("tool", "Shell", "hi\n"),
        ("assistant", None, "Done"),
    ]
    assert dict(small.nodes[2].metadata)["exit"] == 0
    large, _ = parse("stream_json_large.jsonl")
    assert (large.cwd, large.model, [n.content for n in large.nodes if n.role == "assistant"]) == (
        "/tmp/large",
        "droid-model",
        ["Ok", "Captured multiline output."],
    )
    drift, report = parse("stream_json_schema_drift.jsonl")
    assert report.unknown_records == {}
    assert [(n.role, n.content) for n in drift.nodes] == [
        ("user", "List files"),
        ("system", "<system-reminder>\nBe safe.\n</system-reminder>"),
        ("assistant", ""),
        ("tool", "ls: /non-existent-directory: No such file or directory"),
        ("assistant", "Done"),
        ("system", "Authentication failed. Set FACTORY_API_KEY."),
    ]
    assert dict(drift.nodes[3].metadata)["is_error"] is True and drift.model == "droid-model"


def test_settings_model_twice_and_growth(tmp_path: Path, home) -> None:
    folder = tmp_path / "sessions" / "-tmp-large"
    folder.mkdir(parents=True)
    path = folder / "0f0e0d0c-aaaa-bbbb-cccc-000000000001.jsonl"
    lines = agent_fixture(f"{STAGE0}/session_store_large.jsonl").read_text().splitlines(True)
    path.write_text("".join(lines[:6]))
    path.with_name(f"{path.stem}.settings.json").write_text(
        json.dumps({"model": "claude-opus-4-1", "tokenUsage": {"inputTokens": 9}})
    )
    age(tmp_path)
    assert droid.discover([tmp_path / "sessions"]) == [path]
    first = imported(home, "droid", tmp_path / "sessions")
    assert (first.new_sessions, first.turns, first.nodes, first.warnings) == (1, 1, 5, [])
    [meta] = home.sessions.list_sessions().sessions
    assert (meta.extra["model"], meta.title) == ("claude-opus-4-1", "Stage0 Droid Large")
    assert imported(home, "droid", path).nodes == 0
    path.write_text("".join(lines) + '{"type": "message", "id": "m8", "mess')
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "droid", path)
    assert (grown.nodes, grown.turns, grown.warnings) == (2, 1, [])
    assert [n.content for n in stored(home)["droid_large"]][-2:] == ["Step 2", "Ok"]
    shutil.rmtree(folder)
