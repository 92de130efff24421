"""Codex rollouts: the real 0.58 sample, the schema catalog, and synthetic files for each rule."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import SOURCES, codex_handlers, codex_reader, codex_records
from opmem_tui.backend.importers.base import ImportFormatError, ImportReport
from opmem_tui.backend.importers.codex import CodexParser

from .dag_helpers import assert_well_formed, branch, by_id, fixture, leaves, parse_from, tools_of, turn_count

codex = SOURCES["codex"]

REAL = "transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
CATALOG = "transcripts/catalog/agent-sessions-codex-small.jsonl"


# ---------------------------------------------------------------------------------------------
# synthetic rollouts


class Rollout:
    """Writes rollout lines with increasing timestamps (one second apart)."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:
        self.lines: list[str] = []
        self.clock = start

    def add(self, kind: str, payload: dict, *, at: float | None = None) -> Rollout:
        self.clock = at if at is not None else self.clock + 1
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock)) + f".{int(self.clock * 1000) % 1000:03d}Z"
        self.lines.append(json.dumps({"timestamp": stamp, "type": kind, "payload": payload}))
        return self

    def meta(self, native: str = "0199aaaa-0000-7000-8000-000000000001", **fields) -> Rollout:
        payload = {"id": native, "cwd": "/repo", "originator": "codex_cli_rs", "cli_version": "0.60.0", "source": "cli"}
        payload.update(fields)
        return self.add("session_meta", payload)

    def item(self, **payload) -> Rollout:
        return self.add("response_item", payload)

    def event(self, **payload) -> Rollout:
        return self.add("event_msg", payload)

    def prompt(self, text: str) -> Rollout:
        self.item(type="message", role="user", content=[{"type": "input_text", "text": text}])
        return self.event(type="user_message", message=text, images=[])

    def reply(self, text: str) -> Rollout:
        self.item(type="message", role="assistant", content=[{"type": "output_text", "text": text}])
        return self.event(type="agent_message", message=text)

    def call(self, call_id: str, command: str = "ls", output: str | None = "a.txt") -> Rollout:
        self.item(type="reasoning", summary=[{"type": "summary_text", "text": f"**run {command}**"}], content=None)
        self.item(
            type="function_call",
            name="shell",
            arguments=json.dumps({"command": ["bash", "-lc", command]}),
            call_id=call_id,
        )
        if output is not None:
            self.item(type="function_call_output", call_id=call_id, output=output)
        return self

    def turn(self, text: str, answer: str, calls: int = 0, tag: str = "") -> Rollout:
        self.prompt(text)
        self.add("turn_context", {"cwd": "/repo", "model": "gpt-5-codex"})
        for n in range(calls):
            self.call(f"call_{tag or text[:4]}_{n}")
        self.reply(answer)
        return self.event(type="task_complete", last_agent_message=answer)

    def write(self, path: Path) -> Path:
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path


def parse(path: Path, start_offset: int = 0, **kwargs) -> tuple[list, ImportReport]:
    report = ImportReport()
    kwargs.setdefault("final", True)
    if start_offset:
        return parse_from(codex, path, start_offset, final=kwargs["final"]), report
    return codex.parse_file(path, report, **kwargs), report


def only(path: Path, earlier=(), **kwargs):
    sessions, report = parse(path, **kwargs)
    assert len(sessions) == 1, report.warnings
    assert_well_formed(sessions[0], earlier)
    return sessions[0], report


# ---------------------------------------------------------------------------------------------
# the real sample (Codex CLI 0.58.0)


