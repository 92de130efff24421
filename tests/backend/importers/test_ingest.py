"""ingest(): deterministic ids, idempotence, one commit per turn, growth, titles, links, projects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.importers.base import UNSTORED, ImportedSession, ImportReport
from opmem_tui.backend.importers.claude_parser import ClaudeParser
from opmem_tui.backend.importers.ingest import ingest
from opmem_tui.backend.importers.session_ids import node_id_for, session_id_for
from opmem_tui.backend.model import SESSION_ID_RE, Node
from opmem_tui.backend.store.session_repo import NODE_ID_RE
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import Transcript, text, tool_use


def N(sid: str, role: str, content: str = "", parent: str | None = None, **kw) -> Node:
    return Node(sid, UNSTORED, role, content or f"{role} {sid}", parent_id=parent, **kw)


def session(*nodes: Node, native: str = "abc", **kw) -> ImportedSession:
    return ImportedSession(source="jsonl", native_id=native, source_file="/tmp/x.jsonl", nodes=tuple(nodes), **kw)


def two_turns() -> ImportedSession:
    return session(
        N("u1", "user", "first question"),
        N("a1", "assistant", "first answer", "u1"),
        N("t1", "tool", "tool output", "a1", called_by="a1", name="read", input={"path": "x"}),
        N("u2", "user", "second question", "a1"),
        N("a2", "assistant", "second answer", "u2"),
        head="a2",
    )


@pytest.mark.parametrize(
    "source, native, expected",
    [
        ("claude-code", "0f8e6d1c-aaaa-4bbb-8ccc-123456789abc", "cc-0f8e6d1c-aaaa-4bbb-8ccc-123456789abc"),
        ("claude-code", "0f8e/agent-a1b2", None),
        ("codex", "019a93b9-f380-7600-98ff-940e6b99603c", "codex-019a93b9-f380-7600-98ff-940e6b99603c"),
        ("jsonl", "locomo conv 26", None),
        ("jsonl", "x" * 300, None),
        ("jsonl", "../../etc", None),
        ("new agent", "", None),
    ],
)
def test_session_ids_are_valid_and_stable(source: str, native: str, expected: str | None) -> None:
    sid = session_id_for(source, native)
    assert SESSION_ID_RE.fullmatch(sid) and sid == session_id_for(source, native)
    if expected:
        assert sid == expected
    assert session_id_for(source, native + "!") != sid


def test_node_ids_keep_valid_source_ids_and_hash_the_rest() -> None:
    assert node_id_for("msg_01ABC") == "msg_01ABC"
    assert node_id_for("toolu_1.r0") == "toolu_1.r0"
    for odd in ("a/b", "x" * 200, "file.jsonl:12#3", "h-looks-hashed", "ü"):
        nid = node_id_for(odd)
        assert NODE_ID_RE.fullmatch(nid) and nid.startswith("h-") and nid == node_id_for(odd)
    assert node_id_for("a/b") != node_id_for("a/c")


def test_ingest_writes_nodes_commits_each_turn_and_is_idempotent(store: SessionStore) -> None:
    report = ImportReport()
    sid = ingest(store, two_turns(), report)
    assert sid == "jsonl-abc"
    assert (report.sessions, report.new_sessions, report.nodes, report.turns) == (1, 1, 5, 2)
    turns = store.get_turns(sid)
    assert [[n.id for n in t.nodes] for t in turns] == [["u1", "a1", "t1"], ["u2", "a2"]]
    tool = store.get_node(sid, "t1")
    assert (tool.called_by, tool.parent_id, tool.name, tool.input) == ("a1", "a1", "read", {"path": "x"})
    assert tool.metadata["source_id"] == "t1"
    commits = store.session_commits(sid)
    assert [c.summary for c in commits] == ["turn 2: second question", "turn 1: first question"]
    meta = store.get_meta(sid)
    assert meta.source == "jsonl" and meta.source_ref == {"file": "/tmp/x.jsonl", "native_id": "abc"}
    again = ImportReport()
    assert ingest(store, two_turns(), again) == sid
    assert (again.new_sessions, again.nodes, again.turns) == (0, 0, 0)
    assert len(store.session_commits(sid)) == 2 and len(store.get_nodes(sid)) == 5
    git = subprocess.run(["git", "-C", str(store.path_for(sid)), "fsck"], capture_output=True, text=True)
    assert git.returncode == 0, git.stderr


def test_a_growing_turn_gets_a_newer_commit_and_new_turns_their_own(store: SessionStore) -> None:
    ingest(store, session(N("u1", "user", "q"), N("a1", "assistant", "partial", "u1")), ImportReport())
    report = ImportReport()
    ingest(
        store,
        session(
            N("u1", "user", "q"),
            N("a1", "assistant", "partial", "u1"),
            N("a1b", "assistant", "more", "a1"),
            N("u2", "user", "next", "a1b"),
            N("a2", "assistant", "done", "u2"),
        ),
        report,
    )
    assert (report.nodes, report.turns) == (3, 2)
    commits = store.session_commits("jsonl-abc")
    assert [c.turn for c in commits] == [2, 1, 1]
    assert [t.commit for t in store.get_turns("jsonl-abc")] == [commits[1].oid, commits[0].oid]


def test_branches_from_a_rewind(store: SessionStore) -> None:
    imported = session(
        N("u1", "user", "start"),
        N("a1", "assistant", "ok", "u1"),
        N("u2", "user", "try X", "a1"),
        N("a2", "assistant", "did X", "u2"),
        N("u3", "user", "try Y", "a1"),
        N("a3", "assistant", "did Y", "u3"),
        head="a3",
    )
    report = ImportReport()
    sid = ingest(store, imported, report)
    assert report.turns == 3
    assert store.head(sid) == "a3"
    names = sorted(b.name for b in store.branches(sid))
    assert names == ["main", "retry-a3"]
    turns = store.get_turns(sid)
    assert [t.user.content for t in turns] == ["start", "try Y"] and turns[1].fork_heads == ("a2",)


def test_head_follows_the_imported_head(store: SessionStore) -> None:
    imported = session(
        N("u1", "user", "start"),
        N("a1", "assistant", "ok", "u1"),
        N("u2", "user", "newer line", "a1"),
        N("u3", "user", "older line written last", "a1"),
        head="u2",
    )
    sid = ingest(store, imported, ImportReport())
    assert store.head(sid) == "u2"


def test_titles_from_the_agent_never_replace_a_users_rename(store: SessionStore) -> None:
    first = session(N("u1", "user", "hello"), title="AI title", extra={"title_source": "llm"})
    sid = ingest(store, first, ImportReport())
    meta = store.get_meta(sid)
    assert (meta.title, meta.title_source) == ("AI title", "llm")
    ingest(
        store, session(N("u1", "user", "hello"), title="Better AI title", extra={"title_source": "llm"}), ImportReport()
    )
    assert store.get_meta(sid).title == "Better AI title"
    store.rename_session(sid, "Mine")
    ingest(
        store, session(N("u1", "user", "hello"), title="Even better", extra={"title_source": "user"}), ImportReport()
    )
    meta = store.get_meta(sid)
    assert (meta.title, meta.title_source) == ("Mine", "user")


def test_session_meta_keeps_cwd_model_branch_and_extras(store: SessionStore) -> None:
    imported = session(
        N("u1", "user", "x"),
        cwd="/work/p",
        model="m-1",
        git_branch="dev",
        kind="trunk",
        extra={"usage": {"output_tokens": 5}, "title_source": "llm"},
    )
    sid = ingest(store, imported, ImportReport())
    extra = store.get_meta(sid).extra
    assert (extra["cwd"], extra["model"], extra["git_branch"], extra["kind"]) == ("/work/p", "m-1", "dev", "trunk")
    assert extra["source_extra"] == {"usage": {"output_tokens": 5}}
    ingest(store, session(N("u1", "user", "x"), cwd="/work/p", model="m-2", git_branch="dev"), ImportReport())
    assert store.get_meta(sid).extra["model"] == "m-2"


@pytest.mark.parametrize("parent_first", [True, False])
def test_subagent_links_in_either_order(store: SessionStore, parent_first: bool) -> None:
    parent = session(
        N("u1", "user", "delegate"),
        N("a1", "assistant", "spawning", "u1"),
        N("toolu_task", "tool", "done", "a1", called_by="a1", name="Task"),
        native="trunk",
        extra={"children": {"trunk/agent-x1": "toolu_task"}},
    )
    child = session(N("s1", "user", "sub job"), native="trunk/agent-x1", kind="subagent", parent_native_id="trunk")
    order = [parent, child] if parent_first else [child, parent]
    for item in order:
        ingest(store, item, ImportReport())
    child_id = session_id_for("jsonl", "trunk/agent-x1")
    meta = store.get_meta(child_id).extra
    assert meta["parent_session"] == "jsonl-trunk" and meta["parent_node"] == "toolu_task"
    assert store.get_meta("jsonl-trunk").extra["subagents"] == {child_id: "toolu_task"}


def test_on_project_called_for_sessions_in_a_git_repository(store: SessionStore, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    pygit2.init_repository(str(repo))
    calls: list[tuple[str, str]] = []
    ingest(
        store,
        session(N("u1", "user", "x"), cwd=str(repo / "src")),
        ImportReport(),
        on_project=lambda s, c: calls.append((s, c)),
    )
    assert calls == [("jsonl-abc", str(repo / "src"))]
    ingest(
        store,
        session(N("u1", "user", "x"), native="elsewhere", cwd=str(tmp_path)),
        ImportReport(),
        on_project=lambda s, c: calls.append((s, c)),
    )
    ingest(
        store,
        session(N("u1", "user", "x"), native="gone", cwd="/no/such/dir"),
        ImportReport(),
        on_project=lambda s, c: calls.append((s, c)),
    )
    assert len(calls) == 1
    store.update_session("jsonl-abc", project_id="p1")
    ingest(
        store,
        session(N("u1", "user", "x"), N("a1", "assistant", "y", "u1"), cwd=str(repo)),
        ImportReport(),
        on_project=lambda s, c: calls.append((s, c)),
    )
    assert len(calls) == 1  # already bound: not asked again


def test_missing_parent_becomes_a_root_with_a_warning(store: SessionStore) -> None:
    report = ImportReport()
    sid = ingest(store, session(N("u1", "user", "x", "ghost")), report)
    assert store.get_node(sid, "u1").parent_id is None
    assert report.warnings and "parent is missing" in report.warnings[0]


def test_incremental_takes_from_a_claude_parser(store: SessionStore, tmp_path: Path) -> None:
    """Feeding a transcript in pieces gives the same nodes as one pass, with a commit per piece."""
    t = Transcript()
    t.prompt("one")
    a = t.assistant("msg_A", text("reply one"), tool_use("toolu_1"))
    t.result("toolu_1", "out", parent=a)
    t.assistant("msg_B", text("wrap up"))
    t.prompt("two")
    t.assistant("msg_C", text("reply two"))
    lines = t.lines()
    report = ImportReport()
    parser = ClaudeParser(tmp_path / f"{t.session}.jsonl", report)  # named after its session, as Claude Code does
    for cut in (2, 4, 6, len(lines)):
        for number in range(parser.lines + 1, cut + 1):
            parser.feed_line(lines[number - 1], number)
        for imported in parser.take(final=cut == len(lines)):
            ingest(store, imported, report)
    whole = ClaudeParser(tmp_path / f"{t.session}.jsonl", ImportReport())
    for number, line in enumerate(lines, 1):
        whole.feed_line(line, number)
    expected = {node_id_for(n.id) for s in whole.take(final=True) for n in s.nodes}
    assert {n.id for n in store.get_nodes(f"cc-{t.session}")} == expected
    assert [t.user.content for t in store.get_turns(f"cc-{t.session}")] == ["one", "two"]
    assert report.turns >= 2 and report.warnings == []


def test_a_preamble_before_the_first_prompt_is_committed_with_turn_one(store: SessionStore) -> None:
    preamble = session(N("s0", "system", "<environment_context>cwd</environment_context>"))
    report = ImportReport()
    sid = ingest(store, preamble, report)
    assert report.turns == 0  # a commit now would be numbered as a turn of its own
    ingest(
        store,
        session(N("s0", "system", "env"), N("u1", "user", "first real prompt", "s0"), N("a1", "assistant", "ok", "u1")),
        report,
    )
    commits = store.session_commits(sid)
    assert [c.summary for c in commits] == ["turn 1: first real prompt"]
    assert [n.id for n in store.get_turns(sid)[0].nodes] == ["s0", "u1", "a1"]


def test_meta_json_is_written_when_the_batch_ends_not_per_turn(store: SessionStore) -> None:
    """An import batch commits many turns; meta.json is renamed into place once, at its end."""
    ingest(store, session(N("u1", "user", "first"), N("a1", "assistant", "one", "u1")), ImportReport())
    sid = "jsonl-abc"
    meta_path = store.path_for(sid) / "meta.json"
    with store.batch(sid) as batch:
        batch.append("user", "second", node_id="u2", parent_id="a1")
        batch.commit_turn("u2")
        batch.append("user", "third", node_id="u3", parent_id="u2")
        batch.commit_turn("u3")
        during = json.loads(meta_path.read_text())
    after = json.loads(meta_path.read_text())
    assert during["turns"] == 1 and after["turns"] == 3 and after["head_id"] == "u3"
    committed = subprocess.run(
        ["git", "-C", str(store.path_for(sid)), "show", "HEAD:meta.json"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(committed) == after
    fresh = SessionStore(store.root)
    assert (fresh.get_meta(sid).extra["turns"], fresh.head(sid)) == (3, "u3")
