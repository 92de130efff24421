"""Kimi: the fixtures' Kimi Code wire files (flat and in a session folder with state.json and a
subagent), and the older Kimi CLI wire messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, stored
from .dag_helpers import assert_well_formed

kimi = SOURCES["kimi"]
STAGE0 = "kimi-cli/jazzyalex+agent-sessions/stage0"


def parse(path: Path, final: bool = True):
    report = ImportReport()
    [s] = kimi.parse_file(path, report, final=final)
    return s, report


def test_sample_wire_steps_and_tools() -> None:
    s, report = parse(agent_fixture("kimi-cli/codemie-ai+codemie-code/sample-wire.jsonl"))
    assert report.warnings == [] and report.unknown_records == {}
    model = "kimi-code/kimi-for-coding"
    assert [(n.role, n.name) for n in s.nodes] == [
        ("user", None),
        ("assistant", model),
        ("tool", "Read"),
        ("assistant", model),
        ("tool", "Write"),
        ("assistant", model),
        ("tool", "Skill"),
    ]
    assert s.nodes[0].content == "Please read src/index.ts and then update it."
    assert s.nodes[2].content == "export const version = '1.0.0';\n"
    assert s.nodes[2].input == {"path": "/Users/alice/project/src/index.ts"}
    assert s.nodes[0].created_at == 1781368649.424
    usage, _ = parse(agent_fixture("kimi-cli/codemie-ai+codemie-code/usage-only-model.jsonl"))
    assert ([n.content for n in usage.nodes], usage.model) == (["Hello"], "kimi-code/fallback-model")
    cwd, _ = parse(agent_fixture("kimi-cli/kenn-io+agentsview/kimi-config-update-cwd.jsonl"))
    assert (cwd.cwd, cwd.nodes) == ("/Users/helix/Code/mcp-hub", ())


def test_stage0_assistant_tools_with_its_state_and_the_cancelled_turns() -> None:
    s, report = parse(agent_fixture(f"{STAGE0}/assistant_tools.jsonl"))
    assert report.warnings == [] and report.unknown_records == {}
    assert (s.title, s.cwd, s.model) == ("hi", "/private/tmp/as-agent-lab/kimi/project", "moonshot-ai/kimi-k2.7-code")
    users = [n.content for n in s.nodes if n.role == "user"]
    assert users[:5] == ["hi", "hi", "hi", "run ls command", "cat /nonexistent-file-xyz"]
    tools = [n for n in s.nodes if n.role == "tool"]
    assert tools[0].name == "Bash" and tools[0].content.startswith("agents.md\nAgentSessions\n")
    assert any(n.role == "system" and n.content == "[compaction]" for n in s.nodes)
    assert_well_formed(s)
    small, report = parse(agent_fixture(f"{STAGE0}/small.jsonl"))
    assert report.unknown_records == {}
    assert [(n.role, n.content) for n in small.nodes] == [
        ("user", "hi"),
        ("user", "stop"),
        ("system", "[turn cancelled]"),
        ("user", "hi"),
        ("system", "[turn cancelled]"),
    ]


def test_kimi_code_session_folder_with_a_subagent(tmp_path: Path, home) -> None:
    session = tmp_path / "sessions" / "wd_project_ac3bb318f98e" / "session_1bcbe023"
    for agent, name in (("main", "assistant_tools.jsonl"), ("agent-0", "subagent_agent-0.jsonl")):
        (session / "agents" / agent).mkdir(parents=True)
        shutil.copy(agent_fixture(f"{STAGE0}/{name}"), session / "agents" / agent / "wire.jsonl")
    shutil.copy(agent_fixture(f"{STAGE0}/state.json"), session / "state.json")
    age(tmp_path)
    found = kimi.discover([tmp_path / "sessions"])
    assert [p.parent.name for p in found] == ["main", "agent-0"]  # the parent first
    report = imported(home, "kimi", tmp_path / "sessions")
    assert report.warnings == [] and report.new_sessions == 2
    metas = {m.source_ref["native_id"]: m for m in home.sessions.list_sessions().sessions}
    main, child = metas["session_1bcbe023"], metas["session_1bcbe023.agent-0"]
    assert (main.title, main.extra["cwd"]) == ("hi", "/private/tmp/as-agent-lab/kimi/project")
    assert (child.extra["kind"], child.extra["parent_session"]) == ("subagent", main.id)
    assert [n.name for n in stored(home)["session_1bcbe023.agent-0"] if n.role == "tool"] == ["Glob", "Bash"]


def test_old_kimi_cli_wire_twice_and_growth(tmp_path: Path, home) -> None:
    path = tmp_path / "sessions" / "0123abcd" / "sess-1" / "wire.jsonl"
    path.parent.mkdir(parents=True)

    def msg(t: int, kind: str, payload) -> str:
        return json.dumps({"timestamp": 1760000000 + t, "message": {"type": kind, "payload": payload}}) + "\n"

    turn1 = [
        json.dumps({"type": "metadata", "protocol_version": "1.0"}) + "\n",
        msg(1, "TurnBegin", {"user_input": "list files"}),
        msg(2, "StepBegin", {"n": 1}),
        msg(3, "ContentPart", {"type": "text", "text": "Listing."}),
        msg(
            4,
            "ToolCall",
            {"type": "function", "id": "tc1", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}},
        ),
        msg(5, "ToolResult", {"tool_call_id": "tc1", "return_value": {"is_error": False, "output": "a.txt"}}),
        msg(6, "TurnEnd", {}),
    ]
    path.write_text("".join(turn1))
    (path.parent / "state.json").write_text(json.dumps({"title": "Files"}))
    age(tmp_path)
    first = imported(home, "kimi", tmp_path / "sessions")
    assert (first.new_sessions, first.turns, first.nodes, first.warnings) == (1, 1, 3, [])
    nodes = stored(home)["sess-1"]
    assert [(n.role, n.content) for n in nodes] == [
        ("user", "list files"),
        ("assistant", "Listing."),
        ("tool", "a.txt"),
    ]
    assert nodes[2].input == {"command": "ls"}
    assert imported(home, "kimi", path).nodes == 0
    path.write_text("".join(turn1) + msg(7, "TurnBegin", {"user_input": "thanks"}))
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "kimi", path)
    assert (grown.nodes, grown.turns) == (1, 1)


def test_a_step_under_way_is_held_back(tmp_path: Path) -> None:
    lines = agent_fixture("kimi-cli/codemie-ai+codemie-code/sample-wire.jsonl").read_text().splitlines(True)
    path = tmp_path / "live.jsonl"
    path.write_text("".join(lines[:6]))  # a call made, its result not yet written
    s, _ = parse(path, final=False)
    assert [n.role for n in s.nodes] == ["user"]