def test_real_rollout_shape():
    session, report = only(fixture(REAL))
    assert report.warnings == [] and report.unknown_records == {}
    assert session.native_id == "019a93b9-f380-7600-98ff-940e6b99603c"
    assert (session.kind, session.parent_native_id) == ("trunk", None)
    assert session.cwd == "/home/user/projects/temp/chatbot-ui"
    assert session.git_branch == "main"
    assert session.model == "gpt-5.1-codex"  # from the 40 turn_context lines, not session_meta

    roles = Counter(n.role for n in session.nodes)
    # line 2 (<environment_context>) is injected context: a system node, not a prompt.
    # lines 3 and 4 are the one typed prompt twice (response_item + event_msg): one user node.
    # 39 model responses, each ending in one function call: 39 assistant nodes, 39 tool nodes.
    assert roles == {"system": 1, "user": 1, "assistant": 39, "tool": 39}
    system, user = session.nodes[0], session.nodes[1]
    assert system.content.startswith("<environment_context>") and system.metadata["injected"]
    assert user.content.startswith("finish up the users work") and user.parent_id == system.id

    # One linear branch, one turn: system -> user -> 39 assistants, no fork anywhere.
    chain = branch(session)
    assert [n.role for n in chain] == ["system", "user"] + ["assistant"] * 39
    assert leaves(session) == {session.head}
    assert turn_count(session) == 1

    # Every call is paired with its output by call_id: 37 shell + 2 update_plan.
    tools = [n for n in session.nodes if n.role == "tool"]
    assert Counter(t.name for t in tools) == {"shell": 37, "update_plan": 2}
    for tool in tools:
        assert tool.id.startswith("call_") and tool.metadata["call_id"] == tool.id
        # An output arrived for each: for shell, 0.58 wraps it in {"output", "metadata": {exit_code}}.
        assert "status" not in tool.metadata
        assert isinstance(tool.metadata["exit_code"], int) if tool.name == "shell" else tool.content == "Plan updated"
        assert (isinstance(tool.input, dict) and "command" in tool.input) or "plan" in tool.input
    # One search (line 234, `rg -n "OLLAMA"`) found nothing: exit code 1, empty output.
    assert [t.metadata["line"] for t in tools if not t.content] == [234]
    assistants = [n for n in chain if n.role == "assistant"]
    assert all(len(tools_of(session, a.id)) == 1 for a in assistants)

    # Reasoning goes to assistant metadata. 38 reasoning items: one has an empty summary (line 198)
    # and the call at line 246 has none at all, so 37 assistants carry reasoning text.
    with_reasoning = [a for a in assistants if a.metadata.get("reasoning")]
    assert len(with_reasoning) == 37
    assert {a.metadata["line"] for a in assistants} - {a.metadata["line"] for a in with_reasoning} == {198, 246}
    # token_count events (79, each repeated once) are kept once per model response.
    assert all("token_usage" in a.metadata for a in assistants)
    totals = [a.metadata["token_usage"]["total_token_usage"]["total_tokens"] for a in assistants]
    assert totals == sorted(totals) and len(set(totals)) == 39

    # ghost_snapshot (the undo commit) is kept on the prompt it belongs to.
    assert user.metadata["ghost_commit"] == "a01966ef5b7bfb4af9f1a34be1a3c85da2bb0c13"
    # No final answer: the session ends on a tool result; no assistant node has text.
    assert all(a.content == "" for a in assistants)
    assert session.nodes[-1].role == "tool" and session.head == assistants[-1].id


def test_real_rollout_incremental_equals_whole(tmp_path: Path):
    """Reading a growing file in pieces (live) yields exactly the nodes of one whole read."""
    data = fixture(REAL).read_bytes()
    whole, _ = only(fixture(REAL))
    lines = data.splitlines(keepends=True)
    copy = tmp_path / fixture(REAL).name  # source ids name the file
    seen: dict[str, object] = {}
    offset = 0
    for cut in (5, 6, 11, 12, 60, 61, 150, 200, 246, 247, 279):
        copy.write_bytes(b"".join(lines[:cut]) + lines[cut][:7] if cut < len(lines) else data)  # plus a torn line
        sessions, report = parse(copy, start_offset=offset, final=cut == len(lines))
        assert report.warnings == []
        for session in sessions:
            for node in session.nodes:
                assert node.id not in seen, f"{node.id} returned twice"
                seen[node.id] = node
            offset = session.extra["end_offset"]
    assert offset == len(data)
    assert seen == by_id(whole)


def test_catalog_every_record_type_parses():
    sessions, report = parse(fixture(CATALOG))
    assert len(sessions) == 1
    assert not [w for w in report.warnings if "unexpected" in w]
    assert report.warnings == [] and report.unknown_records == {}
    session = sessions[0]
    assert_well_formed(session)
    roles = Counter(n.role for n in session.nodes)
    assert roles["user"] >= 1 and roles["tool"] >= 5
    # custom_tool_call output arrives after other records (line 21): still paired with call-1.
    call1 = by_id(session)["call-1"]
    assert call1.name == "shell" and call1.content == "a.txt\nb.txt\n"
    assert by_id(session)["call-2"].content == "a.txt\n"
    assert "[trimmed for fixture]" in session.extra["children"]


# ---------------------------------------------------------------------------------------------
# synthetic: turns, tools, dedup, injected context


