"""SessionStore.batch: many writes to one session under one lock, as an importer makes them."""

from __future__ import annotations

import gc
import json
import threading
import time

from opmem_tui.backend.store.sessions import SessionStore

from .conftest import git


def test_batch_writes_and_commits_like_single_calls(store: SessionStore) -> None:
    with store.batch("b1") as batch:
        assert not batch.exists()
        user = batch.append("user", "question", node_id="u1", session_meta={"source": "test"})
        reply = batch.append("assistant", "answer", parent_id=user.id, node_id="a1")
        batch.append("tool", "out", called_by=reply.id, name="read", node_id="t1")
        assert batch.has_node("t1") and batch.node_ids() == {"u1", "a1", "t1"} and batch.head == "a1"
        assert batch.commit_turn("a1")
        assert batch.append("user", "again", node_id="u1").content == "question"  # idempotent id
    other = SessionStore(store.root)  # another process's view
    assert [n.id for n in other.get_branch("b1")] == ["u1", "a1", "t1"]
    assert other.get_meta("b1").source == "test"
    assert [c.summary for c in other.session_commits("b1")] == ["turn 1: question"]
    git(store.path_for("b1"), "fsck")
    assert {m.id for m in store.list_sessions().sessions} == {"b1"}  # the listing saw the change


def test_batch_holds_the_session_lock(store: SessionStore) -> None:
    store.append_message("b2", "user", "first", node_id="u1")
    order: list[str] = []

    def writer() -> None:
        store.append_message("b2", "assistant", "from another thread", node_id="x")
        order.append("other")

    with store.batch("b2") as batch:
        thread = threading.Thread(target=writer)
        thread.start()
        time.sleep(0.2)
        batch.append("assistant", "in batch", node_id="a1")
        order.append("batch")
    thread.join(5)
    assert order == ["batch", "other"]


def test_meta_is_written_when_a_batch_ends(store: SessionStore) -> None:
    with store.batch("b3") as batch:
        for k in range(3):
            user = batch.append("user", f"q{k}", node_id=f"u{k}", parent_id=batch.head)
            batch.append("assistant", f"a{k}", parent_id=user.id, node_id=f"a{k}")
            assert batch.commit_turn(f"a{k}")
    meta = json.loads((store.path_for("b3") / "meta.json").read_text())
    assert (meta["turns"], meta["turns_head"], meta["head_id"]) == (3, "a2", "a2")
    assert SessionStore(store.root).get_meta("b3").turn_count == 3


def test_a_backfill_on_open_writes_meta(tmp_path) -> None:
    # A batch defers meta.json to its end; a backfill (which groups its commits too) is not a
    # batch and must leave meta.json saying what it committed.
    root = tmp_path / "sessions"
    writer = SessionStore(root)
    first = writer.append_message("s", "user", "first")
    writer.append_message("s", "assistant", "one", parent_id=first.id)
    writer.commit_turn("s")
    second = writer.append_message("s", "user", "second")
    writer.append_message("s", "assistant", "two", parent_id=second.id)
    del writer  # gone before committing its second turn
    gc.collect()
    SessionStore(root).get_turns("s")  # the open commits the crashed writer's turn
    meta = json.loads((root / "s" / "meta.json").read_text())
    assert meta["turns"] == 2
    assert SessionStore(root).list_sessions().sessions[0].turn_count == 2
