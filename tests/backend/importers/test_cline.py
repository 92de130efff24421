"""Cline and Roo Code task folders (synthetic, written from the extensions' storage shapes)."""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

from .agent_helpers import OLD, age, imported, stored
from .dag_helpers import assert_well_formed

cline, roo = SOURCES["cline"], SOURCES["roo"]
TASK = "1767200000000"


def write(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def history(turns: int = 1, *, v35: bool = False) -> list[dict]:
    out: list[dict] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nfix the failing test\n</task>"},
                {
                    "type": "text",
                    "text": "<environment_details>\n# Current Working Directory (/work/app)\n</environment_details>",
                },
            ],
        }
    ]
    for n in range(turns):
        if n:
            out.append({"role": "user", "content": [{"type": "text", "text": f"<feedback>\nnext {n}\n</feedback>"}]})
        out.append(
            {
                "role": "assistant",
                "modelInfo": {"modelId": "claude-sonnet-4-5", "providerId": "anthropic"},
                "content": [
                    {"type": "text", "text": f"Reading {n}."},
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "read_file", "input": {"path": "a.py"}},
                ],
            }
        )
        result = (
            {"type": "text", "text": "[read_file for 'a.py'] Result:\nprint(1)"}
            if v35
            else {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": [{"type": "text", "text": "print(1)"}]}
        )
        out.append({"role": "user", "content": [result]})
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"Fixed {n}."}]})
    return out


def cline_task(base: Path, turns: int = 1, **kw) -> Path:
    ext = base / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
    folder = ext / "tasks" / TASK
    write(folder / "api_conversation_history.json", history(turns, **kw))
    write(
        folder / "ui_messages.json",
        [{"ts": 1767200000500, "type": "say", "say": "text", "text": "fix the failing test"}],
    )
    write(
        folder / "task_metadata.json",
        {"files_in_context": [], "model_usage": [{"model_id": "claude-sonnet-4-5", "mode": "act"}]},
    )
    write(
        ext / "state" / "taskHistory.json",
        [
            {
                "id": TASK,
                "ts": 1767200000000,
                "task": "fix the failing test",
                "cwdOnTaskInitialization": "/work/app",
                "modelId": "claude-sonnet-4-5",
            }
        ],
    )
    age(base)
    return folder


