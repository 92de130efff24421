"""Watching: appended lines only, offsets persisted, a finished turn in the store within 2 s."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from opmem_tui.backend.importers.hooks import IngestHooks
from opmem_tui.backend.importers.state import ImportState
from opmem_tui.backend.importers.watch import Watcher
from opmem_tui.backend.model import OpmemError

from .conftest import Transcript, text, thinking, tool_use

SID = "11111111-2222-3333-4444-555555555555"


def append(path: Path, lines: list[str]) -> None:
    with open(path, "a") as handle:
        handle.write("".join(lines))
        handle.flush()


class CountingParser:
    """Wraps the real parser to count the lines it was fed."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.fed: list[int] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def feed_line(self, line, number=None):
        self.fed.append(number)
        self.inner.feed_line(line, number)


def test_poll_reads_only_appended_complete_lines(home, tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("one")
    t.assistant("msg_A", text("reply one"))
    lines = t.lines()
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    path.write_text("".join(lines))
    watcher = Watcher(home, ["claude"], [tmp_path / "projects"], idle_seconds=0.0)
    first = watcher.poll(path)
    assert first.nodes == 1  # the reply is the newest record: held back until quiet
    follower = watcher.followers[path.resolve()]
    follower.parser = counting = CountingParser(follower.parser)
    assert watcher.tick().nodes == 1
    more = Transcript()
    more.count, more.last, more.clock = 10, t.last, t.clock
    more.prompt("two")
    more.assistant("msg_B", text("reply two"))
    new = more.lines()
    append(path, [new[0], new[1][:30]])  # the second line is still being written
    report = watcher.poll(path)
    assert counting.fed == [3] and report.nodes == 1 and report.turns == 1
    append(path, [new[1][30:]])
    watcher.poll(path)
    assert counting.fed == [3, 4]
    watcher.tick()
    assert [t.user.content for t in home.sessions.get_turns(f"cc-{SID}")] == ["one", "two"]
    entry = ImportState(home.path / "import-state.json").get(path)
    assert (entry.offset, entry.lines, entry.complete) == (path.stat().st_size, 4, True)


def test_truncated_file_starts_over(home, tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("one")
    t.assistant("msg_A", text("r"))
    t.prompt("two")
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(t.lines()))
    watcher = Watcher(home, ["claude"], [path], idle_seconds=0.0)
    watcher.poll(path)
    fresh = Transcript(session="other")
    fresh.count = 500
    fresh.prompt("replaced content")
    path.write_text("".join(fresh.lines()))
    report = watcher.poll(path)
    assert report.nodes == 1 and report.warnings == []
    assert "replaced content" in [n.content for n in home.sessions.get_nodes(f"cc-{SID}")]


def test_whole_file_formats_are_reparsed_on_change(home, tmp_path: Path) -> None:
    """A legacy Gemini chat (session-*.json) is rewritten whole: each change is read whole."""
    chat = {"sessionId": "g-1", "startTime": "2026-04-29T21:39:22Z", "messages": []}
    path = tmp_path / "tmp" / "proj" / "chats" / "session-1.json"
    path.parent.mkdir(parents=True)
    first = {"id": "u1", "timestamp": "2026-04-29T21:40:00Z", "type": "user", "content": "hi"}
    path.write_text(json.dumps(chat | {"messages": [first]}))
    watcher = Watcher(home, ["gemini"], [tmp_path / "tmp"])
    assert watcher.poll(path).nodes == 0  # just written: its last message may still change
    second = {"id": "g1", "timestamp": "2026-04-29T21:40:05Z", "type": "gemini", "content": "yo"}
    path.write_text(json.dumps(chat | {"messages": [first, second]}))
    report = watcher.poll(path)
    assert (report.nodes, watcher.followers) == (1, {})  # the first message is final now


def test_nothing_to_watch_is_a_clear_error(home, tmp_path: Path) -> None:
    watcher = Watcher(home, ["claude"], [tmp_path / "absent"])
    with pytest.raises(OpmemError, match="nothing to watch"):
        watcher.run(threading.Event())


def test_a_finished_turn_reaches_the_store_while_the_watch_runs(home, tmp_path: Path) -> None:
    """The watch loop follows the file: a turn appended while it runs is written and committed.

    How fast is a figure for a bench on a quiet machine, not an assert here."""
    folder = tmp_path / "projects" / "-tmp-project"
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    t = Transcript()
    t.prompt("first")
    t.assistant("msg_A", text("first reply"))
    path.write_text("".join(t.lines()))
    sid = f"cc-{SID}"
    committed = threading.Event()

    def after_ingest(sessions: frozenset[str]) -> None:
        turns = home.sessions.get_turns(sid) if sid in sessions else []
        if len(turns) == 2 and turns[1].commit and any(n.id == "msg_C" for n in turns[1].nodes):
            committed.set()

    watcher = Watcher(home, ["claude"], [tmp_path / "projects"], hooks=IngestHooks(after_ingest=(after_ingest,)))
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), kwargs={"ready": ready.set}, daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        turn = Transcript()
        turn.count, turn.last, turn.clock = 20, t.last, t.clock
        turn.prompt("run the tests")
        call = turn.assistant("msg_B", thinking("plan"), usage={"input_tokens": 1, "output_tokens": 2})
        turn.assistant("msg_B", tool_use("toolu_1", "Bash", command="pytest"))
        turn.result("toolu_1", "3 passed", parent=call)
        turn.assistant("msg_C", text("All 3 tests pass."))
        turn.system("turn_duration", None, durationMs=4000)
        lines = turn.lines()
        append(path, lines[:3])  # the agent is mid-turn
        append(path, lines[3:])  # ... and finishes it
        assert committed.wait(60), "turn 2 was not committed"
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    turns = home.sessions.get_turns(sid)
    assert [n.id for n in turns[1].nodes if n.role != "system"][-1] == "msg_C"
    entry = ImportState(home.path / "import-state.json").get(path)
    assert entry is not None and entry.offset == path.stat().st_size


