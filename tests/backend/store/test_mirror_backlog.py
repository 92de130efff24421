"""A backlog's git mirror written after its node files (store/mirror_backlog.py).

A deferred batch writes node files and meta.json only; the session reads from them (turns
without commit ids, title, preview, turn count, last turn); `write_mirror` then commits it
turn by turn, the same commits an inline import makes. The marker names its owner: a live one
is left alone (open, first read, verify says "mirror being written"); a dead one is adopted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.mirror_backlog import HERE, LIVE, ORPHAN, MirrorWriter
from opmem_tui.backend.store.sessions import SessionStore
from opmem_tui.backend.store.writers import process_start

from .conftest import git


def write_session(store: SessionStore, sid: str, turns: int, *, defer: bool) -> list[str]:
    """`turns` turns (user, assistant, a tool) in one batch, committed per turn unless deferred."""
    users = []
    with store.batch(sid, defer_mirror=defer) as batch:
        parent = None
        for n in range(turns):
            user = batch.append("user", f"question {n} about the cache", parent_id=parent, node_id=f"u{n}")
            reply = batch.append("assistant", f"answer {n}", parent_id=user.id, node_id=f"a{n}")
            batch.append("tool", f"grep output {n}", called_by=reply.id, name="grep", node_id=f"t{n}")
            users.append(user.id)
            parent = reply.id
            if not defer:
                batch.commit_turn(reply.id)
    return users


def history_trees(path: Path) -> list[tuple[str, list[str], int]]:
    """(subject, node files, parents) of every commit, oldest first: the mirror, timestamps aside."""
    repo = pygit2.Repository(str(path))
    out = []
    for line in git(path, "log", "--all", "--reverse", "--format=%H %s").splitlines():
        oid, subject = line.split(" ", 1)
        commit = repo[oid].peel(pygit2.Commit)
        names = [e.name for e in commit.tree["history"].peel(pygit2.Tree)]
        out.append((subject, names, len(commit.parent_ids)))
    return out


def test_deferred_batch_reads_from_node_files_then_write_mirror_commits_each_turn(tmp_path: Path) -> None:
    inline = Home(tmp_path / "inline").sessions
    write_session(inline, "s1", 4, defer=False)
    store = Home(tmp_path / "deferred").sessions
    write_session(store, "s1", 4, defer=True)
    path = store.path_for("s1")

    assert store.mirror_pending("s1") == HERE
    assert git(path, "rev-list", "--all").strip() == ""  # no commit yet
    turns = store.get_turns("s1")
    assert [t.number for t in turns] == [1, 2, 3, 4] and all(t.commit is None for t in turns)
    meta = store.get_meta("s1")
    assert meta.title == "question 0 about the cache" and meta.extra["turns"] == 4
    assert [m.id for m in store.list_sessions().sessions] == ["s1"]
    last = Home(tmp_path / "deferred").sessions.last_turn("s1")  # a fresh store: the quick read
    assert last.turn_count == 4 and last.turn is not None and last.turn.nodes[0].id == "u3"

    assert store.write_mirror("s1") == 4
    assert store.mirror_pending("s1") is None
    assert history_trees(path) == history_trees(inline.path_for("s1"))
    assert [t.commit is not None for t in store.get_turns("s1")] == [True] * 4
    assert subprocess.run(["git", "-C", str(path), "fsck", "--strict"], capture_output=True).returncode == 0
    assert git(path, "status", "--porcelain") == ""
    assert store.write_mirror("s1") == 0  # idempotent


def test_git_reads_write_an_owed_mirror_first(store: SessionStore) -> None:
    write_session(store, "s1", 3, defer=True)
    assert [b.name for b in store.branches("s1")] == ["main"]
    assert store.mirror_pending("s1") is None
    assert [c.turn for c in store.session_commits("s1")] == [3, 2, 1]


def test_a_live_commit_backfills_the_backlog_first_one_commit_per_turn(store: SessionStore) -> None:
    write_session(store, "s1", 3, defer=True)
    store.append_message("s1", "user", "a live question", parent_id="a2")
    store.append_message("s1", "assistant", "a live answer")
    store.commit_turn("s1")
    assert [c.turn for c in store.session_commits("s1")] == [4, 3, 2, 1]
    assert store.mirror_pending("s1") is None


def _owner(store: SessionStore, sid: str, pid: int) -> None:
    (store.locks_dir / f"{sid}.mirror").write_text(json.dumps({"pid": pid, "start": process_start(pid)}))


@pytest.fixture
def other_process():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def test_verify_says_a_mirror_another_process_writes_is_being_written(store: SessionStore, other_process) -> None:
    write_session(store, "s1", 3, defer=True)
    _owner(store, "s1", other_process.pid)
    fresh = SessionStore(store.root)
    assert fresh.mirror_pending("s1") == LIVE
    report = fresh.verify()
    assert report.ok and not report.repaired
    assert [line.split(": ", 1)[1] for line in report.writing] == ["mirror being written (3 turns behind)"]
    fresh.get_turns("s1")  # the first read's repair leaves it to its owner too
    assert git(store.path_for("s1"), "rev-list", "--all").strip() == ""


def test_an_orphaned_mirror_is_adopted_and_completed(store: SessionStore) -> None:
    write_session(store, "s1", 3, defer=True)
    write_session(store, "s2", 2, defer=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _owner(store, "s1", dead.pid)
    _owner(store, "s2", dead.pid)
    fresh = SessionStore(store.root)
    assert fresh.mirror_pending("s1") == ORPHAN
    writer = MirrorWriter(fresh)
    assert writer.adopt() == 2 and fresh.mirror_pending("s1") == HERE
    report = writer.run()
    assert (report.sessions, report.commits, report.left) == (2, 5, 0)
    assert fresh.pending_mirrors() == []
    assert fresh.verify().ok and not fresh.verify().writing


def test_verify_completes_an_orphan_and_clears_its_marker(store: SessionStore) -> None:
    write_session(store, "s1", 2, defer=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _owner(store, "s1", dead.pid)
    report = SessionStore(store.root).verify()  # its open backfills it, as for any crashed writer
    assert report.ok and not report.writing
    assert len(git(store.path_for("s1"), "rev-list", "--all").split()) == 2
    assert store.pending_mirrors() == []


def test_background_writer_and_its_stop(store: SessionStore) -> None:
    for n in range(3):
        write_session(store, f"s{n}", 2, defer=True)
    written: list[frozenset[str]] = []
    writer = MirrorWriter(store, on_written=written.append)
    writer.start()
    writer.add(["s0", "s1", "s2"])
    assert writer.wait(60)
    writer.stop()
    assert store.pending_mirrors() == [] and set().union(*written) == {"s0", "s1", "s2"}


def test_deleting_a_pending_session_drops_its_marker(store: SessionStore) -> None:
    write_session(store, "s1", 1, defer=True)
    store.delete_session("s1")
    assert store.pending_mirrors() == []


def test_a_backlog_batch_is_read_from_memory_as_a_fresh_read_would_see_it(store: SessionStore) -> None:
    write_session(store, "s1", 3, defer=True)
    path = store.path_for("s1")
    assert store._reads.is_open(path, "s1")  # seeded by the batch: no parse of every node file
    store.append_message("s1", "user", "written after the batch", parent_id="a2")  # the first read refreshes
    fresh = SessionStore(store.root)
    assert store.get_nodes("s1") == fresh.get_nodes("s1") and len(store.get_nodes("s1")) == 10
    assert store.get_turns("s1") == fresh.get_turns("s1")
    assert store.get_meta("s1") == fresh.get_meta("s1")


def test_a_deferred_batch_that_fails_midway_still_owes_its_mirror(store: SessionStore) -> None:
    with pytest.raises(RuntimeError):
        with store.batch("s1", defer_mirror=True) as batch:
            user = batch.append("user", "a question", node_id="u0")
            batch.append("assistant", "an answer", parent_id=user.id, node_id="a0")
            raise RuntimeError("the importer broke")
    assert store.owed_mirrors() == ["s1"]
    assert store.write_mirror("s1") == 1 and store.owed_mirrors() == []


def test_a_batch_that_writes_nothing_promises_no_mirror(store: SessionStore) -> None:
    write_session(store, "s1", 1, defer=False)
    with store.batch("s1", defer_mirror=True) as batch:
        batch.append("user", "question 0 about the cache", node_id="u0")  # already stored
    assert store.pending_mirrors() == []
