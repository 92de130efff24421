"""Output bounds on huge inputs: a 5 MB tool output, a 5 MB diff, a budget of 1 KB."""

from __future__ import annotations

import dataclasses

import pytest

from opmem_tui.backend.recall.context import recall_for

from .conftest import ask
from .stores import T0, build_index, build_store, git

FIVE_MB = 5 * 1024 * 1024


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("huge")
    line = 'E   AssertionError: expected 200, got 500 — ünïcödé and \x1b[31mred\x1b[0m and "quotes"\n'
    output = line * (FIVE_MB // len(line.encode()) + 1)
    built = build_store(root, long_output=output)
    (built.workdir / "bundle.min.js").write_text("var a=1;" * (FIVE_MB // 8))  # one 5 MB line
    git(built.workdir, "add", "-A")
    git(built.workdir, "commit", "-q", "-m", "vendor a minified bundle", when=T0 + 900)
    return built, output


@pytest.mark.parametrize("max_bytes", [1024, 16384])
def test_five_mb_tool_output_stays_within_the_budget(huge, max_bytes: int) -> None:
    built, output = huge
    assert len(output.encode()) >= FIVE_MB
    recall = dataclasses.replace(recall_for(built.home, cwd=built.workdir), max_reply_bytes=max_bytes)
    turn = ask(recall, "memory_open_session", session_id=built.session_id, turn=2)
    messages = []
    page = 0
    while page is not None:
        reply = ask(recall, "memory_open_session", session_id=built.session_id, turn=2, page=page)
        messages += reply["messages"]
        page = reply.get("next_page")
    tool = next(m for m in messages if m["id"] == "t2")
    assert "more lines)" in tool["result"]
    assert turn["session"]["id"] == built.session_id
    middle = ask(recall, "memory_open_session", session_id=built.session_id, node="t2", offset=len(output) // 2)
    assert middle["text"] and output[len(output) // 2 :].startswith(middle["text"])
    assert middle["next_offset"] == len(output) // 2 + len(middle["text"])


@pytest.mark.parametrize("max_bytes", [1024, 16384])
def test_five_mb_single_line_diff_stays_within_the_budget(huge, max_bytes: int) -> None:
    built, _ = huge
    recall = dataclasses.replace(recall_for(built.home, cwd=built.workdir), max_reply_bytes=max_bytes)
    show = ask(recall, "memory_git_show", commit="HEAD")
    (entry,) = show["files"]
    assert entry["path"] == "bundle.min.js" and entry["diff"].endswith("... (+2 more lines)")
    part = ask(recall, "memory_git_show", commit="HEAD", path="bundle.min.js", offset=FIVE_MB // 2)
    assert part["diff"] and set(part["diff"]) <= set("var a=1;")
    log = ask(recall, "memory_git_log")
    assert log["commits"][0]["summary"] == "vendor a minified bundle"


@pytest.mark.parametrize("max_bytes", [1024, 16384])
def test_search_over_a_five_mb_tool_output_stays_within_the_budget(huge, max_bytes: int) -> None:
    # the index holds a tool call's name, paths and command (not its output): the hit is the call
    built, _ = huge
    if not (built.home.memory_dir / "index.sqlite").exists():
        build_index(built)
    recall = dataclasses.replace(recall_for(built.home, cwd=built.workdir), max_reply_bytes=max_bytes)
    reply = ask(recall, "memory_search", query="pytest", k=50)
    hits = list(reply["hits"])
    while reply.get("next_page") is not None:
        reply = ask(recall, "memory_search", query="pytest", k=50, page=reply["next_page"])
        hits += reply["hits"]
    tool = next(h for h in hits if h.get("node") == "t2")
    assert tool["source"] == f"session:{built.session_id}" and tool["turn"] == 2
    assert "\x1b" not in tool["snippet"] and len(tool["snippet"].encode()) < max_bytes
