"""The core block recall hands out: core.md as the distillation wrote it, else rendered now."""

from __future__ import annotations

from datetime import date

import pytest

from opmem_tui.backend import naming
from opmem_tui.backend.memory.core import CORE_BUDGET, RULE, core_path, write_core
from opmem_tui.backend.recall.context import Recall, recall_for
from opmem_tui.backend.recall.core_block import core_block
from opmem_tui.backend.recall.errors import RecallError

from .stores import T0, Built, add_memory
from .test_read_only import snapshot


def content_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("· ")]


def test_rendered_now_when_never_consolidated(recall: Recall, built: Built) -> None:
    add_memory(built)
    before = snapshot(built.home.path)
    block = core_block(recall)
    assert snapshot(built.home.path) == before  # rendered read-only: no core.md, no cache
    assert not core_path(built.home.memory_dir, built.project_id).exists()
    assert block.startswith(RULE) and len(block.encode("utf-8")) <= CORE_BUDGET
    assert "opmem memory · project: shop, last consolidated 2025-06-15" in block
    assert "[Graph · current project]" in block
    lines = content_lines(block)
    assert any("Decided the worker listens on :18109" in line for line in lines)
    assert not any("uvicorn needs --reload off" in line for line in lines)  # the global block's (below)
    assert not any("Another project's event" in line for line in lines)
    # the pointer names the session by its shortest unique prefix, 8 characters past `cc-`
    assert all(line.endswith("↪ session:cc-shop-ses") for line in lines)
    assert naming.session_id(built.home, "session:cc-shop-ses") == built.session_id
    assert f"memory_git_log({built.project_id})" in block


def test_global_block_outside_projects(built: Built) -> None:
    add_memory(built)
    outside = recall_for(built.home, cwd=built.workdir.parent, now=T0 + 400)
    block = core_block(outside)
    assert "project: (global)" in block and "[Graph · global]" in block
    lines = content_lines(block)
    assert [line for line in lines if "uvicorn needs --reload off" in line]
    assert not any("Decided the worker" in line for line in lines)  # a project's record stays in it


def test_the_consolidated_core_md_is_handed_back_as_written(recall: Recall, built: Built) -> None:
    add_memory(built)
    memory = built.home.memory
    path = write_core(memory, date(2025, 6, 20), built.project_id, "shop")
    memory.close()
    written = path.read_text(encoding="utf-8")
    assert "last consolidated 2025-06-20" in written
    assert core_block(recall) == written
    assert core_block(recall, "shop") == written  # by name too


def test_a_file_the_renderer_could_not_have_written_is_not_trusted(recall: Recall, built: Built) -> None:
    add_memory(built)
    path = core_path(built.home.memory_dir, built.project_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    for data in (
        RULE.encode() + b"\n" + b"x" * (2 * CORE_BUDGET),
        b"hand-written notes\n",
        b"\xff\xfe" + RULE.encode(),
    ):
        path.write_bytes(data)
        block = core_block(recall)
        assert "last consolidated 2025-06-15" in block and len(block.encode()) <= CORE_BUDGET
    path.write_bytes((RULE + "\n\x1b]0;title\x07opmem memory\n").encode())
    assert "\x1b" not in core_block(recall) and "\x07" not in core_block(recall)


def test_unknown_project_has_suggestions(recall: Recall) -> None:
    with pytest.raises(RecallError) as raised:
        core_block(recall, "shopp")
    assert raised.value.code == "unknown_project" and raised.value.suggestions
