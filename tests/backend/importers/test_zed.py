"""Zed's agent threads (threads.db, zstd JSON) as crates/agent/src/db.rs writes them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportReport

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "zed" / "store" / "threads" / "threads.db"
JAN_5 = 1767600000
zed = SOURCES["zed"]


def test_a_current_thread_and_a_first_agent_thread(tmp_path: Path) -> None:
    report = ImportReport()
    current, legacy = zed.read(SAMPLE, report, final=True)
    assert (current.title, current.cwd, current.git_branch, current.model) == (
        "List the files", "/work/app", "main", "claude-sonnet-4-5",
    )  # fmt: skip
    roles = [(n.role, n.content) for n in current.nodes]
    assert roles == [
        ("user", "list the files"),
        ("assistant", "Listing."),
        ("tool", "a.py"),
        ("assistant", "One file."),
    ]
    tool = current.nodes[2]
    assert (tool.name, tool.input, tool.called_by, tool.metadata["call_id"]) == (
        "terminal", {"command": "ls"}, current.nodes[1].id, "toolu_1",
    )  # fmt: skip
    assert current.nodes[1].metadata["thinking"] == "use ls"
    assert current.nodes[3].parent_id == current.nodes[1].id  # Resume is no node
    # no message has a time: the first is the row's created_at, the last its updated_at
    assert [n.created_at for n in current.nodes] == [JAN_5, 0.0, 0.0, JAN_5 + 9.0]
    assert [(n.role, n.content) for n in legacy.nodes] == [("user", "say hello"), ("assistant", "Hello.")]
    assert legacy.title == "Say hello" and legacy.nodes[0].created_at == JAN_5 + 20
    assert report.warnings == [] and report.unknown_records == {}


def test_a_thread_that_cannot_be_decompressed_is_named_and_the_rest_read(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    shutil.copy(SAMPLE, db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE threads SET data = ? WHERE data_type = 'zstd'", (b"\x28\xb5\x2f\xfd broken",))
    conn.close()
    report = ImportReport()
    sessions = zed.read(db, report, final=True)
    assert [s.title for s in sessions] == ["Say hello"]
    assert len(report.warnings) == 1 and "0193aaaa-0000-7000-8000-00000000zed1" in str(report.warnings[0])


def test_not_zeds_database_is_a_clear_warning(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    sqlite3.connect(db).execute("CREATE TABLE other (x)").connection.close()
    report = ImportReport()
    assert zed.parse_file(db, report, final=True) == []
    assert len(report.warnings) == 1 and "threads" in str(report.warnings[0])


def test_a_subagents_thread_names_its_parent(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    shutil.copy(SAMPLE, db)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE threads SET parent_id = '0193aaaa-0000-7000-8000-00000000zed1', folder_paths = ? WHERE data_type = 'json'",
            ("/work/sub\n/work/other",),
        )
    conn.close()
    child = zed.read(db, ImportReport(), final=True)[1]
    assert (child.kind, child.parent_native_id, child.cwd) == (
        "subagent",
        "0193aaaa-0000-7000-8000-00000000zed1",
        "/work/sub",
    )
