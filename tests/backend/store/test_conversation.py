from __future__ import annotations

from opmem_tui.backend.model import Node, turn_count
from opmem_tui.backend.store.conversation import display_order, group_turns, turns_from_nodes
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
