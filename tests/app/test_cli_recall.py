"""`opmem show` (and the other recall commands): tables for people, --json for scripts, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.cli import main
from tests.backend.recall.stores import T0, Built, add_memory, build_store


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build_store(tmp_path)


def run(built: Built, *args: str):
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "120"})
    return runner.invoke(main, list(args), catch_exceptions=False)


def test_show_lists_turns_then_a_turn(built: Built) -> None:
    result = run(built, "show", built.session_id)
    assert result.exit_code == 0, result.output
    assert "Add a greeting to the shop" in result.output
    assert "Run the tests" in result.output and "Thanks" in result.output
    result = run(built, "show", built.session_id, "--turn", "1")
    assert result.exit_code == 0, result.output
    assert "tool Write" in result.output and "File written" in result.output


def test_show_json_is_the_tool_reply(built: Built) -> None:
    result = run(built, "show", built.session_id, "--turn", "3", "--json")
    assert result.exit_code == 0
    reply = json.loads(result.output)
    assert [m["text"] for m in reply["messages"]] == ["Thanks", "You're welcome."]


def test_show_unknown_session_fails_with_suggestions(built: Built) -> None:
    result = run(built, "show", "cc-shop-sesion")
    assert result.exit_code == 1
    assert "no session 'cc-shop-sesion'" in result.output and built.session_id in result.output
    result = run(built, "show", "cc-shop-sesion", "--json")
    assert result.exit_code == 1
    assert json.loads(result.output)["error"]["code"] == "unknown_session"
    result = run(built, "show", built.session_id, "--turn", "7")
    assert result.exit_code == 1 and "no turn 7" in result.output


def test_show_prints_session_text_plain(built: Built) -> None:
    store = built.home.sessions
    hostile = "[bold red]not markup[/] \x1b[31mred\x1b]0;title\x07 done"
    store.append_message(built.other_id, "user", hostile, created_at=T0 + 5000)
    store.append_message(built.other_id, "assistant", "[link=http://x]click[/link]", created_at=T0 + 5001)
    store.commit_turn(built.other_id)
    store.flush()
    result = run(built, "show", built.other_id, "--turn", "2")
    assert result.exit_code == 0, result.output
    assert "[bold red]not markup[/] red done" in result.output
    assert "[link=http://x]click[/link]" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output


def test_timeline_and_graph_tables_and_json(built: Built) -> None:
    add_memory(built)
    result = run(built, "timeline", "--project", built.project_id)
    assert result.exit_code == 0, result.output
    assert "Decided the worker listens on :18109" in result.output and "learning" in result.output
    result = run(built, "timeline", "--kind", "decision", "--json", "--project", "shop")
    assert [e["kind"] for e in json.loads(result.output)["events"]] == ["decision"]
    result = run(built, "graph", "worker", "--hops", "1", "--project", "shop")
    assert result.exit_code == 0, result.output
    assert "worker -listens-on-> :18109" in result.output and "superseded" in result.output
    result = run(built, "graph", "worker", "--as-of", "2025-06-15T15:07:00+00:00", "--json", "--project", "shop")
    assert "worker -listens-on-> :8000" in {e["fact"] for e in json.loads(result.output)["edges"]}


def test_timeline_and_graph_errors(built: Built) -> None:
    add_memory(built)
    result = run(built, "graph", "wroker", "--project", "shop")
    assert result.exit_code == 1 and "did you mean: worker" in result.output
    result = run(built, "timeline", "--since", "the day after never")
    assert result.exit_code == 1 and "since" in result.output
    result = run(built, "timeline", "--project", "nope")
    assert result.exit_code == 1 and "no project 'nope'" in result.output
