"""A backlog import: browsable and searchable first, the git mirror after (store/mirror_backlog.py).

run_import(defer_mirror=True) writes node files, meta.json and search rows, no commit; the
MirrorWriter then makes the same turn commits an inline import makes. A writer SIGKILLed
mid-mirror (a real process, stopped inside a session's flush: its pack written, its refs not)
loses nothing: the next start adopts what it left and completes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pygit2

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.store import node_log
from opmem_tui.backend.store.mirror_backlog import MirrorWriter
from opmem_tui.backend.store.node_log import NodeLog
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import Transcript, text, tool_use

REPO = Path(__file__).resolve().parents[3]


def corpus(folder: Path, sessions: int, turns: int) -> Path:
    for s in range(sessions):
        t = Transcript(session=f"{s:08d}-2222-3333-4444-555555555555")
        for n in range(turns):
            t.prompt(f"session {s} question {n} about the zeppelin cache")
            t.assistant(f"msg_{s}_{n}", tool_use(f"toolu_{s}_{n}", "Bash", command="ls"))
            t.result(f"toolu_{s}_{n}", "README.md")
            t.assistant(f"msg_{s}_{n}b", text(f"answer {n} of session {s}"))
        t.write(folder / f"{s:08d}.jsonl")
    return folder


def commits(home: Home) -> dict[str, int]:
    out = {}
    for meta in home.sessions.list_sessions().sessions:
        log = subprocess.run(["git", "-C", meta.path, "rev-list", "--all"], capture_output=True, text=True, check=True)
        out[meta.id] = len(log.stdout.split())
    return out


def test_backlog_is_searchable_before_its_mirror_and_the_mirror_matches_an_inline_import(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 3, 4)
    inline = Home(tmp_path / "inline")
    inline_report = run_import(inline, "claude", [source], hooks=inline.ingest_hooks(), bind=False)
    home = Home(tmp_path / "home")
    report = run_import(home, "claude", [source], hooks=home.ingest_hooks(), bind=False, defer_mirror=True)

    assert len(report.mirror_pending) == 3 and report.turns == inline_report.turns == 12
    assert set(commits(home).values()) == {0}  # nothing committed yet
    hits = home.search_index.search("zeppelin")
    assert hits and all(hit.commit is None for hit in hits)  # searchable already, from the node files
    assert len(home.sessions.list_sessions().sessions) == 3

    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror)
    writer.add(report.mirror_pending)
    done = writer.run()
    assert (done.sessions, done.commits, done.left) == (3, 12, 0)
    assert commits(home) == commits(inline)
    hits = home.search_index.search("zeppelin", k=50)
    assert hits and all(hit.commit for hit in hits)  # commit ids filled in: each its turn's commit
    for hit in hits:
        message = pygit2.Repository(home.sessions.path_for(hit.session_id))[hit.commit].message
        assert message.startswith(f"turn {hit.turn}: ")
    assert home.sessions.verify(repair=False).ok


def test_the_mirror_hands_the_index_its_commits_and_nothing_is_read_back(tmp_path: Path, monkeypatch) -> None:
    source = corpus(tmp_path / "claude", 3, 4)
    home = Home(tmp_path / "home")
    report = run_import(home, "claude", [source], hooks=home.ingest_hooks(), bind=False, defer_mirror=True)
    told: list[dict] = []
    writer = MirrorWriter(home.sessions, on_commits=lambda turns: told.append(dict(turns)))
    writer.add(report.mirror_pending)
    writer.run()
    assert sorted(sid for batch in told for sid in batch) == sorted(report.mirror_pending)
    reads: list[str] = []
    for name in ("get_meta", "get_nodes", "get_turns", "snapshot"):
        real = getattr(SessionStore, name)
        monkeypatch.setattr(
            SessionStore, name, lambda self, *a, _n=name, _r=real, **k: reads.append(_n) or _r(self, *a, **k)
        )
    real_scan = NodeLog.scan
    monkeypatch.setattr(NodeLog, "scan", lambda self, have: reads.append("scan") or real_scan(self, have))
    for batch in told:
        home.search_index.after_mirror(batch)
    home.search_index.update()  # the stamps were refreshed: nothing to read back either
    assert reads == []
    assert all(hit.commit for hit in home.search_index.search("zeppelin", k=50))
    index = home.search_index.index
    assert [index.uncommitted(index.db, sid) for sid in sorted(report.mirror_pending)] == [0, 0, 0]  # tool rows too


def test_a_reimport_of_unchanged_sessions_promises_no_mirror(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 2, 2)
    home = Home(tmp_path / "home")
    run_import(home, "claude", [source], bind=False)
    again = run_import(home, "claude", [source], bind=False, force=True, defer_mirror=True)
    assert again.mirror_pending == set() and home.sessions.pending_mirrors() == []


CHILD = r"""
import os, sys, time
from pathlib import Path
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.store import git_mirror
from opmem_tui.backend.store.mirror_backlog import MirrorWriter
from opmem_tui.backend.store import node_log
from opmem_tui.backend.store.node_log import NodeLog
from opmem_tui.backend.store.sessions import SessionStore

