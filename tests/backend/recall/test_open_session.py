from __future__ import annotations

import dataclasses
from pathlib import Path

from opmem_tui.backend.recall.context import Recall, recall_for

from .conftest import ask
from .stores import T0, Built, build_store


def test_overview_lists_turns_with_their_commits(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_open_session", session_id=built.session_id)
    session = reply["session"]
    assert session["id"] == built.session_id
    assert session["title"] == "Add a greeting to the shop"
    assert session["project"] == built.project_id
    assert session["turns"] == 3
    lines = reply["turn_list"]
    assert [t["turn"] for t in lines] == [1, 2, 3]
    assert [t["user"] for t in lines] == ["Add a greeting module", "Run the tests", "Thanks"]
    assert lines[0]["project_commits"] == [built.agent_commit[:12]]
    assert "project_commits" not in lines[1]
    assert all(len(t["commit"]) == 12 for t in lines)


def test_turn_shows_messages_tool_calls_and_results_in_order(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_open_session", session_id=built.session_id, turn=1)
    assert reply["turn"] == 1
    assert [m["id"] for m in reply["messages"]] == ["u1", "a1", "t1", "a1b"]
    tool = reply["messages"][2]
    assert tool["tool"] == "Write"
    assert tool["call_of"] == "a1"
    assert tool["input"]["file_path"].endswith("greet.py")
    assert tool["result"] == "File written"
    assert reply["project_commits"] == [
        {"project": built.project_id, "commit": built.agent_commit[:12], "confidence": "high"}
    ]


def test_pointer_form_is_accepted(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_open_session", session_id=f"session:{built.session_id}", turn=3)
    assert [m["text"] for m in reply["messages"]] == ["Thanks", "You're welcome."]


def test_long_output_is_cut_and_the_rest_can_be_read(tmp_path: Path) -> None:
    output = "".join(f"line {i} of the test log\n" for i in range(3000))
    built = build_store(tmp_path, long_output=output)
    recall = recall_for(built.home, cwd=built.workdir)
    reply = ask(recall, "memory_open_session", session_id=built.session_id, turn=2)
    tool = next(m for m in reply["messages"] if m["id"] == "t2")
    assert tool["result"].startswith("line 0 of the test log\n")
    last = tool["result"].rsplit("\n", 1)[1]
    shown = tool["result"].count("\n")
    assert last == f"... (+{3000 - shown} more lines)"
    pointer = tool["more"]
    got = output[: pointer["offset"]]
    assert tool["result"].startswith(got)
    calls = 0
    offset = pointer["offset"]
    while offset is not None:
        part = ask(recall, "memory_open_session", session_id=built.session_id, node="t2", offset=offset)
        assert part["offset"] == offset and part["length"] == len(output)
        got += part["text"]
        offset = part["next_offset"]
        calls += 1
    assert got == output
    assert calls > 2  # paged, not one huge reply


def test_tool_input_can_be_read_whole(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_open_session", session_id=built.session_id, node="t1", part="input")
    assert '"file_path"' in reply["text"] and reply["next_offset"] is None


def test_unknown_session_suggests_close_ids(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_open_session", session_id="cc-shop-sesion")
    assert reply["error"]["code"] == "unknown_session"
    assert reply["error"]["did_you_mean"][0] == built.session_id


def test_a_unique_prefix_or_a_title_opens_the_session_as_the_cli_does(recall: Recall, built: Built) -> None:
    """One way to name a session everywhere (backend/naming): `opmem sessions show` and
    `opmem export` take a unique id prefix, so does the tool; a title works too."""
    prefix = ask(recall, "memory_open_session", session_id="codex")
    assert prefix["session"]["id"] == built.other_id
    title = recall.home.sessions.get_meta(built.session_id).display_title
    assert ask(recall, "memory_open_session", session_id=title)["session"]["id"] == built.session_id
    both = ask(recall, "memory_open_session", session_id="c")  # cc-... and codex-...
    assert both["error"]["code"] == "unknown_session"
    assert set(both["error"]["did_you_mean"]) == {built.session_id, built.other_id}


def test_unsafe_session_ids_are_unknown_not_errors(recall: Recall) -> None:
    for bad in ("../etc", "a/b", ".", "x" * 200, "a\x00b"):
        reply = ask(recall, "memory_open_session", session_id=bad)
        assert reply["error"]["code"] == "unknown_session"


def test_unknown_turn_node_and_bad_offset(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_open_session", session_id=built.session_id, turn=9)
    assert reply["error"]["code"] == "unknown_turn"
    assert "1..3" in reply["error"]["message"]
    reply = ask(recall, "memory_open_session", session_id=built.session_id, node="nope")
    assert reply["error"]["code"] == "unknown_node"
    reply = ask(recall, "memory_open_session", session_id=built.session_id, node="t1", offset=10_000)
    assert reply["error"]["code"] == "bad_argument"


def test_branches_by_name_and_by_head(recall: Recall, built: Built) -> None:
    store = built.home.sessions
    retry = store.append_message(
        built.session_id, "user", "Run the tests again, verbosely", parent_id="a1b", created_at=T0 + 200
    )
    store.append_message(built.session_id, "assistant", "Ran them verbosely.", created_at=T0 + 201)
    store.commit_turn(built.session_id)
    store.flush()
    overview = ask(recall, "memory_open_session", session_id=built.session_id)
    names = {b["name"] for b in overview["session"]["branches"]}
    assert len(names) == 2
    other = next(b for b in overview["session"]["branches"] if b["name"] != overview["session"]["branch"])
    by_name = ask(recall, "memory_open_session", session_id=built.session_id, branch=other["name"], turn=2)
    current = ask(recall, "memory_open_session", session_id=built.session_id, turn=2)
    texts = {by_name["messages"][0]["text"], current["messages"][0]["text"]}
    assert texts == {"Run the tests", retry.content}
    by_head = ask(recall, "memory_open_session", session_id=built.session_id, branch=other["head"], turn=2)
    assert by_head["messages"] == by_name["messages"]
    wrong = ask(recall, "memory_open_session", session_id=built.session_id, branch="mian")
    assert wrong["error"]["code"] == "unknown_branch"
    assert "main" in wrong["error"]["did_you_mean"]


def test_a_turn_with_many_tool_calls_is_paged(tmp_path: Path) -> None:
    built = build_store(tmp_path)
    store = built.home.sessions
    sid = built.other_id
    store.append_message(sid, "user", "Look at every file", created_at=T0 + 2000)
    caller = store.append_message(sid, "assistant", "Reading them.", created_at=T0 + 2001)
    for i in range(200):
        store.append_message(
            sid,
            "tool",
            f"contents of file {i}\n" * 5,
            called_by=caller.id,
            name="Read",
            input={"file_path": f"/src/f{i}.py"},
            created_at=T0 + 2002 + i,
            node_id=f"read{i:03d}",
        )
    store.commit_turn(sid)
    store.flush()
    recall = dataclasses.replace(recall_for(built.home, cwd=tmp_path), max_reply_bytes=4096)
    first = ask(recall, "memory_open_session", session_id=sid, turn=2)
    assert first["page"] == 0 and first["pages"] > 3
    seen = [m["id"] for m in first["messages"]]
    page = first["next_page"]
    while page is not None:
        reply = ask(recall, "memory_open_session", session_id=sid, turn=2, page=page)
        assert reply["pages"] == first["pages"]
        seen += [m["id"] for m in reply["messages"]]
        page = reply["next_page"]
    assert seen[:2] == [n.id for n in store.get_turns(sid)[1].nodes][:2]
    assert sorted(s for s in seen if s.startswith("read")) == [f"read{i:03d}" for i in range(200)]
    assert len(seen) == 202
    past = ask(recall, "memory_open_session", session_id=sid, turn=2, page=first["pages"] + 5)
    assert past["messages"] == [] and past["next_page"] is None
