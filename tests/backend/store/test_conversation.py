from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.model import Node, turn_count
from opmem_tui.backend.store.conversation import Conversation, display_order, group_turns, turns_from_nodes
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn


def node(seq: int, role: str, content: str = "", called_by: str | None = None, parent: str | None = None) -> Node:
    return Node(
        id=f"n{seq}",
        seq=seq,
        role=role,
        content=content or f"{role} {seq}",
        parent_id=parent if parent is not None else called_by,
        called_by=called_by,
    )


def test_turns_group_at_user_messages_with_the_preface_in_turn_one() -> None:
    nodes = [
        node(0, "system", "setup"),
        node(1, "user", "q1"),
        node(2, "assistant", "a1"),
        node(3, "tool", "r", called_by="n2"),
        node(4, "user", "q2"),
        node(5, "assistant", "a2"),
    ]
    turns = turns_from_nodes(nodes)
    assert [[n.id for n in t.nodes] for t in turns] == [["n0", "n1", "n2", "n3"], ["n4", "n5"]]
    assert [t.number for t in turns] == [1, 2] and turn_count(turns) == 2


def test_tool_results_sit_under_their_caller_whenever_they_were_written() -> None:
    # a2's call result (n6) and a nested call (n7, called by the tool n3) arrive late
    nodes = [
        node(1, "user", "q"),
        node(2, "assistant", "a1"),
        node(3, "tool", "t1", called_by="n2"),
        node(4, "assistant", "a2", parent="n2"),
        node(5, "tool", "t2", called_by="n4"),
        node(6, "tool", "t1 again", called_by="n2"),
        node(7, "tool", "nested", called_by="n3"),
    ]
    assert [n.id for n in display_order(reversed(nodes))] == ["n1", "n2", "n3", "n7", "n6", "n4", "n5"]
    assert [[n.id for n in g] for g in group_turns(nodes)] == [["n1", "n2", "n3", "n7", "n6", "n4", "n5"]]


def test_a_branch_without_a_user_node_is_turn_zero() -> None:
    turns = turns_from_nodes([node(0, "system", "You are helpful.")])
    assert [t.number for t in turns] == [0] and turn_count(turns) == 0
    assert turns_from_nodes([]) == []


def test_store_turns_and_commit_view_agree(tmp_path) -> None:
    store = SessionStore(tmp_path / "sessions")
    add_turn(store, "s1", "one", "1", tools=2)
    add_turn(store, "s1", "two", "2", tools=1)
    live = store.get_turns("s1")
    at_tip = store.turns_at("s1", live[-1].commit)
    assert [[n.id for n in t.nodes] for t in at_tip] == [[n.id for n in t.nodes] for t in live]
    first = store.turns_at("s1", live[0].commit)
    assert len(first) == 1 and [n.content for n in first[0].nodes][:2] == ["one", "1"]


@st.composite
def _conversations(draw: st.DrawFn) -> tuple[Conversation, dict[str, str]]:
    """Random graphs: branches, tool nodes (nested, late, some with the user role), system prefaces,
    duplicate seqs, parents outside the session; and commits for some of the nodes. No parent cycle:
    recover_head (is_ancestor) does not end on one."""
    graph = Conversation("session test")
    ids = [f"n{i}" for i in range(draw(st.integers(0, 14)))]
    for i, nid in enumerate(ids):
        role = draw(st.sampled_from(["user", "assistant", "tool", "system"]))
        caller = draw(st.sampled_from(ids[:i])) if i and draw(st.booleans()) else None  # never a calling cycle
        parent = draw(st.sampled_from([*ids[:i], "gone"])) if i and draw(st.integers(0, 9)) else None
        seq = draw(st.integers(0, 20)) if draw(st.integers(0, 9)) == 0 else i
        graph.add(Node(nid, seq, role, parent_id=parent, called_by=caller))
    graph.recover_head(draw(st.none() | st.sampled_from(ids)) if ids else None, -1)
    commits = {nid: f"c-{nid}" for nid in ids if draw(st.booleans())}
    return graph, commits


@settings(max_examples=400, deadline=None)
@given(_conversations())
def test_turn_starts_are_what_the_turns_say_of_their_user_nodes(case: tuple[Conversation, dict[str, str]]) -> None:
    graph, commits = case
    for head in [None, *graph.leaves()]:
        turns = graph.turns(head, commits)
        expected: dict[str, tuple[int, str | None]] = {}
        for turn in turns:
            if turn.user is not None:
                expected.setdefault(turn.user.id, (turn.number, turn.commit))
        assert graph.turn_starts(head, commits) == expected


def test_store_turn_starts_are_those_of_get_turns(tmp_path) -> None:
    store = SessionStore(tmp_path / "sessions")
    add_turn(store, "s1", "one", "1", tools=2)
    add_turn(store, "s1", "two", "2", tools=1)
    turns = store.get_turns("s1")
    starts = store.turn_starts("s1")
    assert starts == {t.user.id: (t.number, t.commit) for t in turns if t.user is not None}
    assert len(starts) == 2 and all(commit for _number, commit in starts.values())


def test_a_snapshot_is_what_get_meta_get_nodes_and_turn_starts_read(tmp_path) -> None:
    store = SessionStore(tmp_path / "sessions")
    add_turn(store, "s1", "one", "1", tools=2)
    add_turn(store, "s1", "two", "2", tools=1)
    snap = store.snapshot("s1")
    assert snap.meta == store.get_meta("s1") and list(snap.nodes) == store.get_nodes("s1")
    assert snap.turn_starts == store.turn_starts("s1") and len(snap.turn_starts) == 2
