"""`opmem show` (and the other recall commands): tables for people, --json for scripts, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.cli import main
from tests.backend.recall.stores import T0, Built, add_memory, build_index, build_store


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build_store(tmp_path)


def run(built: Built, *args: str):
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "120"})
    return runner.invoke(main, list(args), catch_exceptions=False)


def test_search_names_an_index_that_is_a_folder(built: Built) -> None:
    """Not "no index yet" and exit 0: the file, the problem, on stderr, exit 1; nothing changed."""
    index = built.home.path / "memory" / "index.sqlite"
    index.mkdir(parents=True)
    result = run(built, "search", "pytest", "--project", "shop")
    assert result.exit_code == 1
    assert "index.sqlite" in result.stderr and "folder" in result.stderr, result.output
    assert "no index" not in result.output and "Traceback" not in result.output
    assert index.is_dir() and not any(index.iterdir())


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


def test_core_prints_the_block(built: Built) -> None:
    add_memory(built)
    result = run(built, "core", "--project", "shop")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("═") and "opmem memory · project: shop" in result.output
    assert "↪ session:cc-shop-ses\n" in result.output  # the id's shortest unique prefix
    result = run(built, "core", "--project", "shopp")
    assert result.exit_code == 1 and "no project 'shopp'" in result.output and "did you mean" in result.output


def test_core_write_keeps_the_users_text_byte_identical_twice(built: Built, tmp_path: Path) -> None:
    add_memory(built)
    target = tmp_path / "CLAUDE.md"
    before = "# My project\r\n\r\nUse tabs.  Trailing spaces stay.   \r\n"
    after = "\r\n## Notes\r\nünïcödé, no final newline"
    target.write_bytes(
        before.encode() + b"<!-- opmem:core:begin -->\r\nold\r\n<!-- opmem:core:end -->" + after.encode()
    )
    first = run(built, "core", "--project", "shop", "--write", str(target))
    assert first.exit_code == 0, first.output
    once = target.read_bytes()
    assert once.startswith(before.encode()) and once.endswith(after.encode())
    assert b"Decided the worker listens on :18109" in once and b"old" not in once
    second = run(built, "core", "--project", "shop", "--write", str(target))
    assert second.exit_code == 0 and "unchanged" in second.output
    assert target.read_bytes() == once
    block = run(built, "core", "--project", "shop").output
    assert block.rstrip("\n").replace("\n", "\r\n").encode() in once


def test_core_write_refuses_broken_markers(built: Built, tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    text = b"intro\n<!-- opmem:core:end -->\n<!-- opmem:core:begin -->\n"
    target.write_bytes(text)
    result = run(built, "core", "--write", str(target))
    assert result.exit_code == 1 and "AGENTS.md" in result.output and "end marker" in result.output
    assert target.read_bytes() == text


def test_search_table_and_json(built: Built) -> None:
    result = run(built, "search", "pytest", "--project", "shop")
    assert result.exit_code == 0 and "opmem index rebuild" in result.output  # no index yet
    add_memory(built)
    build_index(built)
    result = run(built, "search", "pytest", "--project", "shop")
    assert result.exit_code == 0, result.output
    assert "tool" in result.output and f"session:{built.session_id} turn 2" in result.output
    reply = json.loads(run(built, "search", "pytest", "-k", "3", "--json", "--project", "shop").output)
    assert 1 <= len(reply["hits"]) <= 3 and reply["scope"] == f"project:{built.project_id}"
    result = run(built, "search", "pytest", "--since", "the day after never")
    assert result.exit_code == 1 and "since" in result.output


def test_search_table_keeps_the_snippet_readable_at_80_columns(built: Built) -> None:
    """A long source (session id, turn, node) folds in its own column; the snippet keeps room
    for words (it got a few letters a line at 80 columns, the width when stdout is a pipe)."""
    add_memory(built)
    build_index(built)
    terminal = {"OPMEM_HOME": str(built.home.path), "COLUMNS": "80", "TTY_COMPATIBLE": "1"}  # rich: a terminal
    result = CliRunner(env=terminal).invoke(main, ["search", "pytest", "--project", "shop"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    shown = re.sub(r"\x1b\[[0-9;]*m", "", result.output)
    header = next(line for line in shown.splitlines() if "snippet" in line)
    widths = {cell.strip(): len(cell) for cell in header.split("┃")}
    assert widths["snippet"] >= 25, shown  # was 12


def test_piped_output_is_plain_lines_and_pages_count_from_one(built: Built) -> None:
    """Piped (80 columns, not a terminal): no table borders, one line per hit or turn, never
    folded into narrow columns; `--page` counts from 1 as the text does; an argument error
    names the option, not the tool's internal argument."""
    add_memory(built)
    build_index(built)
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "80"})
    search = runner.invoke(main, ["search", "pytest", "--project", "shop", "-k", "1"], catch_exceptions=False)
    assert search.exit_code == 0, search.output
    assert not set("┃│━") & set(search.stdout)
    lines = search.stdout.splitlines()
    assert lines[0].split() == ["when", "kind", "snippet", "source"] and len(lines) == 2
    assert lines[1].endswith("session:cc-shop-session turn 2 node t2")  # the whole hit on its line
    first = runner.invoke(main, ["search", "pytest", "--project", "shop", "-k", "1", "--page", "1"])
    assert first.exit_code == 0 and first.stdout == search.stdout  # page 1 is the first
    shown = runner.invoke(main, ["show", built.session_id])
    assert not set("┃│━") & set(shown.stdout)
    assert any(line.startswith("1  ") and "Add a greeting module" in line for line in shown.stdout.splitlines())
    bad = runner.invoke(main, ["timeline", "--page", "0"])
    assert bad.exit_code == 2 and "--page" in bad.output
    for args in (["show", built.session_id, "--turn", "0"], ["graph", "worker", "--hops", "9"]):
        error = runner.invoke(main, args)
        assert error.exit_code != 0 and "memory_" not in error.output, error.output


