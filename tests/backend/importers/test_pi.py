"""Pi's session files: a real version 1 session from badlogic/pi-mono, and the version 3 entries
its source describes (docs/session.md, session-manager.ts, messages.ts at 83378aa)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.pi import read_pi

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "pi" / "real-v1" / "large-session-head.jsonl"


def test_the_real_version_1_session_is_a_chain_with_tools_joined_by_id() -> None:
    (s,) = read_pi(REAL, ImportReport(), "pi")
    assert s.native_id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert s.cwd == "/Users/badlogic/workspaces/pi-mono"
    chain = [n for n in s.nodes if n.called_by is None]
    assert [n.role for n in chain] == ["user", "assistant", "user", "assistant", "assistant", "assistant", "assistant"]
    assert all(b.parent_id == a.id for a, b in itertools.pairwise(chain))
    # the aborted reply keeps why it is empty
    assert chain[1].content == "" and chain[1].metadata["stopReason"] == "aborted"
    assert chain[1].name == "gpt-5.1-codex" and chain[3].name == "claude-sonnet-4-5"
    tools = [n for n in s.nodes if n.role == "tool"]
    assert [t.name for t in tools] == ["read", "read", "bash", "read", "read", "read", "read", "edit"]
    assert tools[0].metadata["call_id"] == "toolu_017qEkVzzPb7b7o4FkgJLF23"
    assert tools[0].content.startswith("# Pi Coding Agent Themes")
    # times from the entries (ISO), a tool at its result's time, never before its caller
    assert chain[0].created_at == 1763681581.55
    assert tools[0].created_at > chain[3].created_at
    assert all(t.created_at >= next(n for n in chain if n.id == t.called_by).created_at for t in tools)


def entries(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "2026-01-05T08-00-00-000Z_0193aaaa-0000-7000-8000-00000000f0rk.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_version_3_fork_bash_custom_and_branch_summary_entries(tmp_path: Path) -> None:
    t = "2026-01-05T08:00:0{}.000Z"
    path = entries(
        tmp_path,
        {"type": "session", "version": 3, "id": "f0rk", "timestamp": t.format(0), "cwd": "/w",
         "parentSession": "/home/u/.pi/agent/sessions/--w--/2026-01-04T08-00-00-000Z_0193-parent.jsonl"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": t.format(1),
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": t.format(2),
         "message": {"role": "bashExecution", "command": "make", "output": "", "exitCode": 2, "cancelled": False}},
        {"type": "thinking_level_change", "id": "a3", "parentId": "a2", "timestamp": t.format(3), "thinkingLevel": "high"},
        {"type": "branch_summary", "id": "a4", "parentId": "a1", "timestamp": t.format(4), "fromId": "a3",
         "summary": "tried make"},
        {"type": "custom_message", "id": "a5", "parentId": "a4", "timestamp": t.format(5), "customType": "ext",
         "content": "injected", "display": True},
        {"type": "message", "id": "a6", "parentId": "a3", "timestamp": t.format(6),
         "message": {"role": "compactionSummary", "summary": "so far", "tokensBefore": 9}},
    )  # fmt: skip
    (s,) = read_pi(path, ImportReport(), "pi")
    assert s.kind == "fork" and s.parent_native_id == "0193-parent"
    by_id = {n.id: n for n in s.nodes}
    assert by_id["a2"].role == "user" and by_id["a2"].content == "Ran `make`\n(no output)\n\nCommand exited with code 2"
    assert by_id["a4"].parent_id == "a1" and by_id["a4"].metadata["branch_summary"] is True
    assert by_id["a5"].parent_id == "a4" and by_id["a5"].content == "injected"
    # thinking_level_change is not a node: a6 hangs under the node standing for it (a2)
    assert by_id["a6"].parent_id == "a2" and by_id["a6"].metadata["compaction"] is True
    assert by_id["a6"].created_at > by_id["a1"].created_at


def test_oh_my_pi_keeps_its_sessions_in_its_agent_dir_and_titles_them_in_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opmem_tui.backend.importers import SOURCES

    monkeypatch.setenv("OMP_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert SOURCES["omp"].default_paths() == [tmp_path / "agent" / "sessions"]
    path = entries(
        tmp_path,
        {"type": "session", "version": 3, "id": "t1", "title": "Fix the build", "timestamp": "2026-01-05T08:00:00Z", "cwd": "/w"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-05T08:00:01Z",
         "message": {"role": "user", "content": "fix it"}},
    )  # fmt: skip
    (s,) = read_pi(path, ImportReport(), "oh-my-pi")
    assert s.title == "Fix the build"
