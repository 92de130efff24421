"""Whole runs over a real store and a real memory: idempotence, grown turns, contradictions,
the run lock, progress and cancel, project commits linked to their turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opmem_tui.backend.distill.memory_port import read_contradictions
from opmem_tui.backend.distill.pipeline import DistillBusy, RunOptions, run
from opmem_tui.backend.distill.state import load_state
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import core_path
from opmem_tui.backend.projects.folders import folder_project

from .conftest import Chat, fixture, import_into

QUIET = RunOptions(project=False)


def test_a_rerun_over_the_same_nodes_appends_nothing(home: Home):
    import_into(home, "claude", fixture("transcripts/claude-code/spotter-tool_heavy.jsonl"))
    first = run(home, QUIET)
    assert first.sessions == 1 and first.written.events == 2 and first.written.entities > 5
    [sid] = [m.id for m in home.sessions.list_sessions().sessions]
    assert load_state(home.memory_dir).cursor(sid).seq == max(n.seq for n in home.sessions.get_nodes(sid))
    assert run(home, QUIET).written.total == 0
    again = run(home, RunOptions(again=True, project=False))
    assert again.sessions == 1 and again.written.total == 0
    stats = home.memory.stats()
    assert (stats.events, stats.patches) == (2, 0)


def test_a_turn_that_grew_rewrites_its_work_event(home: Home):
    chat = Chat(home, "s1")
    chat.user("look at the store lock")
    chat.reply()
    chat.tool("Read", {"file_path": "/work/proj/backend/store/lock.py"}, "def lock(): ...")
    chat.commit()
    run(home, QUIET)
    chat.tool("Edit", {"file_path": "/work/proj/backend/store/lock.py", "old_string": "a", "new_string": "b"})
    chat.tool("Bash", {"command": "pytest -q tests/store"}, "==== 12 passed, 1 failed in 0.52s ====", exit_code=1)
    chat.commit()
    report = run(home, QUIET)
    assert report.written.patches == 1
    page = home.memory.timeline(kinds=["work"])
    [event] = page.events
    assert event.summary == "Edited backend/store/lock.py and ran pytest: 12 passed, 1 failed"
    assert page.hidden_superseded == 1


def say(home: Home, sid: str, text: str, when: float) -> None:
    chat = Chat(home, sid, start=when)
    chat.user(text)
    chat.reply("ok")
    chat.commit()


def test_single_valued_relations_keep_the_newest_value_and_log_the_contradiction(home: Home):
    say(home, "monday", "FYI the worker listens on port 4000 now", 1_700_000_000.0)
    say(home, "tuesday", "Change of plan: the worker listens on port 4001", 1_700_090_000.0)
    run(home, QUIET)
    [edge] = [e for e in _edges(home, "listens-on")]
    assert edge.to_id.startswith("port.4001")
    [logged] = read_contradictions(home.memory_dir)
    assert logged["relation"] == "listens-on" and logged["kept"] == edge.id
    # an old transcript imported late never retires the current value
    say(home, "last-year", "the worker listens on port 3000", 1_660_000_000.0)
    run(home, QUIET)
    [current] = _edges(home, "listens-on")
    assert current.id == edge.id
    assert len(read_contradictions(home.memory_dir)) == 2


def _edges(home: Home, relation: str):
    hood = home.memory.neighbors(home.memory.entity("worker").id, 1)
    return [g.edge for g in hood.edges if g.relation == relation]


HOLDER = textwrap.dedent(
    """
    import sys
    from filelock import FileLock
    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("held", flush=True)
    sys.stdin.read()
    """
)


def test_two_runs_never_interleave(home: Home):
    say(home, "s1", "hello there, the build is green", 1_700_000_000.0)
    home.memory_dir.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home.memory_dir / ".distill.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DistillBusy, match="another distillation is running"):
            run(home, QUIET)
        with pytest.raises(DistillBusy, match=r"waited 0\.2 s"):
            run(home, RunOptions(project=False, lock_timeout=0.2))
    finally:
        holder.stdin.close()
        holder.wait(10)
    assert run(home, QUIET).sessions == 1


def test_progress_is_reported_and_cancel_stops_at_a_batch_edge(home: Home):
    for k in range(4):
        say(home, f"s{k}", f"session {k}: the tests pass again", 1_700_000_000.0 + k)
    seen = []
    report = run(home, QUIET, progress=seen.append, cancel=lambda: any(p.stage == "distil" for p in seen))
    assert report.cancelled and report.sessions == 1
    assert [p.stage for p in seen][:2] == ["collect", "distil"]
    cursors = load_state(home.memory_dir).sessions
    assert set(cursors) == {"s0"}
    rest = run(home, QUIET)
    assert rest.sessions == 3 and not rest.cancelled


def test_a_project_commit_becomes_an_event_linked_to_its_turn(home: Home, tmp_path: Path):
    from tests.backend.projects.project_repo_helpers import make_repo, user_commit

    repo = make_repo(tmp_path / "proj")
    project = home.projects.resolve_project(repo, "proj")
    oid = user_commit(repo, "Fix the lock (fixes #12)", {"lock.py": "x = 1\n"}, when=1_700_000_010.0)
    chat = Chat(home, "s1", start=1_700_000_000.0)
    chat.user("fix the lock and commit")
    chat.reply()
    chat.tool(
        "Bash", {"command": "git commit -am 'Fix the lock (fixes #12)'"}, f"[main {oid[:7]}] Fix the lock (fixes #12)"
    )
    chat.commit()
    home.sessions.update_session("s1", project_id=project.id)
    home.projects.link_session(project.id, "s1", home.sessions.get_turns("s1"))
    run(home, QUIET)
    events = [e for e in home.memory.timeline(kinds=["work"]).events if e.summary.startswith("Committed")]
    linked = [e for e in events if e.provenance.commit == oid]
    assert len(linked) == 1
    assert linked[0].summary == f"Committed {oid[:7]} to proj: Fix the lock (fixes #12)"
    assert (linked[0].provenance.session_id, linked[0].provenance.turn) == ("s1", 1)
    assert run(home, QUIET).commits == 0  # the project's cursor moved


def test_the_llm_extractor_needs_a_configured_endpoint(home: Home):
    from opmem_tui.backend.distill.pipeline import LLMUnavailable

    with pytest.raises(LLMUnavailable, match="needs \\[llm\\] base_url"):
        run(home, RunOptions(llm=True))


def test_state_file_is_plain_json(home: Home):
    say(home, "s1", "the build is green again", 1_700_000_000.0)
    run(home, QUIET)
    data = json.loads((home.memory_dir / "state.json").read_text())
    assert data["version"] == 1 and data["sessions"]["s1"][0] == 1


def test_the_stores_change_token_spares_the_scan_until_the_store_writes(home: Home):
    say(home, "s1", "the build is green again", 1_700_000_000.0)
    old = 1_700_000_000
    os.utime(home.sessions.path_for("s1") / "history", (old, old))  # written long ago: its stamp is trusted
    run(home, QUIET)
    assert load_state(home.memory_dir).token == home.sessions.changed_path.read_text().strip()
    # a node file dropped in by hand, not through the store: the token does not change ...
    node = home.sessions.get_nodes("s1")[-1]
    folder = home.sessions.path_for("s1") / "history"
    extra = dict(node.to_json(), id="hand", seq=node.seq + 1, parent_id=node.id, content="ran the deploy")
    (folder / f"{extra['seq']:06d}-a-hand.json").write_text(json.dumps(extra))
    assert run(home, QUIET).nodes == 0
    # ... a full scan (the daily sleep does one) finds it (in a process whose store has not cached
    # the session already), and any store write changes the token
    found = run(Home(home.path), RunOptions(project=False, scan=True))
    assert found.sessions == 1 and found.written.patches == 1  # its turn grew: a newer work event
    say(home, "s2", "and the docs are updated", 1_700_000_500.0)
    assert run(home, QUIET).sessions == 1


def said_once(home: Home) -> Chat:
    """Session s1 in /work/proj (bound to no project), one turn that states a port."""
    chat = Chat(home, "s1")
    chat.user("the worker should listen on port 18109 from now on")
    chat.reply("Done.")
    chat.commit()
    return chat


def test_stage_5_writes_core_md_the_views_and_indexes_the_records(home: Home):
    chat = Chat(home, "s1")
    chat.user("the worker should listen on port 18109 from now on")
    chat.reply("Done.")
    chat.tool("Edit", {"file_path": "/work/proj/worker.py", "old_string": "4000", "new_string": "18109"})
    chat.commit()
    report = run(home)
    assert any("core.md" in note for note in report.notes)
    assert (home.memory_dir / "core.md").is_file()
    # the session's folder is bound to no project: its memory is the folder's project's, not global
    core = core_path(home.memory_dir, folder_project("/work/proj")[0]).read_text(encoding="utf-8")
    assert "project: proj," in core and "↪ session:s1" in core and len(core.encode()) <= 2048
    assert list((home.memory_dir / "graph" / "views" / "entity").glob("*.md"))
    hits = home.search("worker listens on 18109")
    assert hits and hits[0].session_id == "s1"
    assert any(h.record_id or h.via for h in hits)  # a distilled record found or lifted the turn


def test_a_run_that_died_before_stage_5_is_projected_by_the_next_one(home: Home):
    """Records written, then the run fails in stage 5 (here: core.md cannot be replaced; a
    SIGKILL there does the same): the next run, with nothing new to write, still projects them."""
    chat = Chat(home, "s1")
    chat.user("the worker should listen on port 18109 from now on")
    chat.reply("Done.")
    chat.tool("Edit", {"file_path": "/work/proj/worker.py", "old_string": "4000", "new_string": "18109"})
    chat.commit()
    core = home.memory_dir / "core.md"
    (core / "blocker").mkdir(parents=True)  # a folder where core.md goes: the write fails
    with pytest.raises(OSError):
        run(home)
    assert load_state(home.memory_dir).unprojected
    (core / "blocker").rmdir()
    core.rmdir()
    again = run(Home(home.path))
    assert again.written.total == 0
    assert core.is_file()
    assert "↪ session:s1" in core_path(home.memory_dir, folder_project("/work/proj")[0]).read_text(encoding="utf-8")
    assert list((home.memory_dir / "graph" / "views" / "entity").glob("*.md"))
    index = Home(home.path).search_index.index
    assert index.db.execute("SELECT count(*) FROM records WHERE session_id='s1'").fetchone()[0] > 0
    assert not load_state(home.memory_dir).unprojected
    assert not any("core.md" in note for note in run(Home(home.path)).notes)  # projected once, not every run


def test_a_broken_search_index_does_not_fail_the_run_or_the_sleep(home: Home):
    """The index is derived: a run whose records and core.md are written says the index could not
    be updated (naming the file and the way out) instead of failing after the fact, and the
    sleep still finishes (packs, records its time) rather than stopping at the index."""
    from opmem_tui.backend.distill.sleep import sleep

    said_once(home)
    index = home.memory_dir / "index.sqlite"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_bytes(b"this is not a database\n" * 10)
    report = run(home)
    assert report.written.total > 0
    assert "↪ session:s1" in core_path(home.memory_dir, folder_project("/work/proj")[0]).read_text(encoding="utf-8")
    note = next(n for n in report.notes if "index.sqlite" in n)
    assert "opmem index rebuild" in note
    assert not load_state(home.memory_dir).unprojected
    slept = sleep(Home(home.path))
    assert any("index.sqlite" in n for n in slept.notes)
    assert load_state(home.memory_dir).last_sleep
    assert index.read_bytes() == b"this is not a database\n" * 10  # left for the user to rebuild


def test_a_damaged_line_of_a_memory_log_is_named_in_the_report(home: Home):
    """README: a broken line is skipped and reported with its file and line. The run goes on."""
    chat = said_once(home)
    run(home)
    edges = home.memory_dir / "graph" / "edges.jsonl"
    with edges.open("a", encoding="utf-8") as f:
        f.write('{"id": "broken", "from": \n')
    lines = edges.read_text(encoding="utf-8").count("\n")
    chat.user("we decided to use redis for the cache")
    chat.reply("OK.")
    chat.commit()
    report = run(Home(home.path))
    assert report.written.total > 0
    assert any(note.startswith("skipped: ") and f"edges.jsonl:{lines}:" in note for note in report.notes), report.notes


def test_terminal_escapes_in_a_session_never_reach_the_memory(home: Home):
    # Coloured tool output and titles set by OSC are common in agent sessions: the memory (and
    # the core.md handed to agents) holds what the screen shows, not the escape bytes.
    chat = Chat(home, "s1")
    chat.user("\x1b[1mfix the \x1b[31mredis\x1b[0m cache in \x1b]0;title\x07worker.py")
    chat.reply("Fixed the \x1b[32mredis\x1b[0m cache.")
    chat.tool("Bash", {"command": "echo \x1b]0;title\x07 && pytest -q"}, "\x1b[32m3 passed\x1b[0m\r\n")
    chat.tool("Edit", {"file_path": "/work/proj/\x1b[31mworker.py", "old_string": "a", "new_string": "b"})
    chat.commit()
    run(home)
    written = [p for p in home.memory_dir.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".md")]
    assert {"core.md", "edges.jsonl"} <= {p.name for p in written}
    for path in written:
        text = path.read_text(encoding="utf-8")
        for bad in ("\x1b", "\x07", "\\u001b", "\\u0007", "\r"):
            assert bad not in text, f"{path.relative_to(home.memory_dir)} holds {bad!r}"
    names = [e.name for e in home.memory.entity_records()]
    assert "worker.py" in " ".join(names) and not any("\x1b" in n or "\x07" in n for n in names)


def test_stage_5_with_nothing_new_leaves_the_cores_and_restores_one_edited_by_hand(home: Home):
    from opmem_tui.backend.distill.project import CORES_STATE, project_all

    said_once(home)
    run(home)
    core = core_path(home.memory_dir, folder_project("/work/proj")[0])
    written = core.read_bytes()
    assert (home.memory_dir / CORES_STATE).is_file()
    project_all(Home(home.path), None)  # nothing changed: skipped, the file as it was
    assert core.read_bytes() == written
    core.write_text("hand-written\n", encoding="utf-8")  # a file edited by hand is rendered again
    project_all(Home(home.path), None)
    assert core.read_bytes() == written
    (home.memory_dir / CORES_STATE).write_text("garbage", encoding="ascii")
    core.unlink()
    project_all(Home(home.path), None)
    assert core.read_bytes() == written