def test_prompt_and_reply_copies_are_merged(tmp_path: Path):
    r = Rollout().meta().turn("fix the bug", "Fixed.", calls=2).turn("thanks", "You're welcome.")
    session, report = only(r.write(tmp_path / "a.jsonl"))
    assert report.warnings == []
    chain = branch(session)
    assert [n.role for n in chain] == ["user", "assistant", "assistant", "assistant", "user", "assistant"]
    assert [n.content for n in chain if n.role == "user"] == ["fix the bug", "thanks"]
    assert chain[3].content == "Fixed." and chain[-1].content == "You're welcome."
    assert [n.name for n in chain if n.role == "assistant"] == ["gpt-5-codex"] * 4
    assert turn_count(session) == 2
    assert [len(tools_of(session, n.id)) for n in chain] == [0, 1, 1, 0, 0, 0]


def test_event_first_ordering_of_newer_builds(tmp_path: Path):
    """Newer builds write user_message before task_started and the response item, usage after."""
    r = Rollout().meta()
    r.event(type="user_message", message="list files", images=[], local_images=[])
    r.event(type="task_started", turn_id="t-1")
    r.item(type="message", role="developer", content=[{"type": "input_text", "text": "<permissions instructions>x"}])
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "list files"}])
    r.item(type="reasoning", summary=[{"type": "summary_text", "text": "**Listing**"}], encrypted_content="zz")
    r.event(type="agent_reasoning", text="**Listing**")
    r.item(type="custom_tool_call", call_id="c1", name="apply_patch", input="*** Begin Patch")
    r.item(type="local_shell_call", call_id="c2", status="completed", action={"type": "exec", "command": ["ls"]})
    r.item(type="web_search_call", status="completed", action={"type": "search", "query": "codex"})
    r.item(type="function_call_output", call_id="c2", output="a\nb\n")
    r.item(type="custom_tool_call_output", call_id="c1", output=[{"type": "input_text", "text": "Done!"}])
    r.event(type="exec_command_end", call_id="c2", exit_code=0)
    r.event(
        type="token_count", info={"total_token_usage": {"total_tokens": 10}, "last_token_usage": {"total_tokens": 10}}
    )
    r.item(
        type="message", role="assistant", phase="final_answer", content=[{"type": "output_text", "text": "Two files."}]
    )
    r.event(type="agent_message", message="Two files.")
    r.event(
        type="token_count", info={"total_token_usage": {"total_tokens": 30}, "last_token_usage": {"total_tokens": 20}}
    )
    r.event(type="task_complete", turn_id="t-1", duration_ms=1500)
    r.event(type="brand_new_event")
    r.item(type="brand_new_item")
    r.add("brand_new_line", {})
    session, report = only(r.write(tmp_path / "b.jsonl"))
    assert report.unknown_records == {
        "codex:event_msg:brand_new_event": 1,
        "codex:response_item:brand_new_item": 1,
        "codex:brand_new_line": 1,
    }
    chain = branch(session)
    assert [n.role for n in chain] == ["user", "system", "assistant", "assistant"]
    user, developer, first, second = chain
    assert user.content == "list files" and user.metadata["turn_id"] == "t-1"
    assert developer.metadata["injected"] and developer.metadata["codex_role"] == "developer"
    assert first.metadata["reasoning"] == ["**Listing**"]  # item and event copy kept once
    assert first.metadata["token_usage"]["last_token_usage"] == {"total_tokens": 10}
    tools = {t.id: t for t in tools_of(session, first.id)}
    assert (
        tools["c1"].name == "apply_patch" and tools["c1"].content == "Done!" and tools["c1"].input == "*** Begin Patch"
    )
    assert tools["c2"].name == "local_shell" and tools["c2"].content == "a\nb\n"
    (search,) = [t for t in tools.values() if t.name == "web_search"]
    assert search.content == "codex"
    assert second.content == "Two files." and second.metadata["phase"] == "final_answer"
    assert second.metadata["token_usage"]["last_token_usage"] == {"total_tokens": 20}
    assert second.metadata["duration_ms"] == 1500


@pytest.mark.parametrize(
    "text",
    [
        "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>",
        "<user_instructions>\nUse tabs.\n</user_instructions>",
        "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nBe brief.\n</INSTRUCTIONS>",
        "<skill>\n<name>x</name>\n</skill>",
    ],
)
def test_injected_context_is_system_not_a_turn(tmp_path: Path, text: str):
    r = Rollout().meta()
    r.item(type="message", role="user", content=[{"type": "input_text", "text": text}])
    r.turn("real prompt", "ok")
    session, _ = only(r.write(tmp_path / "c.jsonl"))
    chain = branch(session)
    assert [n.role for n in chain] == ["system", "user", "assistant"]
    assert chain[0].content == text and chain[0].metadata["injected"]
    assert turn_count(session) == 1


