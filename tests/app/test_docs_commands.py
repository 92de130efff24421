"""Every docs page keeps true what it shows: each `$ opmem ...` line of its ```console blocks runs
against a demo store in tmp_path (the lines after it, up to the next command, are what the
output must hold, spaces aside), and exits 0. Piped, as a reader's shell copy would be."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.demo import build_demo
from opmem_tui.cli import main

from .conftest import DEMO_NOW

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROMPT = "$ "


def console_blocks(page: Path) -> list[list[tuple[str, list[str]]]]:
    """Each ```console block of `page`: its (command, expected lines) pairs."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", page.read_text(), re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith(PROMPT):
                steps.append((line[len(PROMPT) :], []))
            elif line.strip() and steps:
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


PAGES = sorted(page for page in DOCS.glob("*.md") if console_blocks(page))


def _spaces(text: str) -> str:
    return " ".join(text.split())


def test_the_front_pages_areas_each_show_commands() -> None:
    """The docs pages README's "More" list sends a newcomer to each show what to type."""
    shown = {page.name for page in PAGES}
    for area in ("app", "import", "memory", "recall", "privacy", "sync", "export", "configuration"):
        assert f"{area}.md" in shown, area


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_docs_page_commands_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = build_demo(tmp_path / "demo", now=DEMO_NOW)
    user = tmp_path / "user"  # the agents' config files `opmem connect` would read or write
    user.mkdir()
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"OPMEM_HOME": str(home.path), "HOME": str(user), "COLUMNS": "80"})
    for steps in console_blocks(page):
        for command, expected in steps:
            argv = shlex.split(command, comments=True)
            assert argv[0] == "opmem", f"{page.name}: a console block runs opmem only: {command}"
            result = runner.invoke(main, argv[1:])
            said = result.stdout + result.stderr
            assert result.exit_code == 0, f"{page.name}: `{command}` exited {result.exit_code}:\n{said}"
            for line in expected:
                assert _spaces(line) in _spaces(said), f"{page.name}: `{command}` did not print {line!r}:\n{said}"
