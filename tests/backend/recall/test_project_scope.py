"""On the shared fixtures: a project's timeline, search and block hold only its own sessions (and
global facts), every project the memory knows can be named, and memory_git_log answers clearly for
a project that has no repository here (issue 37)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend import naming
from opmem_tui.backend.distill.injected import text_reason
from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.projects.known import NOT_HERE, unbound_projects
from opmem_tui.backend.recall.context import Recall, recall_for
from opmem_tui.backend.recall.core_block import core_block
from opmem_tui.cli import main

from .conftest import ask
from .test_fixture_sessions import fixtures

SPOTTER = "/home/marco/projects/spotter"  # where spotter-short and spotter-tool_heavy ran


@pytest.fixture(scope="module")
def distilled(tmp_path_factory: pytest.TempPathFactory) -> Home:
    root = fixtures()
    claude = sorted((root / "transcripts" / "claude-code").rglob("*.jsonl"))
    cursor = root / "agents" / "cursor" / "slevin48+cursor-history" / "state.vscdb"
    kimi = sorted((root / "agents" / "kimi-cli").rglob("*.jsonl"))
    if not claude or not cursor.is_file() or not kimi:
        pytest.skip("the real fixtures (../shared/fixtures) are absent")
    home = Home(tmp_path_factory.mktemp("scope") / "home", durable=False)
    run_import(home, "claude", claude, bind=False)
    run_import(home, "codex", sorted((root / "transcripts" / "codex").glob("*.jsonl")), bind=False)
    run_import(home, "cursor", [cursor], bind=False)
    run_import(home, "kimi", kimi, bind=False)
    copilot = sorted((root / "agents" / "copilot-cli" / "jazzyalex+agent-sessions" / "stage0").glob("*.jsonl"))
    run_import(home, "copilot", copilot, bind=False)
    home.sessions.flush()
    run(home, RunOptions())
    home.search_index.rebuild()
    home.search_index.close()
    home.memory.close()
    return home


def own_sessions(home: Home) -> set[str]:
    return {m.id for m in home.sessions.list_sessions().sessions if m.extra.get("cwd") == SPOTTER}


@pytest.fixture
def spotter(distilled: Home) -> Recall:
    return dataclasses.replace(recall_for(distilled, project="spotter"), max_reply_bytes=1 << 20)


def test_a_projects_timeline_holds_only_its_own_sessions(spotter: Recall, distilled: Home) -> None:
    mine = own_sessions(distilled)
    assert mine
    events = ask(spotter, "memory_timeline")["events"]
    assert events
    assert {e["source"].removeprefix("session:") for e in events} <= mine


@pytest.mark.parametrize("query", ["settings page", "dark mode", "phoenix server", "files", "error"])
def test_a_projects_search_holds_only_its_own_sessions(spotter: Recall, distilled: Home, query: str) -> None:
    mine = own_sessions(distilled)
    hits = ask(spotter, "memory_search", query=query, k=20)["hits"]
    assert {h["source"].removeprefix("session:") for h in hits if "source" in h} <= mine
    everywhere = ask(recall_for(distilled, cwd="/"), "memory_search", query=query, k=20)["hits"]
    if query in ("settings page", "dark mode"):
        assert everywhere  # the cursor sessions hold it: found outside the project, not in it


def test_a_projects_block_points_only_at_its_own_sessions(spotter: Recall, distilled: Home) -> None:
    block = core_block(spotter)
    pointers = {line.rsplit("↪ session:", 1)[1] for line in block.splitlines() if "↪ session:" in line}
    # a pointer is the id's shortest unique prefix: each names exactly one session
    assert pointers and {naming.session_id(distilled, p) for p in pointers} <= own_sessions(distilled)


def test_memory_git_log_on_a_project_with_no_repository_here_answers_clearly(spotter: Recall) -> None:
    reply = ask(spotter, "memory_git_log")
    error = reply["error"]
    assert error["code"] == "no_history"
    assert "spotter" in error["message"] and "projects.json" not in error["message"]


def test_every_project_the_memory_knows_can_be_named(distilled: Home, tmp_path: Path, monkeypatch) -> None:
    known = {u.id: u for u in unbound_projects(distilled)}
    spotter = next(u for u in known.values() if u.workdir == SPOTTER)
    assert spotter.where == NOT_HERE and spotter.name == "spotter"
    runner = CliRunner()
    listed = runner.invoke(main, ["--home", str(distilled.path), "projects", "list"], catch_exceptions=False)
    assert listed.exit_code == 0
    assert "no projects bound" in listed.output
    line = next(row for row in listed.output.splitlines() if row.startswith(spotter.id + " "))
    assert line.split() == [spotter.id, *NOT_HERE.split(), SPOTTER, "spotter"]
    monkeypatch.chdir(tmp_path)  # a folder of no project
    core = runner.invoke(main, ["--home", str(distilled.path), "core"], catch_exceptions=False)
    assert core.exit_code == 0
    assert "opmem core --project" in core.output or "--project" in core.stderr
    assert spotter.id in core.output + core.stderr
    named = runner.invoke(main, ["--home", str(distilled.path), "core", "--project", spotter.id])
    assert "project: spotter" in named.output


KIMI = "/private/tmp/as-agent-lab/kimi/project"  # where the kimi fixtures ran; copilot's ran `echo` too


def test_a_projects_graph_holds_only_what_its_own_sessions_told(distilled: Home) -> None:
    project = next(u for u in unbound_projects(distilled) if u.workdir == KIMI)
    recall = dataclasses.replace(recall_for(distilled, project=project.id), max_reply_bytes=1 << 20)
    mine = {m.id for m in distilled.sessions.list_sessions().sessions if m.extra.get("cwd") == KIMI}
    reply = ask(recall, "memory_graph_neighbors", entity="echo", hops=1)
    sources = {e["source"].removeprefix("session:") for e in reply["edges"] if "source" in e}
    assert sources and sources <= mine
    everywhere = ask(recall_for(distilled, cwd="/"), "memory_graph_neighbors", entity="echo", hops=1)
    assert {e["source"].removeprefix("session:") for e in everywhere["edges"]} - mine  # others ran it too


def test_no_block_holds_text_an_agent_or_a_tool_injected(distilled: Home) -> None:
    blocks = [p.read_text(encoding="utf-8") for p in distilled.memory_dir.rglob("core.md")]
    assert len(blocks) >= 3
    for block in blocks:
        for line in block.splitlines():
            said = line.lstrip("· ").split("  ↪", 1)[0]
            for head in (
                "Do NOT use any tools",
                "detailed summary of the conversation",
                "<system-reminder",
                "<git-context",
            ):
                assert head not in said, line
            assert not text_reason(said.split(": ", 1)[-1]), line