def test_injected_user_message_event_kinds(tmp_path: Path):
    """0.3x builds tagged injected events with kind; the response item copy is merged into it."""
    r = Rollout().meta()
    r.event(type="user_message", message="AGENTS.md says hi", kind="user_instructions")
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "AGENTS.md says hi"}])
    r.turn("go", "went")
    session, _ = only(r.write(tmp_path / "d.jsonl"))
    assert [n.role for n in branch(session)] == ["system", "user", "assistant"]


def desktop_rollout() -> Rollout:
    """Newer Codex Desktop builds: injected context as plain user items the prefix list does not know."""
    r = Rollout().meta(originator="Codex Desktop")
    r.item(type="message", role="developer", content=[{"type": "input_text", "text": "You are Codex."}])
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "Repository rules:\n- be brief"}])
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "cwd: /repo\nshell: zsh"}])
    r.event(type="user_message", message="fix the bug", images=[])
    r.event(type="task_started", turn_id="t-1")
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "fix the bug"}])
    r.call("c1").reply("Fixed.").event(type="task_complete")
    # Item-first ordering (as 0.58 wrote it), with unknown context before the second prompt.
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "Context update: branch main"}])
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "now add a test"}])
    r.event(type="user_message", message="now add a test", images=[])
    r.reply("Added.").event(type="task_complete")
    return r


def test_unmatched_user_items_are_context_when_the_rollout_has_user_events(tmp_path: Path):
    session, report = only(desktop_rollout().write(tmp_path / "desktop.jsonl"))
    assert report.warnings == []
    chain = branch(session)
    assert [n.content for n in chain if n.role == "user"] == ["fix the bug", "now add a test"]
    context = [n for n in chain if n.role == "system"]
    assert [n.content for n in context] == [
        "You are Codex.",
        "Repository rules:\n- be brief",
        "cwd: /repo\nshell: zsh",
        "Context update: branch main",
    ]
    assert all(n.metadata["injected"] for n in context)
    assert turn_count(session) == 2
    first = next(n for n in chain if n.role == "user")
    assert first.metadata["turn_id"] == "t-1"


def test_unmatched_user_items_are_never_emitted_as_prompts_while_live():
    parser = codex.open_parser("rollout-desktop.jsonl", ImportReport())
    roles: dict[str, str] = {}
    for line in desktop_rollout().lines:
        parser.feed_line(line + "\n")
        for idle in (False, True):
            for session in parser.take(final=False, idle=idle):
                roles.update({n.content: n.role for n in session.nodes})
    roles.update({n.content: n.role for s in parser.take(final=True) for n in s.nodes})
    assert [c for c, role in roles.items() if role == "user"] == ["fix the bug", "now add a test"]
    assert roles["Repository rules:\n- be brief"] == roles["Context update: branch main"] == "system"


def test_user_items_are_prompts_in_rollouts_without_user_events(tmp_path: Path):
    """The oldest builds wrote no user_message events: a user item is the prompt."""
    r = Rollout().meta()
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "hello"}])
    r.reply("hi").event(type="task_complete")
    r.item(type="message", role="user", content=[{"type": "input_text", "text": "bye"}])
    session, _ = only(r.write(tmp_path / "old.jsonl"))
    assert [(n.role, n.content) for n in branch(session)] == [("user", "hello"), ("assistant", "hi"), ("user", "bye")]


def test_compacted_becomes_a_system_node(tmp_path: Path):
    r = Rollout().meta().turn("one", "1")
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary of one"}]}]
    r.add("compacted", {"message": "", "replacement_history": history})
    r.event(type="context_compacted")
    r.turn("two", "2")
    session, report = only(r.write(tmp_path / "e.jsonl"))
    assert report.unknown_records == {}
    chain = branch(session)
    assert [n.role for n in chain] == ["user", "assistant", "system", "user", "assistant"]
    assert chain[2].content == "[user] summary of one" and chain[2].metadata["compacted"]
    assert chain[2].metadata["replacement_items"] == 1


