"""Claude Code parser on synthetic transcripts built from the documented format."""

from __future__ import annotations

import json
from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportedSession, ImportReport
from opmem_tui.backend.importers.claude_parser import ClaudeParser
from opmem_tui.backend.importers.claude_records import is_agent_file

from .conftest import Transcript, text, thinking, tool_use

claude_code = SOURCES["claude"]
parse_file = claude_code.parse_file
discover = claude_code.discover

SID = "11111111-2222-3333-4444-555555555555"


def parse(tmp_path: Path, t: Transcript, name: str = f"{SID}.jsonl", final: bool = True):
    report = ImportReport()
    path = t.write(tmp_path / "projects" / "-tmp-project" / name)
    return parse_file(path, report, final=final), report


def trunk(sessions: list[ImportedSession]) -> ImportedSession:
    return next(s for s in sessions if s.kind == "trunk")


def by_role(session: ImportedSession, role: str):
    return [n for n in session.nodes if n.role == role]


def test_streaming_split_records_are_one_assistant_node_with_tools(tmp_path: Path) -> None:
    t = Transcript()
    prompt = t.prompt("list the files")
    t.assistant("msg_A", text("\n\n"), usage={"input_tokens": 3, "output_tokens": 1})
    t.assistant("msg_A", thinking("I should run ls"), usage={"input_tokens": 3, "output_tokens": 1})
    t.assistant("msg_A", text("Let me look."), usage={"input_tokens": 3, "output_tokens": 1})
    call = t.assistant(
        "msg_A", tool_use("toolu_1", "Bash", command="ls"), usage={"input_tokens": 3, "output_tokens": 40}
    )
    t.progress("toolu_1")
    t.result("toolu_1", "a.txt\nb.txt", parent=call, sourceToolAssistantUUID=call, toolUseResult={"stdout": "a.txt"})
    t.assistant("msg_B", text("Two files."), request="req_2")
    sessions, report = parse(tmp_path, t)
    s = trunk(sessions)
    assert report.warnings == []
    assert [n.role for n in s.nodes] == ["user", "assistant", "tool", "assistant"]
    user, first, tool, second = s.nodes
    assert user.id == prompt and user.content == "list the files"
    assert first.id == "msg_A" and first.parent_id == prompt
    assert first.content == "Let me look."  # text only; the whitespace block is dropped
    assert first.metadata["thinking"] == "I should run ls"
    assert first.metadata["usage"]["output_tokens"] == 40  # the most complete of the repeated usages
    assert first.metadata["model"] == "claude-test-1" and first.name == "claude-test-1"
    assert tool.called_by == "msg_A" and tool.parent_id == "msg_A"
    assert tool.name == "Bash" and tool.input == {"command": "ls"} and tool.content == "a.txt\nb.txt"
    assert tool.metadata["tool_use_result"] == {"stdout": "a.txt"}
    assert second.parent_id == "msg_A" and second.content == "Two files."
    # usage counted once per (message id, request id): 40 + 5, not 1+1+1+40+5
    assert s.extra["usage"]["output_tokens"] == 45
    assert s.cwd == "/tmp/project" and s.model == "claude-test-1" and s.git_branch == "main"
    assert s.head == "msg_B"