home = Home(Path(sys.argv[1]))
report = run_import(home, "claude", [Path(sys.argv[2])], hooks=home.ingest_hooks(), bind=False, defer_mirror=True)
print("imported", report.turns, flush=True)
flushes = 0
original = git_mirror.GitMirror._set_ref

def stalled(self, branch, oid):
    global flushes
    flushes += 1
    if flushes == 3:  # inside the third session's flush: its pack is written, its refs are not
        print("stalled", flush=True)
        time.sleep(600)
    return original(self, branch, oid)

git_mirror.GitMirror._set_ref = stalled
writer = MirrorWriter(home.sessions)
writer.add(sorted(report.mirror_pending))
writer.run()
print("finished", flush=True)
"""


def test_sigkill_mid_mirror_loses_nothing_and_the_next_start_completes_it(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 5, 3)
    home_path = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home_path), str(source)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        imported = child.stdout.readline().split()
        assert imported[0] == "imported"
        assert child.stdout.readline().strip() == "stalled"
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        child.kill()
    turns = int(imported[1])

    home = Home(home_path)
    left = home.sessions.pending_mirrors()
    assert len(left) == 3  # killed mid-way: two mirrors done, the third inside its flush, two untouched
    assert sum(commits(home).values()) == 6
    writer = MirrorWriter(home.sessions, on_written=home.search_index.after_ingest)
    assert writer.adopt() == 3
    done = writer.run()
    assert (done.sessions, done.left) == (3, 0)
    assert sum(commits(home).values()) == turns == 15
    assert home.sessions.pending_mirrors() == []
    report = home.sessions.verify(repair=False)
    assert report.ok and not report.writing, report.problems
    for meta in home.sessions.list_sessions().sessions:
        fsck = subprocess.run(["git", "-C", meta.path, "fsck", "--strict"], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr


def test_watch_catch_up_defers_its_mirror_and_a_live_turn_commits_the_backlog_first(tmp_path: Path) -> None:
    from opmem_tui.backend.importers.watch import Watcher

    source = corpus(tmp_path / "projects" / "p", 1, 3)
    path = next(source.glob("*.jsonl"))
    home = Home(tmp_path / "home")
    writer = MirrorWriter(home.sessions)
    watcher = Watcher(home, ["claude"], [tmp_path / "projects"], idle_seconds=0.0, bind=False, mirrors=writer)
    caught = watcher.catch_up()
    (sid,) = caught.mirror_pending
    assert writer.pending == 1 and commits(home) == {sid: 0}
    # a live turn appended while the mirror waits: the three older turns are committed first, each alone
    more = Transcript(session="00000000-2222-3333-4444-555555555555")
    last = json.loads(path.read_text().splitlines()[-1])
    more.count, more.last, more.clock = 100, last["uuid"], datetime.fromisoformat(last["timestamp"])
    more.prompt("a live question")
    more.assistant("msg_live", text("a live answer"))
    with open(path, "a") as handle:
        handle.write("".join(more.lines()))
    watcher.poll(path)
    watcher.tick(now=float("inf"))
    turns = [c.turn for c in home.sessions.session_commits(sid)]
    assert set(turns) == {1, 2, 3, 4} and turns[-3:] == [3, 2, 1]  # (turn 4 twice: its reply came at the idle flush)
    assert home.sessions.pending_mirrors() == [] and writer.run().commits == 0


def test_a_backlog_import_indexes_each_session_from_memory_and_keeps_few_open(tmp_path: Path, monkeypatch) -> None:
    """The index hook reads what the batch just wrote from the store's read cache (seeded by the
    batch), never from the node files; and the writers' cache keeps no backlog session (bounded
    memory, whatever the history's size)."""
    source = corpus(tmp_path / "claude", 4, 3)
    home = Home(tmp_path / "home")
    home.search_index.update()  # the index exists: the hook indexes session by session
    read: list[str] = []
    real_read = node_log.read_raw
    monkeypatch.setattr(node_log, "read_raw", lambda path: read.append(str(path)) or real_read(path))
    report = run_import(home, "claude", [source], hooks=home.ingest_hooks(), bind=False, defer_mirror=True)
    assert len(report.mirror_pending) == 4 and report.nodes == 4 * 3 * 4
    assert read == []  # no node file read back
    assert home.sessions.cached_ids() == []  # none held by the writers' cache
    assert len(home.search_index.search("zeppelin", k=50)) >= 4
    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror)
    writer.add(report.mirror_pending)
    assert writer.run().sessions == 4
    assert home.sessions.cached_ids() == []  # the mirror let each go too


