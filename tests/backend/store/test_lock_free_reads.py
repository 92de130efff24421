"""Reads take no lock (store/reader.py): they complete while another process holds the session's
lock for the whole read, and a reader racing a writer sees only whole nodes and growing turns."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from opmem_tui.backend.model import turn_count
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn
from .session_lock_holder import hold, release
from .test_data_safety import opmem

HANG_GUARD = 300.0  # seconds: only a read that waits for the lock gets near this; nothing is timed


def _read_everything(store: SessionStore, sid: str) -> dict:
    turns = store.get_turns(sid)
    commits = store.session_commits(sid)
    head = store.head(sid)
    return {
        "meta": store.get_meta(sid).title,
        "turns": [[n.content for n in t.nodes] for t in turns],
        "commits": [t.commit is not None for t in turns],
        "branch": [n.content for n in store.get_branch(sid)],
        "nodes": len(store.get_nodes(sid)),
        "node": store.get_node(sid, head).content if head else None,
        "has": store.has_node(sid, head) if head else None,
        "leaves": store.leaves(sid) == [head],
        "branches": [b.name for b in store.branches(sid)],
        "log": len(commits),
        "at": [[n.content for n in t.nodes] for t in store.turns_at(sid, commits[0].oid)],
        "view": len(store.turn_view(sid, commits[0].oid)),
        "last": store.last_turn(sid).turn_count,
        "problems": store.problems(sid),
        "listed": [m.id for m in store.list_sessions().sessions],
    }


def _read_in_thread(fn) -> object:
    """Run `fn` in a thread; the join's timeout only guards against a hang (the old, locked read)."""
    out: list = []

    def run() -> None:
        try:
            out.append(fn())
        except Exception as exc:  # e.g. SessionLocked: the read took the lock
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), "a read waited for the session lock"
    if isinstance(out[0], Exception):
        raise out[0]
    return out[0]


