"""README is a front page: at most 300 lines, its links resolve, and its table of agents is the
importer registry's (every source, each with the default folder its importer looks in)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from opmem_tui.backend.importers import SOURCES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()

# The agents' own overrides: unset, so each importer says its plain default.
OVERRIDES = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "OPENCODE_DB",
    "COPILOT_HOME",
    "GOOSE_PATH_ROOT",
    "QWEN_HOME",
    "CONTINUE_GLOBAL_DIR",
    "KIMI_CODE_HOME",
    "KIMI_SHARE_DIR",
    "CLINE_DIR",
)


def agent_rows() -> dict[str, tuple[str, str]]:
    """{import name: (label, default folders)} of the README's table of agents."""
    section = README.split("\n## Agents", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[a-z][a-z-]*`", cells[1]):
            rows[cells[1].strip("`")] = (cells[0], cells[2])
    return rows


def test_readme_is_a_front_page_whose_links_resolve() -> None:
    assert len(README.splitlines()) <= 300
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def test_the_agents_table_is_the_importer_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = agent_rows()
    assert set(rows) == set(SOURCES)
    home = tmp_path / "u"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in OVERRIDES:
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"  # aider, SpecStory: the current project's folder
    project.mkdir()
    monkeypatch.chdir(project)
    for name, importer in SOURCES.items():
        label, where = rows[name]
        assert label == getattr(importer, "label", label), name
        linux = [p for p in importer.default_paths() if "Library" not in p.parts and home in p.parents]
        if linux:  # the first folder the importer looks in is the one the table names first
            shown = "~/" + os.path.relpath(linux[0], home)
            assert f"`{shown}`" in where.split(",")[0], (name, shown, where)


def test_the_import_page_names_every_source() -> None:
    page = (ROOT / "docs" / "import.md").read_text()
    assert [name for name in SOURCES if f"`{name}`" not in page] == []


def test_docs_links_resolve() -> None:
    for page in (ROOT / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith(("http", "mailto:")):
                assert (page.parent / target).exists(), (page.name, target)


def test_the_commands_block_names_real_commands() -> None:
    from opmem_tui.cli import main

    block = README.split("\n## Commands", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    named = set(re.findall(r"(?:^|[;|] ?)opmem ([a-z]+)", block, re.M))
    assert named and named <= set(main.commands), named - set(main.commands)