def test_legacy_rollout_without_envelope(tmp_path: Path):
    path = tmp_path / "rollout-2025-05-01T10-00-00-0196aaaa-0000-7000-8000-000000000009.jsonl"
    lines = [
        {"id": "0196aaaa-0000-7000-8000-000000000009", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": '{"output":"x","metadata":{"exit_code":1}}'},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    session, report = only(path)
    assert report.warnings == []
    assert session.native_id == "0196aaaa-0000-7000-8000-000000000009"
    chain = branch(session)
    assert [n.content for n in chain] == ["hello", "", "done"]
    (tool,) = tools_of(session, chain[1].id)
    assert (tool.content, tool.metadata["exit_code"]) == ("x", 1)


# ---------------------------------------------------------------------------------------------
# synthetic: rollbacks, forks, subagents


def test_rollback_leaves_an_abandoned_branch(tmp_path: Path):
    r = Rollout().meta().turn("first", "1").turn("second", "2", calls=1).turn("third", "3")
    r.event(type="thread_rolled_back", num_turns=2)
    r.turn("second, edited", "2b")
    session, report = only(r.write(tmp_path / "f.jsonl"))
    assert report.warnings == []
    nodes = by_id(session)
    chain = branch(session)
    assert [n.content for n in chain if n.role == "user"] == ["first", "second, edited"]
    edited = next(n for n in chain if n.content == "second, edited")
    assert edited.metadata["after_rollback"] == 2
    first_reply = next(n for n in chain if n.content == "1")
    assert edited.parent_id == first_reply.id  # forks from before the dropped turns
    # The dropped turns stay: a second leaf whose branch has all three original prompts.
    (old_leaf,) = leaves(session) - {session.head}
    assert [n.content for n in branch(session, old_leaf) if n.role == "user"] == ["first", "second", "third"]
    assert nodes[old_leaf].content == "3"
    assert session.extra["rollbacks"][0]["num_turns"] == 2


def test_rollback_at_the_end_moves_the_head_back(tmp_path: Path):
    r = Rollout().meta().turn("first", "1").turn("second", "2")
    r.event(type="thread_rolled_back", num_turns=1)
    session, _ = only(r.write(tmp_path / "g.jsonl"))
    assert by_id(session)[session.head].content == "1"
    assert turn_count(session) == 1 and len(leaves(session)) == 1


def test_rollback_of_more_turns_than_exist(tmp_path: Path):
    r = Rollout().meta()
    r.item(
        type="message",
        role="user",
        content=[{"type": "input_text", "text": "<environment_context>x</environment_context>"}],
    )
    r.turn("first", "1").event(type="thread_rolled_back", num_turns=5).turn("again", "A")
    session, _ = only(r.write(tmp_path / "h.jsonl"))
    chain = branch(session)
    assert [n.role for n in chain] == ["system", "user", "assistant"] and chain[1].content == "again"


def test_fork_links_parent_and_marks_copied_lines(tmp_path: Path):
    fork_time = 1_767_300_000.0
    r = Rollout(start=fork_time - 1)
    r.meta(
        "0199bbbb-0000-7000-8000-000000000002",
        forked_from_id="0199aaaa-0000-7000-8000-000000000001",
        timestamp="2026-01-01T20:40:00Z",
    )
    r.clock = fork_time
    r.add("session_meta", {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/repo"}, at=fork_time)
    copied = Rollout(start=fork_time).turn("parent prompt", "parent answer")
    for line in copied.lines:  # re-stamped to the fork instant, a millisecond apart
        record = json.loads(line)
        record["timestamp"] = "2026-01-01T20:40:00.001Z"
        r.lines.append(json.dumps(record))
    r.clock = fork_time + 30
    r.turn("fork prompt", "fork answer")
    session, _ = only(r.write(tmp_path / "i.jsonl"))
    assert session.kind == "fork"
    assert session.parent_native_id == "0199aaaa-0000-7000-8000-000000000001"
    assert session.extra["copied_session_metas"] == ["0199aaaa-0000-7000-8000-000000000001"]
    replayed = {n.content for n in session.nodes if n.metadata.get("replayed")}
    assert replayed == {"parent prompt", "parent answer"}
    assert [n.content for n in branch(session) if n.role == "user"] == ["parent prompt", "fork prompt"]


def test_subagent_links_to_its_parent_thread(tmp_path: Path):
    parent = Rollout().meta("0199cccc-0000-7000-8000-00000000000a")
    parent.prompt("split the work")
    parent.item(type="function_call", name="spawn_agent", arguments='{"task":"tests"}', call_id="spawn-1")
    parent.item(type="function_call_output", call_id="spawn-1", output="spawned")
    parent.event(
        type="collab_agent_spawn_end",
        call_id="spawn-1",
        sender_thread_id="0199cccc-0000-7000-8000-00000000000a",
        new_thread_id="0199dddd-0000-7000-8000-00000000000b",
    )
    parent_session, _ = only(parent.write(tmp_path / "parent.jsonl"))
    assert parent_session.extra["children"] == {"0199dddd-0000-7000-8000-00000000000b": "spawn-1"}

    child = Rollout().meta(
        "0199dddd-0000-7000-8000-00000000000b",
        source={"subagent": {"thread_spawn": {"parent_thread_id": "0199cccc-0000-7000-8000-00000000000a", "depth": 1}}},
    )
    child.turn("write the tests", "written")
    session, _ = only(child.write(tmp_path / "child.jsonl"))
    assert (session.kind, session.parent_native_id) == ("subagent", "0199cccc-0000-7000-8000-00000000000a")
    assert not any(n.metadata.get("replayed") for n in session.nodes)  # a plain spawn copies nothing


def test_review_subagent_without_parent_id(tmp_path: Path):
    r = Rollout().meta(source={"subagent": "review"}).turn("review this", "looks fine")
    session, _ = only(r.write(tmp_path / "j.jsonl"))
    assert (session.kind, session.parent_native_id) == ("subagent", None)


# ---------------------------------------------------------------------------------------------
# files: titles, discovery, malformed and torn lines, live tails


def test_title_from_session_index_and_thread_name(tmp_path: Path):
    home = tmp_path / ".codex"
    day = home / "sessions" / "2026" / "01" / "01"
    day.mkdir(parents=True)
    native = "0199aaaa-0000-7000-8000-000000000001"
    (home / "session_index.jsonl").write_text(
        json.dumps({"id": native, "thread_name": "old name", "updated_at": "2026-01-01T00:00:00Z"})
        + "\n"
        + json.dumps({"id": native, "thread_name": "new name", "updated_at": "2026-01-02T00:00:00Z"})
        + "\n"
    )
    path = Rollout().meta(native).turn("x", "y").write(day / f"rollout-2026-01-01T00-00-00-{native}.jsonl")
    assert only(path)[0].title == "new name"
    renamed = Rollout().meta(native).turn("x", "y").event(type="thread_name_updated", thread_name="typed name")
    assert only(renamed.write(path))[0].title == "typed name"


def test_discover_and_default_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "codexhome"
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert codex.default_paths() == [home / "sessions", home / "archived_sessions"]
    a = home / "sessions" / "2026" / "01" / "02" / "rollout-2026-01-02T00-00-00-x.jsonl"
    b = home / "archived_sessions" / "rollout-2025-12-31T00-00-00-y.jsonl"
    for path in (a, b):
        path.parent.mkdir(parents=True)
        path.write_text("")
    (home / "sessions" / "notes.jsonl").write_text("")
    assert codex.discover([*codex.default_paths(), tmp_path / "missing"]) == [a, b]
    assert codex.discover([a, a]) == [a]


def test_malformed_lines_are_warnings_and_the_rest_is_read(tmp_path: Path):
    r = Rollout().meta().turn("first", "1")
    r.lines.insert(2, "{not json")
    r.lines.insert(3, "[1, 2]")
    r.lines.insert(
        4,
        json.dumps(
            {"timestamp": "x", "type": "response_item", "payload": {"type": "message", "role": "user", "content": 5}}
        ),
    )
    r.lines.insert(5, json.dumps({"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": "two"}}))
    path = r.write(tmp_path / "k.jsonl")
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe broken bytes\n")
    session, report = only(path)
    assert [w.split(": ", 1)[0] for w in report.warnings] == [
        f"{path}:3",
        f"{path}:4",
        f"{path}:5",
        f"{path}:6",
        f"{path}:{len(r.lines) + 1}",
    ]
    assert "invalid JSON" in report.warnings[0] and "JSON object" in report.warnings[1]
    assert "content" in report.warnings[2] and "num_turns" in report.warnings[3] and "UTF-8" in report.warnings[4]
    assert [n.content for n in branch(session)] == ["first", "1"]


def test_torn_last_line_is_left_for_the_next_read(tmp_path: Path):
    r = Rollout().meta().turn("first", "1")
    path = r.write(tmp_path / "l.jsonl")
    whole = path.stat().st_size
    with path.open("a") as handle:
        handle.write('{"timestamp": "2026-01-01T00:00:00Z", "type": "event_m')
    session, report = only(path, final=False)  # being written: no warning
    assert report.warnings == [] and session.extra["end_offset"] == whole
    session, report = only(path)  # finished (quiet): nothing will complete it, so it is said
    assert session.extra["end_offset"] == whole  # still left out, for a read after an append
    assert [w.split(": ", 1)[1] for w in report.warnings] == [
        "the last line is cut off (no newline, not a whole JSON record): left out"
    ]


def test_live_tail_is_held_back_until_settled(tmp_path: Path):
    r = Rollout().meta().prompt("run it")
    r.call("c1", output=None)  # the tool is still running
    path = r.write(tmp_path / "m.jsonl")
    first, _ = only(path, final=False)
    assert [n.role for n in first.nodes] == ["user"]  # the open model response and its call wait
    assert first.head == first.nodes[0].id
    r.item(type="function_call_output", call_id="c1", output="done")
    r.reply("All done.").event(type="task_complete")
    r.write(path)
    second, _ = only(path, [n.id for n in first.nodes], start_offset=first.extra["end_offset"], final=False)
    assert [(n.role, n.content) for n in second.nodes] == [
        ("assistant", ""),
        ("tool", "done"),
        ("assistant", "All done."),
    ]
    assert parse_from(codex, path, second.extra["end_offset"], final=True) == []


def test_final_flag_defaults_to_file_age(tmp_path: Path):
    r = Rollout().meta().prompt("run it")
    r.call("c1", output=None)
    path = r.write(tmp_path / "n.jsonl")
    fresh = codex.parse_file(path, ImportReport())[0]
    assert [n.role for n in fresh.nodes] == ["user"]  # written just now: live
    old = time.time() - 3600
    os.utime(path, (old, old))
    settled = codex.parse_file(path, ImportReport())[0]
    assert [n.role for n in settled.nodes] == ["user", "assistant", "tool"]
    assert settled.nodes[-1].metadata["status"] == "no_output"


def test_unreadable_and_empty_files(tmp_path: Path):
    report = ImportReport()
    assert codex.parse_file(tmp_path / "absent.jsonl", report) == []
    assert "cannot read" in report.warnings[0]
    (tmp_path / "empty.jsonl").write_text("")
    report = ImportReport()
    assert codex.parse_file(tmp_path / "empty.jsonl", report, final=True) == []
    assert "no Codex records" in report.warnings[0]


# ---------------------------------------------------------------------------------------------
# property tests: malformed input raises only ImportFormatError


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
KEYS = st.sampled_from(
    [
        "type",
        "payload",
        "role",
        "content",
        "text",
        "call_id",
        "name",
        "arguments",
        "output",
        "input",
        "id",
        "message",
        "summary",
        "num_turns",
        "info",
        "source",
        "subagent",
        "thread_spawn",
        "parent_thread_id",
        "forked_from_id",
        "replacement_history",
        "item",
        "phase",
        "kind",
        "images",
        "review_output",
        "ghost_commit",
        "total_token_usage",
        "status",
        "action",
        "tools",
        "new_thread_id",
        "model",
        "cwd",
        "timestamp",
    ]
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS | st.text(max_size=5), children, max_size=5),
    max_leaves=20,
)
ITEM_TYPES = sorted(
    codex_handlers.CALL_ITEMS
    | codex_records.OUTPUT_ITEMS
    | {"message", "reasoning", "compaction", "ghost_snapshot", "agent_message"}
)
EVENT_TYPES = sorted(
    codex_records.IGNORED_EVENTS
    | codex_records.CALL_END_EVENTS
    | {
        "user_message",
        "agent_message",
        "agent_reasoning",
        "token_count",
        "task_started",
        "task_complete",
        "turn_aborted",
        "thread_rolled_back",
        "thread_name_updated",
        "error",
        "exited_review_mode",
        "item_completed",
        "collab_agent_spawn_end",
    }
)


@st.composite
def records(draw):
    kind = draw(st.sampled_from(sorted(codex_records.TOP_TYPES | {"legacy_state", "other"})))
    payload = draw(st.dictionaries(KEYS, json_values, max_size=6))
    if kind == "response_item":
        payload["type"] = draw(st.sampled_from(ITEM_TYPES) | json_scalars)
    elif kind == "event_msg":
        payload["type"] = draw(st.sampled_from(EVENT_TYPES) | json_scalars)
    return codex_records.CodexRecord(kind, payload, draw(st.floats(min_value=0, max_value=2e9)))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | json_values.map(json.dumps))
def test_parse_line_raises_only_format_errors(text):
    try:
        record = codex_records.parse_line(text)
    except ImportFormatError:
        return
    assert isinstance(record.payload, dict) and isinstance(record.kind, str)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), max_size=25))