def test_cline_task_folder(tmp_path: Path) -> None:
    folder = cline_task(tmp_path)
    assert cline.discover([tmp_path / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"]) == [folder]
    report = ImportReport()
    [s] = cline.parse_file(folder, report, final=True)
    assert report.warnings == []
    assert (s.source, s.native_id, s.cwd, s.model) == ("cline", TASK, "/work/app", "claude-sonnet-4-5")
    assert [(n.role, n.name, n.content) for n in s.nodes] == [
        ("user", None, "fix the failing test"),
        ("system", None, "<environment_details>\n# Current Working Directory (/work/app)\n</environment_details>"),
        ("assistant", "claude-sonnet-4-5", "Reading 0."),
        ("tool", "read_file", "print(1)"),
        ("assistant", None, "Fixed 0."),
    ]
    assert s.nodes[0].created_at == 1767200000.5 and s.nodes[3].input == {"path": "a.py"}
    assert_well_formed(s)


def test_cline_35_text_results_pair_with_calls_in_order(tmp_path: Path) -> None:
    folder = cline_task(tmp_path, turns=2, v35=True)
    [s] = cline.parse_file(folder, ImportReport(), final=True)
    tools = [n for n in s.nodes if n.role == "tool"]
    assert [t.content for t in tools] == ["[read_file for 'a.py'] Result:\nprint(1)"] * 2
    assert [n.content for n in s.nodes if n.role == "user"] == ["fix the failing test", "next 1"]


def test_import_twice_and_growth(tmp_path: Path, home) -> None:
    folder = cline_task(tmp_path)
    first = imported(home, "cline", folder)
    assert (first.new_sessions, first.turns, first.nodes) == (1, 1, 5)
    assert imported(home, "cline", folder).nodes == 0
    write(folder / "api_conversation_history.json", history(2))
    age(tmp_path, when=OLD + 60)
    grown = imported(home, "cline", folder)
    assert (grown.nodes, grown.turns) == (4, 1)
    assert [n.content for n in stored(home)[TASK] if n.role == "user"] == ["fix the failing test", "next 1"]


def test_a_running_tool_is_held_back(tmp_path: Path) -> None:
    folder = cline_task(tmp_path)
    write(folder / "api_conversation_history.json", history(1)[:2])
    [s] = cline.parse_file(folder, ImportReport(), final=False)
    assert [n.role for n in s.nodes] == ["user", "system"]


def test_roo_subtask_names_its_parent(tmp_path: Path, home) -> None:
    ext = tmp_path / "Cursor" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline"
    for tid, parent in (("1767300000000", None), ("1767300005000", "1767300000000")):
        write(ext / "tasks" / tid / "api_conversation_history.json", history(1))
        write(
            ext / "tasks" / tid / "history_item.json",
            {
                "id": tid,
                "rootTaskId": "1767300000000",
                "parentTaskId": parent,
                "ts": int(tid),
                "workspace": "/work/roo",
                "mode": "code",
            },
        )
    age(tmp_path)
    report = imported(home, "roo", ext)
    assert report.warnings == [] and report.new_sessions == 2
    metas = {m.source_ref["native_id"]: m for m in home.sessions.list_sessions().sessions}
    child = metas["1767300005000"]
    assert (child.source, child.extra["kind"], child.extra["cwd"]) == ("roo-code", "subagent", "/work/roo")
    assert child.extra["parent_session"] == metas["1767300000000"].id


def test_cut_json_is_a_warning_naming_the_file(tmp_path: Path, home) -> None:
    folder = cline_task(tmp_path)
    imported(home, "cline", folder)
    before = stored(home)
    path = folder / "api_conversation_history.json"
    path.write_text(path.read_text()[:100])
    (folder / "ui_messages.json").write_text("[{")
    age(tmp_path, when=OLD + 60)
    report = imported(home, "cline", folder)
    assert report.warnings and all(str(folder) in w for w in report.warnings), report.warnings
    assert any(str(path) in w or "not valid JSON" in w for w in report.warnings)
    assert stored(home) == before


def test_what_cline_adds_to_a_user_message_is_no_prompt(tmp_path: Path) -> None:
    """Seen in a real Cline 3.x task: results as text (with brackets in the path), reminders and
    resumption notes appended to them, the user's words inside <feedback> / <user_message>."""
    folder = cline_task(tmp_path)
    env = "<environment_details>\n# Current Time\n1/1/2026\n</environment_details>"
    history = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nmigrate the auth\n</task>"},
                {"type": "text", "text": 'Files attached by the user:\n\n<file_content path="a.md">x</file_content>'},
                {"type": "text", "text": "\n# task_progress List (Optional - Plan Mode)\n\nWhile in PLAN MODE..."},
                {"type": "text", "text": env},
            ],
            "ts": 1767200000000,
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "write_to_file",
                    "input": {"path": "app/api/[...auth]/route.ts"},
                }
            ],
            "ts": 1767200001000,
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[write_to_file for 'app/api/[...auth]/route.ts'] Result:\nsaved"},
                {"type": "text", "text": "\n\n\t\t# TODO LIST UPDATE REQUIRED - You MUST include..."},
                {"type": "text", "text": env},
            ],
            "ts": 1767200002000,
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "attempt_completion", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[attempt_completion] Result: Done"},
                {"type": "text", "text": "The user has provided feedback on the results. Consider..."},
                {"type": "text", "text": "<feedback>\nalso add tests\n</feedback>"},
                {"type": "text", "text": env},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Adding tests."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[TASK RESUMPTION] This task was interrupted 3 days ago."},
                {
                    "type": "text",
                    "text": "New instructions for task continuation:\n<user_message>\nkeep going\n</user_message>",
                },
                {"type": "text", "text": "[execute_command for 'make'] Result:\nstale"},
            ],
        },
    ]
    write(folder / "api_conversation_history.json", history)
    [s] = cline.parse_file(folder, ImportReport(), final=True)
    assert [n.content for n in s.nodes if n.role == "user"] == ["migrate the auth", "also add tests", "keep going"]
    assert [(n.name, n.content) for n in s.nodes if n.role == "tool"] == [
        ("write_to_file", "[write_to_file for 'app/api/[...auth]/route.ts'] Result:\nsaved"),
        ("attempt_completion", "[attempt_completion] Result: Done"),
    ]
    notes = "\n".join(n.content for n in s.nodes if n.role == "system")
    for note in (
        "Files attached by the user:",
        "# task_progress List",
        "# TODO LIST UPDATE REQUIRED",
        "The user has provided feedback",
        "[TASK RESUMPTION]",
        "[execute_command for 'make'] Result:",
    ):
        assert note in notes
    assert_well_formed(s)
