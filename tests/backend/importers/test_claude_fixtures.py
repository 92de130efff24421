"""Real Claude Code transcripts (../shared/fixtures, skipped when absent) imported into a real store.

The expected numbers were established by reading the files record by record; each is explained.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.ingest import ingest
from opmem_tui.backend.importers.session_ids import session_id_for
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import fixture_file

parse_file = SOURCES["claude"].parse_file


def multi_child_parents(path: Path) -> list[str]:
    """uuids with two or more children by parentUuid: the raw forks of the file."""
    kids = Counter(json.loads(line).get("parentUuid") for line in path.read_text().splitlines())
    return sorted(uuid for uuid, n in kids.items() if uuid and n > 1)


def imported(store: SessionStore, path: Path) -> str:
    report = ImportReport()
    sessions = parse_file(path, report, final=True)
    assert report.warnings == [] and len(sessions) == 1
    return ingest(store, sessions[0], report)


def test_spotter_short(store: SessionStore) -> None:
    """Claude Code 2.1.38, 15 lines.

    - 1 turn: line 4 is the only typed prompt ("mix phx.server doesnt seem to start"); line 13 is
      the "[Request interrupted by user for tool use]" marker, lines 11-12 are tool_result carriers.
    - 1 assistant node: lines 5, 6, 7, 8 and 10 are one streamed reply (message.id ...pYiiQa):
      text "\\n\\n", thinking, text, tool_use Bash, tool_use Glob.
    - 2 tool nodes (Bash, Glob), both rejected by the user (is_error true).
    - 3 system nodes: the interrupt marker and the two /model local_command records (14-15).
    - 1 branch: the one raw fork (194d33b0: a hook progress record whose child is the Glob call
      of the same reply, beside the Bash result) is a recording artifact.
    """
    path = fixture_file("claude-code/spotter-short.jsonl")
    assert multi_child_parents(path) == ["194d33b0-6cf7-4c54-8200-07dfd3fb88cf"]
    sid = imported(store, path)
    assert sid == "cc-spotter-short"
    nodes = store.get_nodes(sid)
    roles = Counter(n.role for n in nodes)
    assert roles == {"user": 1, "assistant": 1, "tool": 2, "system": 3}
    tools = [n for n in nodes if n.role == "tool"]
    assert [t.name for t in tools] == ["Bash", "Glob"] and all(t.metadata["is_error"] for t in tools)
    reply = next(n for n in nodes if n.role == "assistant")
    assert reply.id == "msg_01MKH1ccEGrZGNPvu8pYiiQa" and "Phoenix server" in reply.metadata["thinking"]
    assert all(t.called_by == reply.id for t in tools)
    turns = store.get_turns(sid)
    assert len(turns) == 1 and len(turns[0].nodes) == 7 and turns[0].commit
    assert [b.name for b in store.branches(sid)] == ["main"]
    meta = store.get_meta(sid)
    assert meta.source == "claude-code" and meta.extra["cwd"] == "/home/marco/projects/spotter"
    assert meta.extra["model"] == "claude-opus-4-6" and meta.extra["git_branch"] == "master"
    assert meta.source_ref == {"file": str(path), "native_id": "spotter-short"}
    assert all(n.metadata["source_id"] for n in nodes)


def test_spotter_tool_heavy(store: SessionStore) -> None:
    """Claude Code 2.1.38, 39 lines.

    - 2 turns: typed prompts at line 4 ("start phoenix in background") and line 26 ("scrolling
      back in xterm.js ..."); lines 18 and 39 are interrupt markers, 20-22 the /mcp command echo.
    - 4 assistant nodes: message ids ...K7hVSg (line 5), ...gyo9kz (12-13), ...DSj7e6 (27-30),
      ...5jdsym (34 and 37: the same reply continues after the Read result).
    - 6 tool nodes: Bash, Bash, WebSearch, Glob, Read, WebFetch.
    - 7 system nodes: interrupt (18),
      caveat (20, isMeta), /mcp echo and stdout (21-22), two local_command records (23-24),
      interrupt (39). The "/mcp" enqueued at line 9 and removed at 10 is no node: it ran as the
      command of lines 20-22 (one input, counted once).
    - 1 branch: the file has five raw forks, all recording artifacts: hook progress beside a
      result under 8565db, 0c9d6d, 501990 and 9c0157, and under 479992 the parallel Glob call of
      the same reply beside the WebSearch result.
    """
    path = fixture_file("claude-code/spotter-tool_heavy.jsonl")
    assert len(multi_child_parents(path)) == 5
    sid = imported(store, path)
    nodes = store.get_nodes(sid)
    assert Counter(n.role for n in nodes) == {"user": 2, "assistant": 4, "tool": 6, "system": 7}
    assert [n.name for n in nodes if n.role == "tool"] == ["Bash", "Bash", "WebSearch", "Glob", "Read", "WebFetch"]
    assert [n.content for n in nodes if n.content.strip() == "/mcp" or n.metadata.get("queued")] == []
    turns = store.get_turns(sid)
    assert [len(t.nodes) for t in turns] == [11, 8]
    assert [t.user.content[:20] for t in turns] == ["start phoenix in bac", "scrolling back in xt"]
    assert all(t.commit for t in turns) and all(not t.fork_heads for t in turns)
    assert [b.name for b in store.branches(sid)] == ["main"]
    assert len(store.session_commits(sid)) == 2
    assert len(store.get_branch(sid)) == len(nodes)  # nothing off the main line


def test_spotter_subagent_and_compaction(store: SessionStore) -> None:
    """2.1.39 subagents/ files of session ae4a77f8 (its trunk is not in the fixtures).

    agent-aac57f5: 1 turn (line 1 is the Task prompt), 3 assistant nodes (message ids ...uinNKs,
    ...fsVEw3 (lines 21-24 and 29-31, continuing after two WebFetch results), ...7cHH6u),
    12 tools (6 WebSearch, 6 WebFetch). agent-acompact-946d2b: the compaction agent, one prompt
    and one reply; its first record points into the trunk (parentUuid 23b73f9a...).
    """
    sub = fixture_file("claude-code/spotter-subagents/agent-aac57f5.jsonl")
    compact = fixture_file("claude-code/spotter-subagents/agent-acompact-946d2b.jsonl")
    trunk = "cc-ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    sid = imported(store, sub)
    assert sid == session_id_for("claude-code", "ae4a77f8-aedd-4bc1-888f-c94edc91af04/agent-aac57f5")
    assert sid.startswith(f"{trunk}-agent-aac57f5-")  # a subagent's "/" is not safe: a hash follows
    nodes = store.get_nodes(sid)
    assert Counter(n.role for n in nodes) == {"user": 1, "assistant": 3, "tool": 12}
    assert Counter(n.name for n in nodes if n.role == "tool") == {"WebSearch": 6, "WebFetch": 6}
    assert len(store.get_turns(sid)) == 1
    meta = store.get_meta(sid)
    assert meta.extra["kind"] == "subagent" and meta.extra["parent_session"] == trunk
    csid = imported(store, compact)
    cmeta = store.get_meta(csid)
    assert cmeta.extra["kind"] == "compaction" and cmeta.extra["parent_session"] == trunk
    assert cmeta.extra["source_extra"]["parent_record"] == "23b73f9a-2123-4b8e-81a2-b98378c7498f"
    assert [n.role for n in store.get_nodes(csid)] == ["user", "assistant"]


def test_catalog_parses_every_record_type_without_errors(store: SessionStore) -> None:
    """A catalog of record shapes (2.1.80-2.1.220, many values trimmed): no exception, no warning."""
    path = fixture_file("catalog/agent-sessions-claude-small.jsonl")
    report = ImportReport()
    sessions = parse_file(path, report, final=True)
    for session in sessions:
        ingest(store, session, report)
    assert report.warnings == [] and report.unknown_records == {}
    main = next(s for s in sessions if s.kind == "trunk")
    assert (main.title, main.extra["title_source"]) == ("Stage0 small fixture", "user")
    counts = main.extra["record_counts"]
    for kind in (
        "attachment",
        "progress",
        "queue-operation",
        "summary",
        "custom-title",
        "ai-title",
        "agent-name",
        "last-prompt",
        "permission-mode",
        "mode",
        "pr-link",
        "frame-link",
        "worktree-state",
        "relocated",
        "bridge-session",
        "started",
        "result",
        "atis-latch",
        "file-history-snapshot",
    ):
        assert counts.get(kind), kind
    assert {m.id for m in store.list_sessions().sessions} >= {"cc-agent-sessions-claude-small"}


def test_reimport_is_a_no_op(home, store: SessionStore) -> None:
    folder = fixture_file("claude-code/spotter-short.jsonl").parent
    first = run_import(home, "claude", [folder])
    assert first.new_sessions == 4 and first.turns == 5 and first.warnings == []
    before = {
        m.id: (len(store.get_nodes(m.id)), len(store.session_commits(m.id))) for m in store.list_sessions().sessions
    }
    again = run_import(home, "claude", [folder])  # unchanged files are skipped outright
    assert (again.skipped, again.nodes, again.turns) == (4, 0, 0)
    forced = run_import(home, "claude", [folder], force=True)  # parsed again: still nothing new
    assert (forced.sessions, forced.new_sessions, forced.nodes, forced.turns) == (4, 0, 0, 0)
    after = {
        m.id: (len(store.get_nodes(m.id)), len(store.session_commits(m.id))) for m in store.list_sessions().sessions
    }
    assert after == before


def test_appended_lines_import_only_the_new_turn(home, store: SessionStore, tmp_path: Path) -> None:
    source = fixture_file("claude-code/spotter-tool_heavy.jsonl")
    lines = source.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "projects" / "p" / "5e55a0e0-0000-4000-8000-000000000001.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"".join(lines[:25]))  # through the end of turn 1
    os.utime(copy, (1_600_000_000, 1_600_000_000))
    first = run_import(home, "claude", [copy])
    sid = "cc-5e55a0e0-0000-4000-8000-000000000001"
    assert (first.nodes, first.turns) == (11, 1)
    commits = store.session_commits(sid)
    with open(copy, "ab") as handle:
        handle.write(b"".join(lines[25:]))
    os.utime(copy, (1_600_000_100, 1_600_000_100))
    second = run_import(home, "claude", [copy])
    assert (second.nodes, second.turns, second.new_sessions) == (8, 1, 0)
    after = store.session_commits(sid)
    assert len(after) == 2 and after[1].oid == commits[0].oid  # turn 1's commit untouched
    assert after[0].summary.startswith("turn 2: scrolling back")
    assert [len(t.nodes) for t in store.get_turns(sid)] == [11, 8]


def test_fixture_folder_copy_imports_subagents_under_their_trunk(home, store: SessionStore, tmp_path: Path) -> None:
    """The real subagent files placed where 2.1.x writes them: <session>/subagents/agent-*.jsonl."""
    src = fixture_file("claude-code/spotter-subagents/agent-aac57f5.jsonl").parent
    project = tmp_path / "projects" / "-home-u-spotter"
    dest = project / "ae4a77f8-aedd-4bc1-888f-c94edc91af04" / "subagents"
    shutil.copytree(src, dest)
    for f in dest.iterdir():
        os.utime(f, (1_600_000_000, 1_600_000_000))
    report = run_import(home, "claude", [tmp_path / "projects"])
    assert report.new_sessions == 2 and report.warnings == []
    kinds = sorted(m.extra["kind"] for m in store.list_sessions().sessions)
    assert kinds == ["compaction", "subagent"]
