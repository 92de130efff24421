"""Gemini CLI chats: legacy JSON, JSONL with upserts, $set and $rewindTo, subagents, the catalog sample."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportFormatError, ImportReport
from opmem_tui.backend.importers.gemini import GeminiParser, GeminiReader, parse_line

from .dag_helpers import assert_well_formed, branch, by_id, fixture, leaves, parse_from, tools_of, turn_count

gemini = SOURCES["gemini"]

CATALOG = "transcripts/catalog/agent-sessions-gemini-jsonl_v040.jsonl"
HEADER = {
    "sessionId": "5f0c2a1e-aaaa-bbbb-cccc-000000000001",
    "projectHash": "ab" * 32,
    "startTime": "2026-04-29T21:39:22.319Z",
    "lastUpdated": "2026-04-29T21:39:22.319Z",
    "kind": "main",
}


def user(mid: str, text: str, minute: int = 0) -> dict:
    return {
        "id": mid,
        "timestamp": f"2026-04-29T21:{40 + minute:02d}:00.000Z",
        "type": "user",
        "content": [{"text": text}],
    }


def reply(mid: str, text: str, minute: int = 0, calls: list | None = None) -> dict:
    msg = {
        "id": mid,
        "timestamp": f"2026-04-29T21:{40 + minute:02d}:30.000Z",
        "type": "gemini",
        "content": text,
        "thoughts": [{"subject": "Plan", "description": "look first", "timestamp": "2026-04-29T21:40:29Z"}],
        "tokens": {"input": 100, "output": 10, "total": 110},
        "model": "gemini-2.5-pro",
    }
    if calls is not None:
        msg["toolCalls"] = calls
    return msg


def call(cid: str, output: str | None, status: str = "success") -> dict:
    record = {
        "id": cid,
        "name": "run_shell_command",
        "args": {"command": "ls"},
        "status": status,
        "timestamp": "2026-04-29T21:40:31Z",
        "displayName": "Shell",
    }
    if output is not None:
        record["result"] = [
            {"functionResponse": {"id": cid, "name": "run_shell_command", "response": {"output": output}}}
        ]
    return record


def write_jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def parse(path: Path, start_offset: int = 0, **kwargs):
    report = ImportReport()
    kwargs.setdefault("final", True)
    if start_offset:
        return parse_from(gemini, path, start_offset, final=kwargs["final"]), report
    return gemini.parse_file(path, report, **kwargs), report


def only(path: Path, earlier=(), **kwargs):
    sessions, report = parse(path, **kwargs)
    assert len(sessions) == 1, report.warnings
    assert_well_formed(sessions[0], earlier)
    return sessions[0], report


# ---------------------------------------------------------------------------------------------


def test_catalog_jsonl_sample():
    session, report = only(fixture(CATALOG))
    assert report.warnings == [] and report.unknown_records == {}
    assert session.native_id == "gemini_stage0_jsonl" and session.model == "gemini-3-flash-preview"
    assert [(n.id, n.role) for n in session.nodes] == [
        ("g-user-1", "user"),
        ("g-assistant-1", "assistant"),
        ("run_shell_command_stage0", "tool"),
        ("g-assistant-2", "assistant"),
    ]
    tool = by_id(session)["run_shell_command_stage0"]
    assert tool.called_by == "g-assistant-1" and tool.input == {
        "command": "ls -F",
        "description": "List files in the current directory.",
    }
    assert tool.content.startswith("Output: AgentSessions/")
    assert session.head == "g-assistant-2" and turn_count(session) == 1
    assert session.extra["lastUpdated"] == "2026-04-29T21:39:33.156Z"  # from the $set patch


def test_legacy_json_chat(tmp_path: Path):
    chat = dict(
        HEADER,
        messages=[
            user("m0", "<session_context>\nThis is the Gemini CLI. Directory tree: ...\n</session_context>"),
            user("m1", "list files", 1),
            reply("m2", "", 1, calls=[call("c1", "a.txt\nb.txt"), call("c2", None, status="error")]),
            {"id": "m3", "timestamp": "2026-04-29T21:42:00Z", "type": "info", "content": "Switched model"},
            reply("m4", "Two files.", 2),
            {"id": "m5", "timestamp": "2026-04-29T21:43:00Z", "type": "shiny_new_type", "content": "?"},
        ],
    )
    del chat["kind"]
    path = tmp_path / "chats" / "session-2026-04-29T21-39-5f0c2a1e.json"
    path.parent.mkdir()
    path.write_text(json.dumps(chat, indent=2))
    session, report = only(path)
    assert report.unknown_records == {"gemini:message:shiny_new_type": 1}
    chain = branch(session)
    assert [n.role for n in chain] == ["system", "user", "assistant", "system", "assistant", "system"]
    assert chain[0].metadata["injected"] and turn_count(session) == 1
    first = chain[2]
    assert first.name == "gemini-2.5-pro" and first.metadata["thoughts"] == ["Plan: look first"]
    assert first.metadata["tokens"]["total"] == 110
    tools = tools_of(session, "m2")
    assert [(t.id, t.content, t.metadata["status"]) for t in tools] == [
        ("c1", "a.txt\nb.txt", "success"),
        ("c2", "", "error"),
    ]
    assert session.extra["layout"] == "json" and session.head == "m5"


def test_jsonl_upserts_keep_the_latest_version(tmp_path: Path):
    records = [
        HEADER,
        user("u1", "list files"),
        {"$set": {"lastUpdated": "2026-04-29T21:40:01Z"}},
        reply("g1", "", calls=[call("c1", None, status="executing")]),
        reply("g1", "", calls=[call("c1", "a.txt")]),  # re-appended when the result arrives
        reply("g2", "One file."),
        {"$set": {"summary": "Listing files"}},
    ]
    session, report = only(write_jsonl(tmp_path / "chats" / "session-a.jsonl", records))
    assert report.warnings == []
    assert Counter(n.role for n in session.nodes) == {"user": 1, "assistant": 2, "tool": 1}
    (tool,) = tools_of(session, "g1")
    assert (tool.content, tool.metadata["status"]) == ("a.txt", "success")
    assert session.title == "Listing files"


def test_rewind_keeps_dropped_messages_as_a_branch(tmp_path: Path):
    records = [
        HEADER,
        user("u1", "first"),
        reply("g1", "1"),
        user("u2", "second", 1),
        reply("g2", "2", 1),
        {"$rewindTo": "u2"},
        user("u3", "second, edited", 2),
        reply("g3", "2b", 2),
    ]
    session, report = only(write_jsonl(tmp_path / "chats" / "session-b.jsonl", records))
    assert report.warnings == []
    assert [n.id for n in branch(session)] == ["u1", "g1", "u3", "g3"]
    assert leaves(session) == {"g3", "g2"}
    assert [n.id for n in branch(session, "g2")] == ["u1", "g1", "u2", "g2"]
    assert by_id(session)["u3"].parent_id == "g1"
    assert session.extra["rewinds"] == [{"line": 6, "to": "u2", "dropped": ["u2", "g2"]}]


def test_rewind_to_unknown_id_clears_the_history(tmp_path: Path):
    records = [
        HEADER,
        user("u1", "first"),
        reply("g1", "1"),
        {"$rewindTo": "nope"},
        user("u2", "fresh"),
        reply("g2", "2"),
    ]
    session, _ = only(write_jsonl(tmp_path / "chats" / "session-c.jsonl", records))
    assert [n.id for n in branch(session)] == ["u2", "g2"]
    assert by_id(session)["u2"].parent_id is None  # a new root; the old line stays beside it
    assert leaves(session) == {"g1", "g2"}


def test_set_messages_replaces_the_history(tmp_path: Path):
    summary = {"id": "s1", "type": "user", "content": [{"text": "Summary of the chat so far"}]}
    ack = {"id": "s2", "type": "gemini", "content": "Got it."}
    records = [
        HEADER,
        user("u1", "first"),
        reply("g1", "1"),
        user("u2", "second", 1),
        reply("g2", "2", 1),
        {"$set": {"messages": [summary, ack, user("u2", "second", 1), reply("g2", "2", 1)]}},
        user("u3", "third", 3),
        reply("g3", "3", 3),
    ]
    session, _ = only(write_jsonl(tmp_path / "chats" / "session-d.jsonl", records))
    nodes = by_id(session)
    assert nodes["s1"].parent_id is None and nodes["s2"].parent_id == "s1"
    assert nodes["u3"].parent_id == "g2"  # the tip of the replaced history
    assert [n.id for n in branch(session)] == ["u1", "g1", "u2", "g2", "u3", "g3"]


def test_subagent_chat_links_to_its_parent(tmp_path: Path):
    parent_id = "5f0c2a1e-aaaa-bbbb-cccc-000000000001"
    header = dict(HEADER, sessionId="sub-1", kind="subagent", directories=["/work/project"])
    path = write_jsonl(
        tmp_path / "tmp" / "proj" / "chats" / parent_id / "sub-1.jsonl",
        [header, user("u1", "investigate"), reply("g1", "found it")],
    )
    session, _ = only(path)
    assert (session.kind, session.parent_native_id, session.cwd) == ("subagent", parent_id, "/work/project")


def test_cwd_from_projects_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home" / ".gemini"
    project = "/work/repo"
    digest = hashlib.sha256(project.encode()).hexdigest()
    (home).mkdir(parents=True)
    (home / "projects.json").write_text(json.dumps({"projects": {project: "repo", "/elsewhere": "other"}}))
    by_slug = write_jsonl(home / "tmp" / "repo" / "chats" / "session-e.jsonl", [HEADER, user("u1", "hi")])
    by_hash = write_jsonl(home / "tmp" / digest / "chats" / "session-f.jsonl", [HEADER, user("u1", "hi")])
    unknown = write_jsonl(home / "tmp" / "zzz" / "chats" / "session-g.jsonl", [HEADER, user("u1", "hi")])
    assert only(by_slug)[0].cwd == project
    assert only(by_hash)[0].cwd == project
    assert only(unknown)[0].cwd == ""
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    assert gemini.default_paths() == [home / "tmp"]
    found = gemini.discover(gemini.default_paths())
    assert sorted(p.name for p in found) == ["session-e.jsonl", "session-f.jsonl", "session-g.jsonl"]


def test_discover_prefers_the_migrated_jsonl(tmp_path: Path):
    chats = tmp_path / "tmp" / "h" / "chats"
    chats.mkdir(parents=True)
    for name in ("session-1.json", "session-1.jsonl", "session-2.json", "logs.json"):
        (chats / name).write_text("{}")
    (tmp_path / "tmp" / "h" / "checkpoint-x.json").write_text("{}")
    assert [p.name for p in gemini.discover([tmp_path])] == ["session-1.jsonl", "session-2.json"]


def test_incremental_reads_match_one_whole_read(tmp_path: Path):
    records = [
        HEADER,
        user("u1", "list files"),
        reply("g1", "", calls=[call("c1", None, status="executing")]),
        reply("g1", "", calls=[call("c1", "a.txt")]),
        reply("g2", "One file."),
        {"$rewindTo": "g2"},
        reply("g3", "Exactly one file."),
    ]
    path = tmp_path / "chats" / "session-i.jsonl"
    whole, _ = only(write_jsonl(path, records))
    seen: dict = {}
    offset = 0
    for cut in range(2, len(records) + 1):
        write_jsonl(path, records[:cut])
        sessions, _report = parse(path, start_offset=offset, final=cut == len(records))
        for session in sessions:
            assert_well_formed(session, seen)
            for node in session.nodes:
                assert node.id not in seen
                seen[node.id] = node
            offset = session.extra["end_offset"]
    assert seen == by_id(whole)
    # g1 was only returned once its tool result was in: never frozen with status "executing".
    assert by_id(whole)["c1"].content == "a.txt"


def test_malformed_lines_and_files(tmp_path: Path):
    path = write_jsonl(
        tmp_path / "chats" / "session-j.jsonl",
        [
            HEADER,
            user("u1", "hi"),
            [1],
            {"id": 5, "type": "user"},
            {"$set": 3},
            {"$rewindTo": 1},
            {"what": "ever"},
            {"id": "g1", "type": "gemini", "toolCalls": "nope"},
            reply("g2", "hello"),
        ],
    )
    session, report = only(path)
    assert [w.split(": ", 1)[0] for w in report.warnings] == [f"{path}:{n}" for n in (3, 4, 5, 6, 7, 8)]
    assert [n.id for n in branch(session)] == ["u1", "g2"]
    broken = tmp_path / "chats" / "session-k.json"
    broken.write_text("{nope")
    sessions, report = parse(broken)
    assert sessions == [] and "not a JSON chat file" in report.warnings[0]
    broken.write_text(json.dumps({"sessionId": "x", "messages": [user("u1", "ok"), {"id": "m", "type": 3}]}))
    session, report = only(broken)
    assert report.warnings == [f"{broken}: message 2: message 'm' has no 'type'"]


# ---------------------------------------------------------------------------------------------
# property tests


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
KEYS = st.sampled_from(
    [
        "id",
        "type",
        "content",
        "toolCalls",
        "result",
        "functionResponse",
        "response",
        "output",
        "args",
        "name",
        "status",
        "thoughts",
        "tokens",
        "model",
        "$set",
        "$rewindTo",
        "messages",
        "sessionId",
        "summary",
        "displayContent",
        "timestamp",
        "text",
    ]
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=25,
)
message_ids = st.sampled_from(["a", "b", "c", "d"])
messages = st.fixed_dictionaries(
    {"id": message_ids, "type": st.sampled_from(["user", "gemini", "info", "odd"]) | json_scalars},
    optional={"content": json_values, "toolCalls": json_values, "thoughts": json_values, "model": json_values},
)
lines = (
    messages
    | st.fixed_dictionaries({"$rewindTo": message_ids | json_scalars})
    | st.fixed_dictionaries(
        {
            "$set": st.dictionaries(KEYS, json_values, max_size=3)
            | st.fixed_dictionaries({"messages": st.lists(messages, max_size=3) | json_values})
        }
    )
    | json_values
).map(json.dumps)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200) | lines)
def test_parse_line_raises_only_format_errors(text):
    try:
        kind, record = parse_line(text)
    except ImportFormatError:
        return
    assert kind in ("header", "message", "set", "rewind") and isinstance(record, dict)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, max_size=20))
def test_reader_raises_only_format_errors(texts):
    reader = GeminiReader(Path("chats/session-x.jsonl"), ImportReport())
    for number, text in enumerate(texts, 1):
        try:
            kind, record = parse_line(text)
            reader.feed(kind, record, number * 100, number)
        except ImportFormatError:
            pass
    assert_well_formed(reader.session(end_offset=len(texts) * 100, start_offset=0, live=False, legacy=False))


def test_line_parser_for_watch(tmp_path: Path):
    parser = gemini.open_parser(tmp_path / "chats" / "session-w.jsonl", ImportReport())
    feed = lambda record: parser.feed_line(json.dumps(record) + "\n")  # noqa: E731
    feed(HEADER)
    feed(user("u1", "list files"))
    assert parser.take(final=False) == [] and parser.holding()
    feed(reply("g1", "", calls=[call("c1", None, status="executing")]))
    assert [n.id for s in parser.take(final=False) for n in s.nodes] == ["u1"]
    assert parser.take(final=False, idle=True) == []  # its tool is still running
    feed(reply("g1", "", calls=[call("c1", "a.txt")]))
    taken = [n for s in parser.take(final=False, idle=True) for n in s.nodes]
    assert [(n.id, n.content) for n in taken] == [("g1", ""), ("c1", "a.txt")]
    assert not parser.holding()
    feed(reply("g2", "One file."))
    assert [n.id for s in parser.take(final=True) for n in s.nodes] == ["g2"]


@st.composite
def chats(draw):
    """A random well-formed chat: messages, re-appended updates, rewinds, history replacements."""
    records: list = [HEADER]
    ids: list[str] = []
    for n in range(draw(st.integers(1, 10))):
        step = draw(st.sampled_from(["user", "reply", "tools", "rewind", "set", "meta"]))
        if step == "user":
            records.append(user(f"u{n}", f"question {n}"))
            ids.append(f"u{n}")
        elif step == "reply":
            records.append(reply(f"g{n}", f"answer {n}"))
            ids.append(f"g{n}")
        elif step == "tools":
            records.append(reply(f"g{n}", "", calls=[call(f"c{n}", None, status="executing")]))
            records.append(reply(f"g{n}", "", calls=[call(f"c{n}", f"out {n}")]))
            ids.append(f"g{n}")
        elif step == "rewind" and ids:
            records.append({"$rewindTo": draw(st.sampled_from(ids))})
        elif step == "set" and ids:
            records.append(
                {
                    "$set": {
                        "messages": [user(i, i) if i.startswith("u") else reply(i, i) for i in ids[-2:]]
                        + [user(f"s{n}", "summary")]
                    }
                }
            )
            ids.append(f"s{n}")
        else:
            records.append({"$set": {"summary": f"title {n}"}})
    return records


@settings(max_examples=40, deadline=None)
@given(chats(), st.lists(st.integers(1, 30), max_size=6))
def test_takes_while_growing_equal_one_whole_parse(records, cuts):
    lines = [(json.dumps(r) + "\n").encode() for r in records]
    parser = gemini.open_parser("chats/session-p.jsonl", ImportReport())
    seen: dict = {}
    fed = 0
    for position in [*sorted({min(c, len(lines)) for c in cuts}), len(lines)]:
        for line in lines[fed:position]:
            parser.feed_line(line)
        fed = position
        for session in parser.take(final=position == len(lines)):
            assert_well_formed(session, seen)
            for node in session.nodes:
                assert node.id not in seen
                seen[node.id] = node
    whole = GeminiParser("chats/session-p.jsonl", ImportReport())
    for line in lines:
        whole.feed_line(line)
    expected = [n for s in whole.take(final=True) for n in s.nodes]
    assert seen == {n.id: n for n in expected}
