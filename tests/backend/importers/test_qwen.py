"""Qwen Code chats: every fixture (hook context, tool results, a rewind branch, updated replies,
glued records, a foreign session id, a compact id, telemetry-only system records)."""

from __future__ import annotations

import shutil
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, agent_fixture, imported, stored
from .dag_helpers import assert_well_formed, branch, leaves

qwen = SOURCES["qwen"]
STAGE0 = "qwen-code/jazzyalex+agent-sessions/stage0"
P = "019f0000-0000-7000-8000-0000000000"


def parse(name: str, final: bool = True):
    report = ImportReport()
    [s] = qwen.parse_file(agent_fixture(f"{STAGE0}/{name}"), report, final=final)
    return s, report


def test_prompt_hook_context_tool_result_and_notification() -> None:
    s, report = parse(f"{P}01.jsonl")
    assert report.warnings == []
    assert (s.cwd, s.git_branch, s.model) == ("/tmp/as-qwen-fixture/project", "fixture-branch", "synthetic-model")
    assert [(n.role, n.content) for n in s.nodes] == [
        ("user", "Inspect the synthetic fixture."),
        (
            "system",
            "<qwen:user-prompt-submit-context>\nSynthetic hook context that is not the user's prompt.\n"
            "</qwen:user-prompt-submit-context>",
        ),
        ("assistant", ""),
        ("tool", "Synthetic file contents."),
        ("assistant", "The synthetic fixture is valid."),
        ("system", "Synthetic background notification."),
    ]
    assert dict(s.nodes[2].metadata)["thinking"] == "I should read the synthetic file."
    assert (s.nodes[3].name, s.nodes[3].input) == ("read_file", {"path": "/tmp/as-qwen-fixture/project/README.md"})
    assert s.nodes[0].created_at == 1786968000.0
    assert_well_formed(s)


def test_rewind_makes_a_branch_and_the_reply_is_updated_in_place() -> None:
    s, report = parse(f"{P}04.jsonl")
    assert report.warnings == []
    assert len(leaves(s)) == 2  # the discarded answer and the active line
    assert [n.content for n in branch(s)] == [
        "Begin the active-chain fixture.",
        "Continue from the rewound branch.",
        "Active branch answer.",
    ]
    reply = branch(s)[-1]
    assert (reply.name, dict(reply.metadata)["thinking"]) == (
        "synthetic-active-model",
        "Reason over the active branch.",
    )
    assert dict(reply.metadata)["tokens"] == {"promptTokenCount": 12, "candidatesTokenCount": 4}
    assert [n.name for n in s.nodes if n.role == "tool"] == ["read_file"]
    assert (s.title, dict(s.extra)["title_source"], s.cwd) == (
        "Active branch title",
        "llm",
        "/tmp/as-qwen-fixture/new-project",
    )
    assert_well_formed(s)


def test_glued_records_compact_id_and_foreign_session() -> None:
    glued, report = parse(f"{P}05.jsonl")
    assert report.warnings == [] and [n.content for n in glued.nodes] == [
        'Inspect {"glued": "objects"} safely.',
        "Recovered both synthetic objects.",
    ]
    compact, _ = parse("019f0000000070008000000000000003.jsonl")
    assert [n.content for n in compact.nodes] == ["Inspect a compact-ID synthetic fixture."]
    foreign, report = parse(f"{P}02.jsonl")
    assert foreign.nodes == ()
    assert report.warnings == [
        f"{agent_fixture(f'{STAGE0}/{P}02.jsonl')}: 1 record(s) name another session than the file's; left out"
    ]
    telemetry, report = parse("system_telemetry.jsonl")
    assert [n.role for n in telemetry.nodes] == ["assistant", "tool"] and telemetry.model == "coder-model"


def test_import_twice_growth_and_a_cut_line(tmp_path: Path, home) -> None:
    chats = tmp_path / "projects" / "-tmp-project" / "chats"
    chats.mkdir(parents=True)
    path = chats / f"{P}01.jsonl"
    lines = agent_fixture(f"{STAGE0}/{P}01.jsonl").read_text().splitlines(True)
    path.write_text("".join(lines[:4]))
    age(tmp_path)
    assert qwen.discover([tmp_path / "projects"]) == [path]
    first = imported(home, "qwen", tmp_path / "projects")
    assert (first.new_sessions, first.turns, first.nodes) == (1, 1, 5)
    assert imported(home, "qwen", path).nodes == 0
    path.write_text("".join(lines) + '{"uuid": "x", "type": "user", "mess\n')
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "qwen", path)
    assert grown.nodes == 1 and grown.warnings == [f"{path}:7: not valid JSON; the rest of the line skipped"]
    assert [n.role for n in stored(home)[f"{P}01"]][-1] == "system"
    shutil.rmtree(chats)


def test_a_claude_code_transcript_is_not_read_as_a_qwen_chat(tmp_path: Path) -> None:
    # Same record family (uuid, parentUuid, type user|assistant), Claude's message shape: read as
    # Qwen, every tool result became a prompt (346 of them in a real 3 MB transcript).
    path = tmp_path / "8f0e2c1a-1111-2222-3333-444455556666.jsonl"
    common = '"sessionId":"8f0e2c1a-1111-2222-3333-444455556666","cwd":"/w/app","timestamp":"2026-02-12T16:02:25Z"'
    path.write_text(
        f'{{"uuid":"u1","parentUuid":null,"type":"user",{common},"message":{{"role":"user","content":"Run the tests"}}}}\n'
        f'{{"uuid":"a1","parentUuid":"u1","type":"assistant",{common},"message":{{"role":"assistant","content":'
        '[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"mix test"}}]}}\n'
        f'{{"uuid":"u2","parentUuid":"a1","type":"user",{common},"message":{{"role":"user","content":'
        '[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}\n',
        encoding="utf-8",
    )
    report = ImportReport()
    assert qwen.parse_file(path, report, final=True) == []
    assert len(report.warnings) == 1
    assert path.name in report.warnings[0] and "not a Qwen Code chat" in report.warnings[0]
