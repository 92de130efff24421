"""GitHub Copilot CLI: the fixtures' flat session-state/<id>.jsonl and <id>/events.jsonl layouts."""

from __future__ import annotations

import shutil
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, stored
from .dag_helpers import assert_well_formed

copilot = SOURCES["copilot"]
STAGE0 = "copilot-cli/jazzyalex+agent-sessions/stage0"


def parse(path: Path, final: bool = True):
    report = ImportReport()
    return copilot.parse_file(path, report, final=final), report


def test_events_jsonl_folder_layout() -> None:
    folder = agent_fixture(f"{STAGE0}/subdir_v1")
    [path] = copilot.discover([folder])
    assert path.name == "events.jsonl"
    [s], report = parse(path)
    assert report.warnings == []
    assert (s.native_id, s.cwd, s.git_branch) == ("aaaabbbb-1111-2222-3333-ccccddddeeee", "/tmp/project", "main")
    assert [(n.role, n.name, n.content) for n in s.nodes] == [
        ("user", None, "List the files"),
        ("assistant", None, ""),
        ("tool", "bash", "file1\nfile2\n"),
        ("assistant", None, "The directory contains file1 and file2."),
    ]
    assert s.nodes[0].created_at == 1774547435.0 and s.nodes[2].input == {"command": "ls", "description": "List files"}
    assert_well_formed(s)


def test_small_flat_session_with_system_error_and_model() -> None:
    [s], report = parse(agent_fixture(f"{STAGE0}/small.jsonl"))
    assert report.warnings == []
    assert (s.native_id, s.cwd, s.git_branch, s.model) == ("copilot_stage0_small", "/tmp/repo", "main", "gpt-5-mini")
    head = [(n.id, n.role, n.content) for n in s.nodes[:6]]
    assert head == [
        ("e4", "system", "Example model error"),
        ("e6", "system", "[trimmed for fixture]"),
        ("e7", "user", "List the files"),
        ("e9", "assistant", "Listing the files."),
        ("call-1", "tool", "a.txt\nb.txt\n"),
        ("e12", "assistant", "Done"),
    ]
    assert s.nodes[4].input == {"command": "ls"}  # arguments given as JSON text
    assert sum(1 for n in s.nodes if n.role == "user") == 2
    assert_well_formed(s)


def test_large_and_schema_drift() -> None:
    [large], _ = parse(agent_fixture(f"{STAGE0}/large.jsonl"))
    assert [n.content for n in large.nodes if n.role == "user"] == ["Step 1", "Step 2", "Step 3"]
    assert [n.name for n in large.nodes if n.role == "tool"] == ["bash"]
    assert large.model == "gpt-5"
    [drift], report = parse(agent_fixture(f"{STAGE0}/schema_drift.jsonl"))
    assert report.warnings == []
    tools = [n for n in drift.nodes if n.role == "tool"]
    assert [(t.id, t.content, dict(t.metadata).get("is_error")) for t in tools] == [
        ("call_1", "hi\n", None),
        ("call_2", "exit code: 1\n", True),  # a result whose request was never logged
    ]
    assert drift.nodes[-1].content == "Finished."


def test_sidecar_files_malformed_lines_warn_and_the_rest_is_read() -> None:
    base = "copilot-cli/marcus+sidecar"
    [s], report = parse(agent_fixture(f"{base}/malformed.jsonl"))
    path = agent_fixture(f"{base}/malformed.jsonl")
    assert report.warnings == [f"{path}:1: not valid JSON; line skipped", f"{path}:3: not valid JSON; line skipped"]
    assert [n.content for n in s.nodes] == ["Valid message after malformed line", "Response to valid message"]
    [linked], _ = parse(agent_fixture(f"{base}/tool_linking.jsonl"))
    assert [(n.id, n.called_by) for n in linked.nodes if n.role == "tool"] == [
        ("toolu_read_1", "msg-002"),
        ("toolu_read_2", "msg-002"),
    ]
    assert [n.content for n in linked.nodes if n.role == "tool"][1] == "package main\n\nfunc main() {}"
    [empty], _ = parse(agent_fixture(f"{base}/empty.jsonl"))
    assert empty.nodes == ()


def test_workspace_yaml_gives_title_and_cwd(tmp_path: Path, home) -> None:
    folder = tmp_path / "session-state" / "test-session-001"
    folder.mkdir(parents=True)
    shutil.copy(agent_fixture("copilot-cli/marcus+sidecar/valid_events.jsonl"), folder / "events.jsonl")
    shutil.copy(agent_fixture("copilot-cli/marcus+sidecar/workspace.yaml"), folder / "workspace.yaml")
    age(tmp_path)
    report = imported(home, "copilot", tmp_path / "session-state")
    assert (report.new_sessions, report.turns, report.warnings) == (1, 2, [])
    [meta] = home.sessions.list_sessions().sessions
    assert (meta.title, meta.extra["cwd"], meta.source_ref["native_id"]) == (
        "Test session for fixture",
        "/home/user/project",
        "test-session-001",
    )


def test_a_live_turn_is_held_back_until_its_tool_ends(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    events = agent_fixture(f"{STAGE0}/subdir_v1/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl")
    lines = events.read_text().splitlines(True)
    path.write_text("".join(lines[:5]))  # the tool still running, the turn open
    [s], _ = parse(path, final=False)
    assert [n.role for n in s.nodes] == ["user"]
    path.write_text("".join(lines[:7]))  # its result and the turn's end
    [s], _ = parse(path, final=False)
    assert [(n.role, n.content) for n in s.nodes][1:] == [("assistant", ""), ("tool", "file1\nfile2\n")]


def test_twice_adds_nothing_and_growth_adds_only_the_new_turn(tmp_path: Path, home) -> None:
    path = tmp_path / "s.jsonl"
    lines = agent_fixture("copilot-cli/marcus+sidecar/valid_events.jsonl").read_text().splitlines(True)
    path.write_text("".join(lines[:2]))
    age(path)
    first = imported(home, "copilot", path)
    assert (first.nodes, first.turns) == (2, 1)
    assert imported(home, "copilot", path).nodes == 0
    path.write_text("".join(lines))
    age(path, when=OLD + 60)
    grown = imported(home, "copilot", path)
    assert (grown.nodes, grown.turns, grown.new_sessions) == (3, 1, 0)
    assert [n.role for n in stored(home)["s"]] == ["user", "assistant", "user", "assistant", "tool"]
