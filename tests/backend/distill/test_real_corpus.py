"""Briefs of real projects of the dev half of the corpus (bench/real_corpus/dev/): the key facts a
reader found in their sessions are in the core block, and no replaced value is stated as current.
Skipped when the corpus is absent. Only the dev half is read here: the test half is only measured."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.memory.core import core_path

DEV = Path(__file__).resolve().parents[3] / "bench" / "real_corpus" / "dev"


def _block(project: str, tmp_path: Path) -> str:
    folder = DEV / project / "sessions"
    if not folder.is_dir():
        pytest.skip(f"the dev corpus project {project} is absent")
    work = tmp_path / "work" / project
    shutil.copytree(folder, work)
    pygit2.init_repository(str(work))
    home = Home(tmp_path / "home")
    for name, importer in SOURCES.items():
        if name != "jsonl" and importer.discover([work]):
            run_import(home, name, [work], bind=False)
    run(home, RunOptions(workers=1))
    memory = home.memory_readonly()
    [scope] = [s for s in memory.scopes() if s.startswith("project:")]
    memory.close()
    return core_path(home.memory_dir, scope.split(":", 1)[1]).read_text(encoding="utf-8")


def _line(block: str, prefix: str) -> str:
    return " ".join(line for line in block.splitlines() if line.startswith(prefix))


def test_monochromatic_tools_and_the_typescript_rules_of_its_conventions_file(tmp_path: Path):
    # aider, 19 runs: the user's eslint, oxlint and dprint configs; CONVENTIONS.md edited as
    # search/replace blocks ("Prefer const over let", "Always include file extensions ...")
    block = _block("monochromatic", tmp_path)
    assert "TypeScript" in _line(block, "· stack: "), block
    tools = _line(block, "· tools: ")
    for name in ("oxlint", "ESLint", "dprint", "Vitest"):
        assert name in tools, block
    conventions = _line(block, "· conventions: ")
    assert "prefer const over let" in conventions, block
    assert "airbnb" not in block.lower(), block  # "Follow eslint airbnb coding style" was replaced
    assert "Discussed:" not in block and "2 >& 1" not in block


def test_zen_mcp_server_is_a_python_project_from_the_files_added(tmp_path: Path):
    # aider, 4 runs of /add and /copy-context: every file added is a .py file
    block = _block("zen-mcp-server", tmp_path)
    assert "Python" in _line(block, "· stack: "), block


def test_munsellspace_the_task_tool_the_agent_ran_of_no_known_kind(tmp_path: Path):
    # Claude Code: the agent runs `npx task-master list --tag=dev` to check the tasks it added
    block = _block("munsellspace", tmp_path)
    assert "npx task-master list" in _line(block, "· other: "), block


def test_agente_bsc_rag_the_stores_and_ui_its_sessions_keep_naming(tmp_path: Path):
    # Cursor, in Portuguese: no manifest is read, but the Qdrant collection and the Streamlit UI
    # come up turn after turn
    block = _block("agente-bsc-rag", tmp_path)
    stack = _line(block, "· stack: ")
    assert "Qdrant" in stack and "Streamlit" in stack, block