def test_reader_raises_only_format_errors(recs):
    reader = codex_reader.CodexReader(Path("p.jsonl"), ImportReport())
    for offset, record in enumerate(recs):
        try:
            reader.feed(record, offset * 10, offset + 1)
        except ImportFormatError:
            pass
    session = reader.session(end_offset=len(recs) * 10, start_offset=0, live=False)
    assert_well_formed(session)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.text(max_size=40) | records().map(lambda r: json.dumps({"type": r.kind, "payload": r.payload})), max_size=15
    )
)
def test_parse_file_never_raises(tmp_path: Path, lines):
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(line.replace("\n", " ") + "\n" for line in lines), encoding="utf-8")
    report = ImportReport()
    for session in codex.parse_file(path, report, final=True):
        assert_well_formed(session)
    assert all(w.startswith(f"{path}:") or w.startswith(str(path)) for w in report.warnings)


def test_line_parser_follows_a_growing_file():
    """The watch protocol: feed lines as they are appended, take() what became final each time."""
    whole, _ = only(fixture(REAL))
    parser = codex.open_parser(fixture(REAL), ImportReport())
    seen: dict = {}
    for number, line in enumerate(fixture(REAL).read_bytes().splitlines(keepends=True), 1):
        parser.feed_line(line, number)
        if number % 7 == 0 or number in (4, 12, 13):
            for session in parser.take(final=False):
                assert_well_formed(session, seen)
                for node in session.nodes:
                    assert node.id not in seen
                    seen[node.id] = node
    assert not parser.holding()  # the last call got its output and its token count
    seen.update({n.id: n for s in parser.take(final=True) for n in s.nodes})
    assert seen == by_id(whole)
    assert parser.take(final=True) == []