def test_default_sources_are_those_with_an_existing_folder(tmp_path: Path, monkeypatch) -> None:
    from opmem_tui.backend.importers import SOURCES
    from opmem_tui.backend.importers.watch import default_sources

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.chdir(tmp_path)
    assert "claude" not in default_sources()
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    names = default_sources()
    assert "claude" in names and "aider" not in names and "jsonl" not in names  # aider reads the cwd
    gemini, openprogram = SOURCES["gemini"], SOURCES["openprogram"]
    assert gemini.follows_lines(Path("session-1.jsonl")) and not gemini.follows_lines(Path("session-1.json"))
    assert SOURCES["claude"].follows_lines(Path("x.jsonl")) and not openprogram.follows_lines(Path("s"))


def test_each_poll_reports_only_its_own_warnings(home, tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("one")
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(t.lines()) + "{bad line\n")
    watcher = Watcher(home, ["claude"], [path], idle_seconds=0.0)
    first = watcher.poll(path)
    assert [w.split(": ")[0] for w in first.warnings] == [f"{path}:2"]
    append(path, ['{"type": "brand-new"}\n', "[]\n"])
    second = watcher.poll(path)
    assert [w.split(": ")[0] for w in second.warnings] == [f"{path}:4"]
    assert second.unknown_records == {"brand-new": 1}
    assert watcher.poll(path).warnings == []


def test_a_change_between_the_catch_up_and_the_live_watch_is_not_missed(home, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "p"
    t = Transcript()
    t.prompt("one")
    t.assistant("msg_A", text("reply one"))
    path = t.write(folder / f"{SID}.jsonl")
    watcher = Watcher(home, ["claude"], [tmp_path / "projects"])
    watcher.catch_up()
    assert watcher.changed_since_catch_up() == []
    more = Transcript()
    more.count, more.last, more.clock = 10, t.last, t.clock
    more.prompt("two")
    append(path, more.lines())  # before watchfiles would have seen it
    other = Transcript(session="22222222-2222-3333-4444-555555555555")
    other.prompt("new session")
    born = other.write(folder / f"{other.session}.jsonl")
    assert sorted(watcher.changed_since_catch_up()) == sorted([path.resolve(), born.resolve()])


def test_a_given_folder_is_watched_for_sessions_of_the_agents_shape(home, tmp_path: Path) -> None:
    """`opmem watch pi --path DIR`: a session under DIR, however deep and whatever its folders are
    called, is found by its shape and followed."""
    import shutil

    samples = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "pi" / "store"
    target = tmp_path / "backups" / "old laptop" / "x"
    shutil.copytree(samples, target)
    [session] = list(target.rglob("*.jsonl"))
    os.utime(session, (1_600_000_000, 1_600_000_000))
    watcher = Watcher(home, ["pi"], [tmp_path / "backups"], bind=False, autocommit=False)
    report = watcher.catch_up()
    assert (report.new_sessions, report.nodes) == (1, 4)