def test_a_date_out_of_range_is_a_message_not_a_traceback(built: Built) -> None:
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "120"})
    for args in (["timeline", "--until", "0001-01-01"], ["graph", "worker", "--as-of", "0001-01-01"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 1, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert "0001-01-01" in result.stderr and "Traceback" not in result.output


def test_a_narrow_terminal_keeps_the_text_readable_beside_the_source(built: Built) -> None:
    """Before, the source column took its full width first and left the event summary or the fact
    one letter wide (a word per letter down the screen) at 60-80 columns with a long session id."""
    add_memory(built)
    runner = CliRunner(env={"OPMEM_HOME": str(built.home.path), "COLUMNS": "60"})
    result = runner.invoke(main, ["timeline", "--project", "shop"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "uvicorn" in result.output and "greet.py" in result.output, result.output
    result = runner.invoke(main, ["graph", "worker", "--hops", "1", "--project", "shop"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "-listens-on->" in result.output and ":18109" in result.output, result.output


def test_a_damaged_memory_log_line_is_named_on_stderr_and_the_answer_still_comes(built: Built) -> None:
    """README: a broken line of the memory logs is skipped and reported with its file and line.
    Before, timeline/graph/core skipped it silently: nothing said the memory answered with less."""
    add_memory(built)
    edges = built.home.path / "memory" / "graph" / "edges.jsonl"
    with edges.open("a", encoding="utf-8") as f:
        f.write("not json \x1b]0;owned\x07\n")
    line = edges.read_text(encoding="utf-8").count("\n")
    before = edges.read_bytes()
    for args in (["timeline", "--project", "shop"], ["graph", "worker", "--project", "shop"], ["core"]):
        result = run(built, *args)
        assert result.exit_code == 0, result.output
        assert f"edges.jsonl:{line}: invalid JSON" in result.stderr, (args, result.stderr)
        assert "\x1b" not in result.output and "\x07" not in result.output
    assert edges.read_bytes() == before  # reported, never rewritten