def test_the_mirror_reads_each_node_file_once(tmp_path: Path, monkeypatch) -> None:
    source = corpus(tmp_path / "claude", 2, 3)
    home = Home(tmp_path / "home")
    report = run_import(home, "claude", [source], bind=False, defer_mirror=True)
    read: list[str] = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(str(self)) or real(self))
    writer = MirrorWriter(home.sessions)
    writer.add(report.mirror_pending)
    assert writer.run().commits == report.turns
    node_reads = [p for p in read if os.sep + "history" + os.sep in p]
    assert len(node_reads) == len(set(node_reads)) == report.nodes  # once for the graph and the blob alike
    assert home.sessions.verify(repair=False).ok


def test_a_session_the_index_missed_is_indexed_when_its_mirror_is_written(tmp_path: Path) -> None:
    """A backlog written without its index update (its writer killed between the two) is indexed
    by the mirror's hook, as when the hook read every session back."""
    source = corpus(tmp_path / "claude", 2, 2)
    home = Home(tmp_path / "home")
    home.search_index.update()  # an index exists, empty
    report = run_import(home, "claude", [source], bind=False, defer_mirror=True)  # no index hook
    assert home.search_index.search("zeppelin") == ()
    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror)
    writer.add(report.mirror_pending)
    writer.run()
    hits = home.search_index.search("zeppelin", k=50)
    assert {hit.session_id for hit in hits} == report.mirror_pending and all(hit.commit for hit in hits)


def test_the_index_hook_asks_for_the_cursors_of_its_batch_only(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 3, 1)
    home = Home(tmp_path / "home")
    report = run_import(home, "claude", [source], hooks=home.ingest_hooks(), bind=False, defer_mirror=True)
    one, *_ = sorted(report.mirror_pending)
    index = home.search_index.index
    assert set(index.cursors()) == report.mirror_pending
    assert set(index.cursors([one, "cc-not-indexed"])) == {one}


