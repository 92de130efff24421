"""Property tests: malformed input raises only ImportFormatError; whatever parses gives sound output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import claude_records, jsonl
from opmem_tui.backend.importers.base import ImportedSession, ImportFormatError, ImportReport
from opmem_tui.backend.importers.claude_parser import ClaudeParser

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=5,
)

UUIDS = ["u1", "u2", "u3", "u4", "u5", None]
TOOL_IDS = ["toolu_1", "toolu_2", None]
block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image", "redacted_thinking", "mystery"])},
    optional={
        "text": st.text(max_size=20) | json_values,
        "thinking": st.text(max_size=20) | json_values,
        "id": st.sampled_from(TOOL_IDS) | json_values,
        "tool_use_id": st.sampled_from(TOOL_IDS) | json_values,
        "name": st.sampled_from(["Bash", "Task"]) | json_values,
        "input": json_values,
        "content": st.text(max_size=20) | json_values,
        "is_error": json_values,
    },
)
message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant"]),
        "id": st.sampled_from(["msg_1", "msg_2"]) | json_values,
        "model": st.text(max_size=8) | json_values,
        "content": st.text(max_size=20) | st.lists(block | json_values, max_size=4) | json_values,
        "usage": st.fixed_dictionaries({}, optional={"output_tokens": json_values, "input_tokens": st.integers()})
        | json_values,
        "stop_reason": json_values,
    },
)
record = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "user",
                "assistant",
                "system",
                "progress",
                "attachment",
                "queue-operation",
                "summary",
                "custom-title",
                "ai-title",
                "file-history-snapshot",
                "pr-link",
                "worktree-state",
                "never-seen",
            ]
        )
        | json_values
    },
    optional={
        "uuid": st.sampled_from(UUIDS) | json_values,
        "parentUuid": st.sampled_from(UUIDS) | json_values,
        "logicalParentUuid": st.sampled_from(UUIDS) | json_values,
        "isSidechain": st.booleans() | json_values,
        "agentId": st.sampled_from(["a1", "a2"]) | json_values,
        "isMeta": json_values,
        "isCompactSummary": json_values,
        "timestamp": st.sampled_from(["2025-01-01T00:00:00Z", "2025-01-01T00:00:01.5+02:00", "bad"]) | json_values,
        "message": message | json_values,
        "subtype": st.sampled_from(["compact_boundary", "local_command", "api_error", "turn_duration", "odd"])
        | json_values,
        "content": json_values,
        "data": st.fixed_dictionaries(
            {"type": st.sampled_from(["agent_progress", "hook_progress"])}, optional={"agentId": json_values}
        )
        | json_values,
        "attachment": st.fixed_dictionaries(
            {"type": st.sampled_from(["queued_command", "x"])}, optional={"prompt": json_values}
        )
        | json_values,
        "operation": st.sampled_from(["enqueue", "dequeue"]) | json_values,
        "toolUseResult": json_values,
        "sourceToolUseID": st.sampled_from(TOOL_IDS) | json_values,
        "sourceToolAssistantUUID": st.sampled_from(UUIDS) | json_values,
        "cwd": json_values,
        "gitBranch": json_values,
        "customTitle": json_values,
        "aiTitle": json_values,
        "summary": json_values,
        "leafUuid": json_values,
        "requestId": json_values,
        "compactMetadata": json_values,
    },
)


def assert_sound(sessions: list[ImportedSession]) -> None:
    """Parents and callers precede their nodes, ids are unique, roles are valid."""
    for session in sessions:
        seen: dict[str, str] = {}
        for node in session.nodes:
            assert node.role in ("user", "assistant", "system", "tool")
            assert node.id not in seen, node.id
            if node.parent_id is not None:
                assert node.parent_id in seen or node.parent_id in previously_emitted.get(session.native_id, set())
            if node.called_by is not None:
                assert node.called_by in seen or node.called_by in previously_emitted.get(session.native_id, set())
                assert node.role == "tool"
            assert isinstance(node.content, str)
            seen[node.id] = node.role
        previously_emitted.setdefault(session.native_id, set()).update(seen)


previously_emitted: dict[str, set[str]] = {}


@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b))
@settings(max_examples=300)
def test_claude_parse_line_raises_only_format_errors(raw: Any) -> None:
    try:
        result = claude_records.parse_line(raw)
    except ImportFormatError:
        return
    assert isinstance(result, dict) and isinstance(result["type"], str)


@given(st.lists(record, max_size=20), st.booleans())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_claude_records_raise_only_format_errors_and_emit_sound_sessions(records: list[dict], split: bool) -> None:
    previously_emitted.clear()
    parser = ClaudeParser(Path("/nowhere/11111111-2222-3333-4444-555555555555.jsonl"), ImportReport())
    for number, rec in enumerate(records, 1):
        try:
            parser.feed_record(rec, number)
        except ImportFormatError:
            pass
        if split and number % 3 == 0:
            assert_sound(parser.take(final=False, idle=number % 2 == 0))
    assert_sound(parser.take(final=True))
    assert not parser.holding()


@given(st.lists(record, max_size=8))
@settings(max_examples=50, deadline=None)
def test_claude_feed_line_never_raises(records: list[dict]) -> None:
    report = ImportReport()
    parser = ClaudeParser(Path("/nowhere/x.jsonl"), report)
    for number, rec in enumerate(records, 1):
        try:
            line = json.dumps(rec)
        except ValueError:
            continue
        parser.feed_line(line[: len(line) // (1 + number % 2)] + "\n", number)  # some cut in half
    parser.take(final=True)
    assert all(w.startswith("/nowhere/x.jsonl:") for w in report.warnings)


@given(st.text(max_size=200) | st.binary(max_size=200))
@settings(max_examples=300)
def test_jsonl_parse_line_raises_only_format_errors(raw: Any) -> None:
    try:
        jsonl.parse_line(raw)
    except ImportFormatError:
        pass


jsonl_record = st.fixed_dictionaries(
    {},
    optional={
        "session": st.sampled_from(["s1", "s2"]) | json_values,
        "id": st.sampled_from(["1", "2", "3"]) | json_values,
        "role": st.sampled_from(["user", "assistant", "system", "tool"]) | json_values,
        "content": st.text(max_size=10) | json_values,
        "speaker": json_values,
        "timestamp": st.sampled_from(["2025-01-01T00:00:00Z", 1700000000, "nope"]) | json_values,
        "title": json_values,
        "parent": st.sampled_from(["1", "2", "9"]) | json_values,
        "metadata": json_values,
        "name": json_values,
    },
)


@given(st.lists(jsonl_record, max_size=12))
@settings(max_examples=100, deadline=None)
def test_jsonl_records_raise_only_format_errors_and_emit_sound_sessions(records: list[dict]) -> None:
    previously_emitted.clear()
    parser = jsonl.JsonlParser(Path("/nowhere/x.jsonl"), ImportReport())
    for number, rec in enumerate(records, 1):
        try:
            line = json.dumps(rec)
        except ValueError:
            continue
        parser.feed_line(line, number)
    assert_sound(parser.take(final=True))
