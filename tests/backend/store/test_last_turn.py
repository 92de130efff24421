"""SessionStore.last_turn: the quick cold read (tail.py) must say exactly what a full open says."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmem_tui.backend.model import LastTurn, turn_count
from opmem_tui.backend.store.sessions import SessionStore
from opmem_tui.backend.store.tail import read_last_turn

from .conftest import add_turn


def full_open(root: Path, sid: str) -> LastTurn:
    store = SessionStore(root)
    turns = store.get_turns(sid)
    return LastTurn(store.get_meta(sid), turns[-1] if turns else None, turn_count(turns))


def quick(root: Path, sid: str) -> LastTurn | None:
    return read_last_turn(root / sid, sid, lambda: None)


def test_a_linear_session_is_read_quickly_and_exactly(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = SessionStore(root)
    for k in range(5):
        add_turn(store, "s1", f"q{k}", f"a{k}", tools=k % 3)
    del store
    gc.collect()
    fast = quick(root, "s1")
    assert fast is not None and fast.turn is not None
    assert fast == full_open(root, "s1")
    assert fast.turn_count == 5 and fast.turn.number == 5 and fast.turn.commit is not None
    assert [n.content for n in fast.turn.nodes][:2] == ["q4", "a4"]
    assert SessionStore(root).last_turn("s1") == fast


def test_it_reads_only_the_tail(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = SessionStore(root, durable=False)
    for k in range(30):
        add_turn(store, "s1", f"q{k}", f"a{k}")
    del store
    gc.collect()
    # Break an old node file: a full open reports it, the quick read never looks at it.
    old = sorted((root / "s1" / "history").iterdir())[4]
    old.write_text("{broken")
    fast = quick(root, "s1")
    assert fast is not None and fast.turn_count == 30 and fast.turn.nodes[0].content == "q29"


def test_old_sessions_and_uncertain_cases_fall_back_to_a_full_open(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = SessionStore(root)
    add_turn(store, "s1", "q", "a")
    meta = root / "s1" / "meta.json"
    data = json.loads(meta.read_text())
    del data["turns_head"]  # written before turns_head existed
    meta.write_text(json.dumps(data))
    assert quick(root, "s1") is None
    assert SessionStore(root).last_turn("s1") == full_open(root, "s1")


def test_a_crashed_writers_turn_is_left_to_the_full_open_that_commits_it(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    writer = SessionStore(root)
    add_turn(writer, "s1", "q0", "a0")
    writer.append_message("s1", "user", "q1")
    assert read_last_turn(root / "s1", "s1", lambda: 2) is not None  # a live writer holds seq 2 on
    assert read_last_turn(root / "s1", "s1", lambda: None) is None
    del writer
    gc.collect()
    last = SessionStore(root).last_turn("s1")
    assert last.turn_count == 2 and last.turn.commit is not None


OPS = st.lists(
    st.tuples(
        st.sampled_from(["turn", "turn", "turn", "tools", "fork", "switch", "preface", "open", "late-tool"]),
        st.integers(0, 1000),
    ),
    min_size=1,
    max_size=16,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_the_quick_read_agrees_with_a_full_open(tmp_path_factory, ops) -> None:
    root = tmp_path_factory.mktemp("sessions")
    store = SessionStore(root, durable=False)
    users: list = []
    replies: list = []
    for op, pick in ops:
        if op == "preface":
            store.append_message("s", "system", f"preface {pick}")
            store.commit_turn("s")
        elif op == "fork" and users:
            parent = users[pick % len(users)].parent_id
            users.append(store.append_message("s", "user", f"retry {pick}", parent_id=parent))
            replies.append(store.append_message("s", "assistant", f"again {pick}"))
            store.commit_turn("s")
        elif op == "switch" and replies:
            store.switch_head("s", replies[pick % len(replies)].id)
        elif op == "open":  # a turn whose writer is gone before it committed
            users.append(store.append_message("s", "user", f"open {pick}"))
        elif op == "late-tool" and replies:
            store.append_message("s", "tool", f"late {pick}", called_by=replies[pick % len(replies)].id, name="bash")
            store.commit_turn("s")
        else:
            user, reply = add_turn(store, "s", f"q {pick}", f"a {pick}", tools=3 if op == "tools" else 0)
            users.append(user)
            replies.append(reply)
    del store
    gc.collect()
    fast = quick(root, "s")
    expected = full_open(root, "s")
    if fast is not None:
        assert fast == expected
    assert SessionStore(root).last_turn("s") == expected


def test_a_preface_belongs_to_the_first_turn_in_the_quick_read_too(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = SessionStore(root)
    store.append_message("s", "system", "preface one")
    store.commit_turn("s")
    store.append_message("s", "system", "preface two")
    store.commit_turn("s")
    add_turn(store, "s", "q", "a")
    del store
    gc.collect()
    fast = quick(root, "s")
    assert fast is not None
    assert [n.content for n in fast.turn.nodes] == ["preface one", "preface two", "q", "a"]
    assert fast == full_open(root, "s")