def fsck_clean(home: Home) -> None:
    for meta in home.sessions.list_sessions().sessions:
        fsck = subprocess.run(["git", "-C", meta.path, "fsck", "--strict"], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr


def test_worker_processes_write_the_mirror_beside_the_import_as_an_inline_import_would(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 6, 3)
    inline = Home(tmp_path / "inline")
    run_import(inline, "claude", [source], bind=False)
    home = Home(tmp_path / "home")
    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror, workers=2)
    report = run_import(
        home, "claude", [source], hooks=home.ingest_hooks(), bind=False, defer_mirror=True, mirrors=writer
    )
    writer.add(home.sessions.owed_mirrors())  # as `opmem import`: those the workers have not finished
    done = writer.run()
    assert (done.sessions, done.commits, done.left, done.problems) == (6, 18, 0, [])
    assert writer.workers_broken == ""
    assert commits(home) == commits(inline) and home.sessions.pending_mirrors() == []
    hits = home.search_index.search("zeppelin", k=50)
    assert hits and all(hit.commit for hit in hits)  # the workers' commits reached the index
    assert home.sessions.verify(repair=False).ok
    fsck_clean(home)
    again = run_import(home, "claude", [source], bind=False, defer_mirror=True, mirrors=writer)
    assert (again.nodes, again.mirror_pending, writer.pending) == (0, set(), 0)
    assert len(report.mirror_pending) == 6


def test_a_worker_killed_leaves_its_sessions_to_the_import_process(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 5, 3)
    home = Home(tmp_path / "home")
    report = run_import(home, "claude", [source], bind=False, defer_mirror=True)
    writer = MirrorWriter(home.sessions, workers=1)
    writer.add(sorted(report.mirror_pending))
    executor = writer._procs._executor  # the pool starts with the first session sent to it
    assert executor is not None
    while not executor._processes:  # the pool starts its workers on submit; wait to see them
        time.sleep(0.01)
    for pid in list(executor._processes):
        os.kill(pid, signal.SIGKILL)
    done = writer.run()
    assert writer.workers_broken  # said, and every session written here instead
    assert (done.sessions, done.commits, done.left) == (5, 15, 0)
    assert home.sessions.pending_mirrors() == [] and sum(commits(home).values()) == 15
    assert home.sessions.verify(repair=False).ok
    fsck_clean(home)


KILLED_IMPORT = r"""
import os, signal, sys
from pathlib import Path
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.store.mirror_backlog import MirrorWriter

if __name__ == "__main__":
    home = Home(Path(sys.argv[1]))
    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror, workers=2)

    def progress(done, total, label):
        if done == 4:  # files written, their mirrors under way in the workers: killed
            os.kill(os.getpid(), signal.SIGKILL)

    run_import(home, "claude", [Path(sys.argv[2])], hooks=home.ingest_hooks(), bind=False, defer_mirror=True,
               mirrors=writer, progress=progress)
"""


def test_sigkill_of_an_import_whose_workers_mirror_loses_nothing(tmp_path: Path) -> None:
    source = corpus(tmp_path / "claude", 8, 3)
    home_path = tmp_path / "home"
    script = tmp_path / "killed_import.py"  # a file: the spawned workers import the parent's __main__
    script.write_text(KILLED_IMPORT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.run([sys.executable, str(script), str(home_path), str(source)], env=env, timeout=120)
    assert child.returncode == -signal.SIGKILL
    home = Home(home_path)
    writer = MirrorWriter(home.sessions, on_commits=home.search_index.after_mirror, workers=1)
    writer.adopt()  # the workers are gone with their parent (or finish first: the session lock orders them)
    again = run_import(
        home, "claude", [source], hooks=home.ingest_hooks(), bind=False, defer_mirror=True, mirrors=writer
    )
    writer.add(home.sessions.owed_mirrors())
    done = writer.run()
    assert done.left == 0 and done.problems == [] and again.nodes + 4 * 12 >= 8 * 12
    assert home.sessions.pending_mirrors() == [] and sum(commits(home).values()) == 8 * 3
    report = home.sessions.verify(repair=False)
    assert report.ok and not report.writing, report.problems
    fsck_clean(home)
    hits = home.search_index.search("zeppelin", k=100)
    assert {hit.session_id for hit in hits} == set(commits(home)) and all(hit.commit for hit in hits)