def test_every_read_completes_while_another_process_holds_the_session_lock(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    writer = SessionStore(root)
    add_turn(writer, "s1", "first", "one", tools=1)
    add_turn(writer, "s1", "second", "two")
    expected = _read_everything(SessionStore(root), "s1")
    warm = SessionStore(root)
    warm.get_turns("s1")
    writer.append_message("s1", "user", "third")  # the warm reader has something new to read
    writer.commit_turn("s1")
    expected = _read_everything(SessionStore(root), "s1")
    assert expected["turns"][-1] == ["third"] and expected["problems"] == []

    holder = hold(root / ".locks" / "s1.lock")
    try:
        # A read that took the lock would wait, then fail at once: lock_timeout is tiny.
        cold = SessionStore(root)
        cold.lock_timeout = warm.lock_timeout = 0.001
        assert _read_in_thread(lambda: _read_everything(cold, "s1")) == expected
        assert _read_in_thread(lambda: _read_everything(warm, "s1")) == expected
        assert holder.poll() is None  # the lock was held for the whole of both reads
    finally:
        if holder.poll() is None:
            release(holder)


def _crashed_writer(root: Path) -> Path:
    """Session s1: one committed turn, then a user message its writer never committed."""
    writer = SessionStore(root)
    add_turn(writer, "s1", "first", "one")
    writer.append_message("s1", "user", "second")  # never committed: its writer goes
    del writer
    gc.collect()
    return root


def test_a_crashed_writers_turn_reads_while_the_lock_is_held_and_is_committed_after(tmp_path: Path) -> None:
    root = _crashed_writer(tmp_path / "sessions")
    holder = hold(root / ".locks" / "s1.lock")
    try:
        reader = SessionStore(root)
        reader.lock_timeout = 0.001
        turns = _read_in_thread(lambda: reader.get_turns("s1"))
        assert [[n.content for n in t.nodes] for t in turns] == [["first", "one"], ["second"]]
        assert turns[1].commit is None  # the lock's holder would commit it; a read does not wait
        assert holder.poll() is None
    finally:
        release(holder)
    # With the lock free, the first read of a fresh store commits it, as opening it to write does.
    assert SessionStore(root).get_turns("s1")[1].commit is not None


def test_a_repair_on_first_read_that_fails_is_reported_and_loses_nothing(tmp_path: Path) -> None:
    root = _crashed_writer(tmp_path / "sessions")
    nodes = sorted(p.read_bytes() for p in (root / "s1" / "history").iterdir())
    lock = root / ".locks" / "s1.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()  # the repair cannot take the session's lock: IsADirectoryError
    reader = SessionStore(root)
    turns = reader.get_turns("s1")
    assert [[n.content for n in t.nodes] for t in turns] == [["first", "one"], ["second"]]
    assert turns[1].commit is None
    problems = reader.problems("s1")
    assert any("s1" in p and "s1.lock" in p and "repair" in p for p in problems), problems
    assert sorted(p.read_bytes() for p in (root / "s1" / "history").iterdir()) == nodes
    lock.rmdir()
    assert SessionStore(root).get_turns("s1")[1].commit is not None  # the next first read repairs it


def test_the_cli_reads_a_session_another_process_is_writing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    writer = SessionStore(home / "sessions")
    add_turn(writer, "s1", "first question", "one")
    (home / "config.toml").write_text("[store]\nlock_timeout_s = 0.001\n")
    holder = hold(home / "sessions" / ".locks" / "s1.lock")
    try:
        shown = opmem(home, "sessions", "show", "s1", timeout=HANG_GUARD)
        assert holder.poll() is None
    finally:
        release(holder)
    assert shown.returncode == 0, shown.stderr
    assert "first question" in shown.stdout


WRITER = textwrap.dedent(
    """
    import sys
    from opmem_tui.backend.store.sessions import SessionStore
    store = SessionStore(sys.argv[1], durable=False)
    for k in range(int(sys.argv[2])):
        user = store.append_message("s1", "user", f"q{k} " + "x" * (k * 97 % 5000))
        reply = store.append_message("s1", "assistant", f"a{k} " + "y" * (k * 89 % 5000), parent_id=user.id)
        store.append_message("s1", "tool", f"t{k}", called_by=reply.id, name="bash")
        store.commit_turn("s1")
    print("done", flush=True)
    """
)


def _check_whole(store: SessionStore, sid: str, seen: list[int]) -> None:
    """Every node whole (its content says its size), every turn whole, the count never smaller."""
    turns = store.get_turns(sid)
    for number, turn in enumerate(turns):
        contents = [n.content for n in turn.nodes]
        k = number
        assert contents[0] == f"q{k} " + "x" * (k * 97 % 5000)
        assert all(c in (f"a{k} " + "y" * (k * 89 % 5000), f"t{k}") for c in contents[1:])
    assert store.problems(sid) == []
    count = turn_count(turns)
    last = SessionStore(store.root).last_turn(sid)  # a cold store: the quick tail read
    assert last.turn_count >= count
    assert not seen or count >= seen[-1]
    seen.extend([count, last.turn_count])


def test_a_reader_racing_a_writer_process_sees_whole_nodes_and_growing_turn_counts(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    turns = 40
    add_turn(SessionStore(root), "s0", "start", "ok")  # the store exists before the race
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(turns)], stdout=subprocess.PIPE, text=True)
    warm = SessionStore(root)
    seen: list[int] = []
    reads_while_writing = 0
    try:
        while writer.poll() is None:
            if (root / "s1" / "meta.json").exists():
                _check_whole(warm, "s1", seen)
                reads_while_writing += 1
    finally:
        assert writer.wait(HANG_GUARD) == 0
    _check_whole(warm, "s1", seen)
    assert seen[-1] == turns and warm.get_meta("s1").turn_count == turns
    assert seen == sorted(seen)
    print(f"reads while the writer wrote: {reads_while_writing}")


def test_a_reader_thread_racing_a_writer_thread_of_the_same_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", durable=False)
    add_turn(store, "s0", "start", "ok")
    turns = 30
    done = threading.Event()

    def write() -> None:
        try:
            for k in range(turns):
                user = store.append_message("s1", "user", f"q{k} " + "x" * (k * 97 % 5000))
                reply = store.append_message("s1", "assistant", f"a{k} " + "y" * (k * 89 % 5000), parent_id=user.id)
                store.append_message("s1", "tool", f"t{k}", called_by=reply.id, name="bash")
                store.commit_turn("s1")
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    seen: list[int] = []
    while not done.is_set():
        if store.exists("s1"):
            _check_whole(store, "s1", seen)
    thread.join(HANG_GUARD)
    _check_whole(store, "s1", seen)
    assert seen[-1] == turns and seen == sorted(seen)
