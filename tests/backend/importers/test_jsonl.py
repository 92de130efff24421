"""The generic JSONL format: parsing, speakers, branches, tools, bad lines, round trip."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.jsonl import Message, format_line, parse_line
from opmem_tui.backend.store.sessions import SessionStore

parse_file = SOURCES["jsonl"].parse_file


def write(path: Path, *records: dict | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_two_sessions_in_one_file_with_speakers_titles_and_epoch_times(tmp_path: Path) -> None:
    path = write(
        tmp_path / "talk.jsonl",
        {
            "session": "s1",
            "id": "1",
            "role": "user",
            "speaker": "Caroline",
            "content": "Hi Mel!",
            "timestamp": 1700000000,
            "title": "Catch-up",
        },
        {"session": "s2", "id": "1", "role": "user", "content": "other", "timestamp": "2024-01-02T03:04:05Z"},
        {
            "session": "s1",
            "id": "2",
            "role": "assistant",
            "speaker": "Melanie",
            "content": "Hey!",
            "timestamp": 1700000005000,
        },
    )
    report = ImportReport()
    sessions = {s.native_id: s for s in parse_file(path, report)}
    assert report.warnings == []
    s1 = sessions["s1"]
    assert s1.title == "Catch-up" and s1.extra == {"title_source": "user"}
    assert [(n.id, n.parent_id, n.metadata["speaker"]) for n in s1.nodes] == [
        ("1", None, "Caroline"),
        ("2", "1", "Melanie"),
    ]
    assert s1.nodes[1].created_at == 1700000005.0  # milliseconds understood
    assert sessions["s2"].nodes[0].created_at == 1704164645.0


def test_explicit_parents_make_branches_and_tools_attach_to_their_caller(
    tmp_path: Path, store: SessionStore, home
) -> None:
    path = write(
        tmp_path / "b.jsonl",
        {"session": "b", "id": "u1", "role": "user", "content": "start"},
        {"session": "b", "id": "a1", "role": "assistant", "content": "calling"},
        {"session": "b", "id": "t1", "role": "tool", "name": "grep", "input": {"q": "x"}, "content": "found"},
        {"session": "b", "id": "u2", "role": "user", "content": "left"},
        {"session": "b", "id": "u3", "role": "user", "content": "right", "parent": "a1"},
    )
    report = run_import(home, "jsonl", [path])
    assert (report.new_sessions, report.nodes, report.warnings) == (1, 5, [])
    tool = store.get_node("jsonl-b", "t1")
    assert (tool.called_by, tool.name, tool.input, tool.content) == ("a1", "grep", {"q": "x"}, "found")
    assert store.get_node("jsonl-b", "u2").parent_id == "a1" and store.get_node("jsonl-b", "u3").parent_id == "a1"
    assert len(store.branches("jsonl-b")) == 2


def test_bad_lines_are_warnings_naming_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "bad.jsonl",
        {"session": "s", "id": "1", "role": "user", "content": "ok"},
        "{not json",
        {"session": "s", "id": "2", "role": "robot", "content": "x"},
        {"session": "s", "id": "3", "role": "user", "content": 5},
        {"session": "s", "id": "1", "role": "user", "content": "dup"},
        {"session": "s", "id": "4", "role": "user", "content": "x", "parent": "nope"},
        {"session": "s", "id": "5", "role": "user", "content": "x", "timestamp": "yesterday"},
        {"session": "s", "id": "6", "role": "tool", "content": "orphan tool"},
        {"session": "s", "id": "7", "role": "assistant", "content": "still imported"},
    )
    report = ImportReport()
    [session] = parse_file(path, report)
    lines = [w.split(": ", 1)[0] for w in report.warnings]
    assert lines == [f"{path}:{n}" for n in (2, 3, 4, 5, 6, 7, 8)]
    assert "role" in report.warnings[1] and "duplicate id" in report.warnings[3]
    assert [n.id for n in session.nodes] == ["1", "6", "7"]
    assert session.nodes[1].role == "system" and session.nodes[1].metadata["role_given"] == "tool"


messages = st.builds(
    Message,
    session=st.text(min_size=1, max_size=12),
    id=st.text(min_size=1, max_size=12),
    role=st.sampled_from(["user", "assistant", "system"]),
    content=st.text(max_size=200),
    speaker=st.none() | st.text(min_size=1, max_size=10),
    timestamp=st.sampled_from([0.0, 1700000000.0, 1700000000.25]),
    title=st.none() | st.text(min_size=1, max_size=20),
    name=st.none() | st.text(min_size=1, max_size=10),
    input=st.none() | st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
    metadata=st.dictionaries(st.text(max_size=5).filter(lambda k: k != "speaker"), st.integers(), max_size=3),
)


@given(messages)
@settings(max_examples=200, deadline=None)
def test_round_trip_line(message: Message) -> None:
    assert parse_line(format_line(message)) == message


@given(st.lists(messages, min_size=1, max_size=8))
@settings(max_examples=50, deadline=None)
def test_round_trip_file(tmp_path_factory, batch: list[Message]) -> None:
    folder = tmp_path_factory.mktemp("rt")
    seen: set[tuple[str, str]] = set()
    unique = [m for m in batch if (m.session, m.id) not in seen and not seen.add((m.session, m.id))]
    path = folder / "rt.jsonl"
    path.write_text("".join(format_line(m) + "\n" for m in unique))
    report = ImportReport()
    nodes = {(s.native_id, n.id): n for s in parse_file(path, report) for n in s.nodes}
    assert report.warnings == []
    for m in unique:
        node = nodes[(m.session, m.id)]
        assert (node.role, node.content, node.name, node.input, node.created_at) == (
            m.role,
            m.content,
            m.name,
            m.input,
            m.timestamp,
        )
        assert node.metadata.get("speaker") == m.speaker