def test_tool_error_and_rejection_kept_in_metadata(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("edit it")
    call = t.assistant("msg_A", tool_use("toolu_1", "Edit", file_path="/x"))
    t.result("toolu_1", "The user doesn't want to proceed with this tool use.", parent=call, is_error=True)
    t.user_blocks([text("[Request interrupted by user for tool use]")])
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    tool = by_role(s, "tool")[0]
    assert tool.metadata["is_error"] is True and "doesn't want" in tool.content
    interrupt = by_role(s, "system")[0]
    assert interrupt.metadata["kind"] == "interrupt" and interrupt.parent_id == "msg_A"
    assert len(by_role(s, "user")) == 1  # the marker starts no turn


def test_non_prompt_user_records_become_system_nodes(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("<local-command-caveat>Caveat: The messages below were generated</local-command-caveat>", isMeta=True)
    t.prompt("<command-name>/mcp</command-name>\n<command-message>mcp</command-message>")
    t.prompt("<local-command-stdout>Reconnected.</local-command-stdout>")
    t.prompt("<system-reminder>be brief</system-reminder>")
    t.prompt("<task-notification>done</task-notification>")
    t.prompt("real question")
    t.assistant("msg_A", text("answer"))
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    kinds = [n.metadata.get("kind") for n in s.nodes if n.role == "system"]
    assert kinds == ["meta", "command", "command", "injected", "injected"]
    assert [n.content for n in by_role(s, "user")] == ["real question"]


def test_compaction_boundary_joins_old_chain_and_summary_is_system(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("first")
    last = t.assistant("msg_A", text("one"))
    boundary = t.system(
        "compact_boundary",
        "Conversation compacted",
        parent=None,
        logicalParentUuid=last,
        compactMetadata={"trigger": "auto", "preTokens": 1000},
    )
    t.prompt(
        "This session is being continued from a previous conversation that ran out of context.",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    t.prompt("second")
    t.assistant("msg_B", text("two"))
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    nodes = {n.id: n for n in s.nodes}
    assert nodes[boundary].parent_id == "msg_A" and nodes[boundary].metadata["kind"] == "compact_boundary"
    assert nodes[boundary].metadata["compact"]["preTokens"] == 1000
    summary = [n for n in s.nodes if n.metadata.get("kind") == "compact_summary"]
    assert len(summary) == 1 and summary[0].role == "system" and summary[0].parent_id == boundary
    assert [n.content for n in by_role(s, "user")] == ["first", "second"]


def test_real_rewind_becomes_a_branch(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("start")
    anchor = t.assistant("msg_A", text("ok"))
    t.prompt("try X")
    t.assistant("msg_B", text("did X"))
    rewound = t.prompt("try Y instead", parent=anchor)  # Esc-Esc: a new prompt from an older point
    t.assistant("msg_C", text("did Y"))
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    kids = [n.id for n in s.nodes if n.parent_id == "msg_A" and n.role == "user"]
    assert len(kids) == 2 and rewound in kids
    assert s.head == "msg_C"


def test_artifact_forks_are_flattened(tmp_path: Path) -> None:
    """Hook progress beside a result, parallel calls as siblings, a result beside the next call."""
    t = Transcript()
    t.prompt("do two things")
    first = t.assistant("msg_A", tool_use("toolu_1", "Read"))
    t.progress("toolu_1", parent=first)  # hook subtree beside the result
    second = t.assistant("msg_A", tool_use("toolu_2", "Grep"), parent=t.last)  # same call, under the hook record
    t.result("toolu_2", "grep out", parent=second)
    r1 = t.result("toolu_1", "read out", parent=first)
    t.assistant("msg_B", text("continuing"), parent=r1)
    t.system("api_error", None, parent=t.last, error={"message": "overloaded"}, retryAttempt=1, maxRetries=10)
    t.assistant("msg_C", text("retried fine"), parent="msg_B-missing-is-orphan" if False else t.last)
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    chain = [n for n in s.nodes if n.role != "tool"]
    # one line: every chain node has at most one chain child
    children: dict[str | None, int] = {}
    for n in chain:
        children[n.parent_id] = children.get(n.parent_id, 0) + 1
    assert max(children.values()) == 1
    assert [n.id for n in chain] == [chain[0].id, "msg_A", "msg_B", "msg_C"]
    assert {n.name for n in by_role(s, "tool")} == {"Read", "Grep"}


def test_assistant_sibling_is_linearized_not_branched(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("go")
    a = t.assistant("msg_A", tool_use("toolu_1"))
    t.result("toolu_1", "out", parent=a)
    t.assistant("msg_B", text("after result"), parent=a)  # continuation fork: child of the call
    t.system("local_command", "<local-command-stdout>x</local-command-stdout>", parent=a)  # artifact sibling
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    system = by_role(s, "system")[0]
    assert system.parent_id == "msg_B"  # chained after the latest node under msg_A


def test_replayed_children_with_same_timestamp_are_merged(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("hello")
    a = t.assistant("msg_A", text("hi"))
    stamp = "2025-06-01T13:00:00.000Z"
    first = t.prompt("next question", parent=a, timestamp=stamp)
    t.prompt("next question", parent=a, timestamp=stamp)  # replay with a new uuid
    t.assistant("msg_B", text("answer"))
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    assert [n.content for n in by_role(s, "user")] == ["hello", "next question"]
    assert next(n for n in s.nodes if n.id == "msg_B").parent_id == first


def test_queued_prompt_is_placed_where_it_was_typed(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("long task")
    a = t.assistant("msg_A", tool_use("toolu_1"))
    t.meta("queue-operation", operation="enqueue", content="also check the tests", timestamp="2025-06-01T12:00:02.500Z")
    t.meta("queue-operation", operation="dequeue", timestamp="2025-06-01T12:00:02.600Z")
    r = t.result("toolu_1", "done", parent=a)
    t.assistant("msg_B", text("finished"), parent=r)
    sessions, report = parse(tmp_path, t)
    s = trunk(sessions)
    queued = [n for n in s.nodes if n.metadata.get("kind") == "queued_prompt"]
    assert len(queued) == 1 and queued[0].content == "also check the tests" and queued[0].parent_id == "msg_A"
    assert next(n for n in s.nodes if n.id == "msg_B").parent_id == queued[0].id
    assert s.extra["record_counts"]["queue:dequeue"] == 1 and report.unknown_records == {}


def test_titles_and_metadata_records(tmp_path: Path) -> None:
    t = Transcript()
    t.meta("summary", summary="About another session", leafUuid="elsewhere")
    t.prompt("hi")
    t.assistant("msg_A", text("hello"))
    t.meta("ai-title", aiTitle="Greeting exchange")
    t.meta("permission-mode", permissionMode="plan")
    t.meta("pr-link", prNumber=7, prUrl="https://example.invalid/pr/7", prRepository="o/r")
    t.meta("agent-name", agentName="helper")
    t.meta("last-prompt", lastPrompt="hi", leafUuid="x")
    t.meta("mode", mode="normal")
    t.meta("file-history-snapshot", messageId="x", snapshot={}, isSnapshotUpdate=False)
    sessions, report = parse(tmp_path, t)
    s = trunk(sessions)
    assert (s.title, s.extra["title_source"]) == ("Greeting exchange", "llm")
    assert s.extra["permission_mode"] == "plan" and s.extra["agent_name"] == "helper"
    assert s.extra["pr_links"] == [{"prNumber": 7, "prUrl": "https://example.invalid/pr/7", "prRepository": "o/r"}]
    assert report.unknown_records == {}
    t.meta("custom-title", customTitle="My own name")
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    assert (s.title, s.extra["title_source"]) == ("My own name", "user")


def test_summary_written_before_its_leaf_titles_the_session(tmp_path: Path) -> None:
    t = Transcript()
    t.meta("summary", summary="Fixing the login bug", leafUuid="00000002-0000-4000-8000-000000000002")
    t.meta("summary", summary="Some other session", leafUuid="not-here")
    t.prompt("the login fails")
    t.assistant("msg_A", text("looking"))  # uuid 00000002-...
    sessions, _ = parse(tmp_path, t)
    s = trunk(sessions)
    assert (s.title, s.extra["title_source"]) == ("Fixing the login bug", "llm")
    assert s.extra["foreign_summaries"] == 1


def test_unknown_types_counted_bad_lines_warned_rest_imported(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("one")
    t.assistant("msg_A", text("reply one"))
    t.meta("brand-new-record", payload=1)
    path = t.write(tmp_path / f"{SID}.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    extra = Transcript()
    extra.count = 50
    extra.last = t.last
    extra.clock = t.clock
    extra.prompt("two")
    extra.assistant("msg_B", text("reply two"))
    bad = ['{"type": "user", "message": "not an object"}\n', "{truncated\n", "[1, 2]\n", '{"no": "type"}\n']
    path.write_text("".join(lines + bad + extra.lines()))
    report = ImportReport()
    s = trunk(parse_file(path, report, final=True))
    assert report.unknown_records == {"brand-new-record": 1}
    assert len(report.warnings) == 4
    first_bad = len(lines) + 1
    assert report.warnings[0].startswith(f"{path}:{first_bad}: ")
    assert "invalid JSON" in report.warnings[1] and f":{first_bad + 1}:" in report.warnings[1]
    assert [n.content for n in by_role(s, "user")] == ["one", "two"]


def test_live_file_holds_back_the_open_reply_until_final(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("q")
    t.assistant("msg_A", thinking("hmm"))
    report = ImportReport()
    parser = ClaudeParser(tmp_path / f"{SID}.jsonl", report)
    for number, line in enumerate(t.lines(), 1):
        parser.feed_line(line, number)
    first = parser.take(final=False)
    assert [n.role for n in first[0].nodes] == ["user"]
    assert parser.holding()
    assert parser.take(final=False, idle=True) == []  # thinking only: the reply is still coming
    more = Transcript()
    more.count, more.last, more.clock = 10, t.last, t.clock
    more.assistant("msg_A", text("answer"))
    for number, line in enumerate(more.lines(), 3):
        parser.feed_line(line, number)
    idle = parser.take(final=False, idle=True)
    node = idle[0].nodes[0]
    assert node.id == "msg_A" and node.content == "answer" and node.metadata["thinking"] == "hmm"
    assert not parser.holding()


def test_blocks_after_an_early_flush_become_a_continuation(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("q")
    t.assistant("msg_A", text("part one"))
    parser = ClaudeParser(tmp_path / f"{SID}.jsonl", ImportReport())
    for number, line in enumerate(t.lines(), 1):
        parser.feed_line(line, number)
    assert [n.id for n in parser.take(final=True)[0].nodes][-1] == "msg_A"
    more = Transcript()
    more.count, more.last, more.clock = 10, t.last, t.clock
    late = more.assistant("msg_A", text("part two"))
    more.assistant("msg_A", tool_use("toolu_9", "Read"))
    more.result("toolu_9", "contents")
    for number, line in enumerate(more.lines(), 3):
        parser.feed_line(line, number)
    nodes = parser.take(final=True)[0].nodes
    assert nodes[0].id == f"{late}.cont" and nodes[0].content == "part two"
    assert nodes[0].parent_id == "msg_A" and nodes[0].metadata["continuation_of"] == "msg_A"
    assert nodes[1].role == "tool" and nodes[1].called_by == "msg_A"


def test_tool_without_result_is_held_while_live_and_flushed_when_final(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant("msg_A", tool_use("toolu_1", "Bash", command="make"))
    t.assistant("msg_B", text("waiting"), parent=t.last)
    parser = ClaudeParser(tmp_path / f"{SID}.jsonl", ImportReport())
    for number, line in enumerate(t.lines(), 1):
        parser.feed_line(line, number)
    live = parser.take(final=False)[0].nodes
    assert [n.role for n in live] == ["user", "assistant"]
    final = parser.take(final=True)[0].nodes
    assert [(n.role, n.metadata.get("result_missing")) for n in final] == [("tool", True), ("assistant", None)]


def test_a_new_prompt_settles_calls_that_never_got_a_result(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant("msg_A", tool_use("toolu_1", "Bash", command="make"))
    t.prompt("(the CLI crashed; resumed) try again", parent=t.last)
    t.assistant("msg_B", text("retrying"))
    parser = ClaudeParser(tmp_path / f"{SID}.jsonl", ImportReport())
    for number, line in enumerate(t.lines(), 1):
        parser.feed_line(line, number)
    nodes = parser.take(final=False)[0].nodes
    assert [(n.role, n.metadata.get("result_missing")) for n in nodes] == [
        ("user", None),
        ("assistant", None),
        ("tool", True),
        ("user", None),
    ]
    assert parser.holding()  # only the newest reply is still open


def test_subagent_files_and_links(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("research this")
    a = t.assistant("msg_A", tool_use("toolu_task", "Task", prompt="find versions", description="research"))
    t.progress("toolu_task", parent=a)
    t.result(
        "toolu_task",
        "Found them.\nagentId: a1b2c3d (for resuming)",
        parent=a,
        toolUseResult={"agentId": "a1b2c3d", "status": "completed", "totalTokens": 99},
    )
    t.assistant("msg_B", text("Done."))
    folder = tmp_path / "projects" / "-tmp-project"
    t.write(folder / f"{SID}.jsonl")
    sub = Transcript(session=SID)
    sub.prompt("find versions", parent=None, isSidechain=True, agentId="a1b2c3d")
    sub.assistant("msg_S", text("versions: 1.0"), isSidechain=True, agentId="a1b2c3d")
    sub_path = sub.write(folder / SID / "subagents" / "agent-a1b2c3d.jsonl")
    (folder / SID / "subagents" / "agent-a1b2c3d.meta.json").write_text(
        json.dumps({"agentType": "general-purpose", "toolUseId": "toolu_task"})
    )
    compact = Transcript(session=SID)
    compact.prompt(
        "Your task is to create a detailed summary",
        parent="somewhere-in-trunk",
        isSidechain=True,
        agentId="acompact-9f9f9f",
    )
    compact.assistant("msg_K", text("<summary>...</summary>"), isSidechain=True, agentId="acompact-9f9f9f")
    compact.write(folder / SID / "subagents" / "agent-acompact-9f9f9f.jsonl")
    files = discover([tmp_path / "projects"])
    assert files[0].name == f"{SID}.jsonl" and all(is_agent_file(f) for f in files[1:])
    report = ImportReport()
    main = parse_file(files[0], report, final=True)[0]
    assert main.extra["children"] == {f"{SID}/agent-a1b2c3d": "toolu_task"}
    sub_session = parse_file(sub_path, report, final=True)[0]
    assert sub_session.kind == "subagent" and sub_session.native_id == f"{SID}/agent-a1b2c3d"
    assert sub_session.parent_native_id == SID and sub_session.parent_node == "toolu_task"
    assert sub_session.extra["agent_type"] == "general-purpose"
    k = parse_file(folder / SID / "subagents" / "agent-acompact-9f9f9f.jsonl", report, final=True)[0]
    assert k.kind == "compaction" and k.parent_native_id == SID and k.extra["parent_record"] == "somewhere-in-trunk"
    assert [n.role for n in k.nodes] == ["user", "assistant"]


def test_an_agent_file_with_an_unusual_id_is_known_by_its_records(tmp_path: Path) -> None:
    sub = Transcript(session=SID)
    sub.prompt("explore the repo", parent=None, isSidechain=True, agentId="explore-7")
    sub.assistant("msg_S", text("found it"), isSidechain=True, agentId="explore-7")
    path = sub.write(tmp_path / "agent-explore-7.jsonl")
    assert not is_agent_file(path)
    [session] = parse_file(path, ImportReport(), final=True)
    assert session.kind == "subagent" and session.native_id == f"{SID}/agent-explore-7"
    assert session.parent_native_id == SID


def test_inline_sidechain_rows_become_their_own_session(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("delegate")
    a = t.assistant("msg_A", tool_use("toolu_task", "Task", prompt="sub job"))
    side = t.prompt("sub job", parent=None, isSidechain=True)
    t.assistant("msg_S", text("sub answer"), parent=side, isSidechain=True)
    t.result("toolu_task", "sub answer", parent=a)
    t.assistant("msg_B", text("all done"))
    sessions, _ = parse(tmp_path, t)
    main = trunk(sessions)
    sub = next(s for s in sessions if s.kind == "subagent")
    assert [n.id for n in main.nodes if n.role != "tool"][1:] == ["msg_A", "msg_B"]
    assert [n.content for n in sub.nodes] == ["sub job", "sub answer"]
    assert sub.parent_native_id == SID and sub.parent_node == "toolu_task"
    assert main.extra["children"] == {sub.native_id: "toolu_task"}


def test_file_of_only_summaries_makes_no_session(tmp_path: Path) -> None:
    t = Transcript()
    t.meta("summary", summary="x", leafUuid="y")
    sessions, _ = parse(tmp_path, t)
    assert sessions == []


def test_default_paths_honour_claude_config_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert claude_code.default_paths() == [tmp_path / "cfg" / "projects"]
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert claude_code.default_paths() == [Path.home() / ".claude" / "projects"]


def test_a_torn_last_line_of_a_finished_file_is_a_warning(tmp_path: Path) -> None:
    """A torn line in the middle is warned about; so is a torn last line of a file nothing is
    writing any more (final). In a live file it is a record still being written: no warning."""
    t = Transcript()
    t.prompt("First question")
    t.assistant([text("An answer.")])
    path = t.write(tmp_path / "projects" / "-tmp-project" / f"{SID}.jsonl")
    with path.open("ab") as handle:
        handle.write(b'{"type": "user", "uuid": "u-torn", "message": {"role": "us')
    finished = ImportReport()
    sessions = parse_file(path, finished, final=True)
    assert trunk(sessions).nodes[0].content == "First question"
    assert finished.warnings == [f"{path}:3: the last line is cut off (no newline, not a whole JSON record): left out"]
    live = ImportReport()
    parse_file(path, live, final=False)
    assert live.warnings == []


def test_a_copy_under_another_name_is_the_same_session(tmp_path: Path) -> None:
    """The id comes from the sessionId inside the transcript, not from its file name: a copy
    (`backup.jsonl`, whole or taken before the session went on) is the same session, not a
    second one, nor makes the original a fork of it."""
    import shutil

    from opmem_tui.backend.home import Home
    from opmem_tui.backend.importers import run_import

    folder = tmp_path / "projects" / "-tmp-project"
    t = Transcript()
    t.prompt("First question")
    t.assistant([text("First answer.")])
    original = t.write(folder / f"{SID}.jsonl")
    shutil.copy(original, folder / "backup.jsonl")  # taken after the first turn
    t.prompt("Second question")
    t.assistant([text("Second answer.")])
    t.write(original)
    shutil.copy(original, folder / "copy of the session.jsonl")  # a whole copy too
    home = Home(tmp_path / "home", durable=False)
    run_import(home, "claude", [folder], bind=False)
    listing = home.sessions.list_sessions(rescan=True).sessions
    assert [meta.id for meta in listing] == [f"cc-{SID}"]
    turns = home.sessions.get_turns(f"cc-{SID}")
    assert [turn.nodes[0].content for turn in turns] == ["First question", "Second question"]
    assert listing[0].extra.get("resumed_from") is None