def test_line_parser_holds_a_running_tool_and_flushes_when_idle():
    parser = codex.open_parser("rollout-x.jsonl", ImportReport())
    r = Rollout().meta().prompt("run it")
    for line in r.lines:
        parser.feed_line(line + "\n")
    assert parser.take(final=False) == []  # the prompt waits: its copies may still come
    assert [n.role for s in parser.take(final=False, idle=True) for n in s.nodes] == ["user"]
    for line in Rollout().call("c1", output=None).lines:
        parser.feed_line(line + "\n")
    assert parser.take(final=False) == []
    assert parser.holding()
    assert parser.take(final=False, idle=True) == []  # a running tool is never flushed on idle
    parser.feed_line(
        json.dumps(
            {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}}
        )
        + "\n"
    )
    # The model response is done but its token count has not come: idle flushes it.
    assert [n.role for s in parser.take(final=False) for n in s.nodes] == []
    assert [(n.role, n.content) for s in parser.take(final=False, idle=True) for n in s.nodes] == [
        ("assistant", ""),
        ("tool", "ok"),
    ]
    assert not parser.holding()


@st.composite
def rollouts(draw):
    """A random but well-formed rollout: turns with tool calls, rollbacks, compactions, injected context."""
    r = Rollout().meta()
    for n in range(draw(st.integers(1, 6))):
        step = draw(st.sampled_from(["turn", "turn", "rollback", "compact", "inject", "context", "abort"]))
        if step == "turn":
            r.turn(f"prompt {n}", f"answer {n}", calls=draw(st.integers(0, 3)), tag=str(n))
        elif step == "rollback":
            r.event(type="thread_rolled_back", num_turns=draw(st.integers(0, 3)))
        elif step == "compact":
            r.add("compacted", {"message": f"summary {n}"})
        elif step == "inject":
            r.item(
                type="message",
                role="user",
                content=[{"type": "input_text", "text": f"<environment_context>{n}</environment_context>"}],
            )
        elif step == "context":  # a user item no user_message event matches
            r.item(type="message", role="user", content=[{"type": "input_text", "text": f"rules {n}"}])
        else:
            r.prompt(f"aborted {n}").call(f"call_x{n}", output=None).event(type="turn_aborted", reason="interrupted")
    return r


@settings(max_examples=40, deadline=None)
@given(rollouts(), st.lists(st.integers(1, 400), max_size=8))
def test_takes_while_growing_equal_one_whole_parse(r, cuts):
    """Whatever the points at which a live file is read, the nodes returned add up to one whole read."""
    data = "".join(line + "\n" for line in r.lines).encode()
    parser = codex.open_parser("rollout-p.jsonl", ImportReport())
    seen: dict = {}
    lines = data.splitlines(keepends=True)
    positions = [*sorted({min(c, len(lines)) for c in cuts}), len(lines)]
    fed = 0
    for position in positions:
        for line in lines[fed:position]:
            parser.feed_line(line)
        fed = position
        for session in parser.take(final=position == len(lines) and position == positions[-1]):
            assert_well_formed(session, seen)
            for node in session.nodes:
                assert node.id not in seen
                seen[node.id] = node
    whole = CodexParser("rollout-p.jsonl", ImportReport())
    for line in lines:
        whole.feed_line(line)
    assert seen == {n.id: n for s in whole.take(final=True) for n in s.nodes}
