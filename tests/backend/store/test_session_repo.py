"""The Session-Git contract (ARCHITECTURE.md section 3) against real repositories."""

from __future__ import annotations

import json
import subprocess
import sys

import pygit2
import pytest

from opmem_tui.backend.model import InvalidSessionId, OpmemError, SessionNotFound
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn, git


def test_lazy_creation_only_on_first_message(store: SessionStore) -> None:
    assert not (store.root / "s1").exists()
    with pytest.raises(SessionNotFound):
        store.get_meta("s1")
    store.append_message("s1", "user", "hello")
    repo = store.root / "s1"
    for part in ("meta.json", "history", "context", "workdir", ".git"):
        assert (repo / part).exists(), part
    assert git(repo, "config", "status.showUntrackedFiles").strip() == "no"


@pytest.mark.parametrize("bad", ["", "..", ".", "a/b", "x\x00y", "x" * 129, "-lead", "a b", "../etc"])
def test_invalid_session_ids_refused_before_any_path(store: SessionStore, bad: str) -> None:
    with pytest.raises(InvalidSessionId):
        store.append_message(bad, "user", "x")
    assert not store.root.exists() or not any(p.name not in (".locks",) for p in store.root.iterdir())


def test_node_files_are_json_with_contract_fields(store: SessionStore) -> None:
    user = store.append_message("s1", "user", "hi", metadata={"k": 1})
    files = sorted((store.root / "s1" / "history").iterdir())
    assert [f.name for f in files] == [f"000000-u-{user.id}.json"]
    data = json.loads(files[0].read_text())
    assert set(data) == {
        "id",
        "seq",
        "role",
        "parent_id",
        "called_by",
        "name",
        "content",
        "input",
        "reads",
        "created_at",
        "metadata",
    }
    assert data["metadata"] == {"k": 1}


def test_commit_message_format_and_tree(store: SessionStore) -> None:
    user = store.append_message(
        "s1", "user", "Fix the failing login test in auth.py please, it broke after the refactor"
    )
    a = store.append_message("s1", "assistant", "", metadata={"usage": {"input_tokens": 100, "output_tokens": 21}})
    store.append_message("s1", "tool", "ok", called_by=a.id, name="read")
    for _ in range(3):
        store.append_message("s1", "tool", "hit", called_by=a.id, name="grep")
    store.append_message("s1", "tool", "dir", called_by=a.id, name="list")
    final = store.append_message("s1", "assistant", "Fixed: the token check compared bytes to str.")
    oid = store.commit_turn("s1")
    repo = pygit2.Repository(str(store.root / "s1"))
    commit = repo[oid]
    lines = commit.message.splitlines()
    assert lines[0] == "turn 1: " + user.content[:60]
    assert len(lines[0]) == len("turn 1: ") + 60
    assert "assistant: Fixed: the token check compared bytes to str." in lines
    assert "tools: read, grep × 3, list" in lines
    assert any(item.startswith("[meta: turn took ") and "5 tools, 121 tokens]" in item for item in lines)
    assert lines[-2:] == ["Opmem-Turn: 1", f"Opmem-Head: {final.id}"]
    names = sorted(e.name for e in commit.tree["history"].peel(pygit2.Tree))
    assert len(names) == 8 and names[0].startswith(f"000000-u-{user.id}")
    assert "meta.json" in commit.tree
    # One commit per turn, never one per message.
    assert len(list(repo.walk(oid))) == 1
    store.flush()
    assert git(store.root / "s1", "status", "--porcelain").strip() in ("", "M meta.json")


def test_two_retries_fork_graph_and_fsck(store: SessionStore) -> None:
    add_turn(store, "s1", "first", "one")
    u2, a2 = add_turn(store, "s1", "second", "two")
    r1 = store.append_message("s1", "assistant", "two, retried", parent_id=u2.id)
    store.commit_turn("s1")
    r2 = store.append_message("s1", "assistant", "two, retried again", parent_id=u2.id)
    store.commit_turn("s1")
    path = store.root / "s1"
    subprocess.run(["git", "-C", str(path), "fsck", "--strict"], check=True, capture_output=True)
    graph = git(path, "log", "--all", "--graph", "--format=%s %D")
    assert graph.count("turn 2: second") == 3
    assert graph.count("|/") == 2  # two forks off turn 1
    branches = {b.name: b for b in store.branches("s1")}
    assert set(branches) == {"main", f"retry-{r1.id}", f"retry-{r2.id}"}
    assert branches[f"retry-{r2.id}"].is_current
    assert git(path, "symbolic-ref", "HEAD").strip() == f"refs/heads/retry-{r2.id}"
    turns = store.get_turns("s1")
    assert [t.number for t in turns] == [1, 2]
    assert set(turns[1].fork_heads) == {a2.id, r1.id}
    # Switching heads is cheap and moves git HEAD too.
    store.switch_head("s1", a2.id)
    assert git(path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert [n.content for n in store.get_branch("s1") if n.role == "assistant"] == ["one", "two"]
    store.flush()
    assert git(path, "status", "--porcelain").strip() in ("", "M meta.json")


def test_message_from_older_turn_forks(store: SessionStore) -> None:
    _, a1 = add_turn(store, "s1", "first", "one")
    add_turn(store, "s1", "second", "two")
    store.append_message("s1", "user", "other second", parent_id=a1.id)
    a = store.append_message("s1", "assistant", "other two")
    store.commit_turn("s1")
    assert [t.number for t in store.get_turns("s1")] == [1, 2]
    assert f"retry-{a.id}" in {b.name for b in store.branches("s1")}
    assert store.get_meta("s1").head_id == a.id


def test_turn_view_reads_commit_tree_without_moving_files(store: SessionStore) -> None:
    add_turn(store, "s1", "first", "one", tools=2)
    add_turn(store, "s1", "second", "two")
    commits = store.session_commits("s1")
    assert [c.turn for c in commits] == [2, 1]
    before = sorted(p.name for p in (store.root / "s1" / "history").iterdir())
    view = store.turn_view("s1", commits[1].oid)
    assert [n.content for n in view] == ["first", "one", "result 0", "result 1"]
    assert sorted(p.name for p in (store.root / "s1" / "history").iterdir()) == before


def test_meta_extra_keys_survive_rewrites(store: SessionStore) -> None:
    store.append_message("s1", "user", "x", session_meta={"source": "codex", "channel": "cli", "peer": {"a": 1}})
    store.commit_turn("s1")
    store.rename_session("s1", "My title")
    store.update_session("s1", project_id="p1")
    data = json.loads((store.root / "s1" / "meta.json").read_text())
    assert data["channel"] == "cli" and data["peer"] == {"a": 1} and data["source"] == "codex"
    meta = store.get_meta("s1")
    assert meta.extra["channel"] == "cli" and meta.project_id == "p1"


def test_titles_excerpt_then_user_wins(store: SessionStore) -> None:
    store.append_message("s1", "user", "  \n" + "word " * 30)
    assert store.get_meta("s1").title == ""
    store.append_message("s1", "assistant", "ok")
    store.commit_turn("s1")
    meta = store.get_meta("s1")
    assert meta.title_source == "excerpt" and meta.title.endswith("…") and len(meta.title) <= 51
    store.rename_session("s1", "Mine")
    store.title_hook = lambda meta, nodes: "LLM title"
    add_turn(store, "s1", "more", "more")
    assert store.get_meta("s1").title == "Mine"
    store.title_hook = lambda meta, nodes: "LLM title"
    add_turn(store, "s2", "a question", "an answer")
    assert (store.get_meta("s2").title, store.get_meta("s2").title_source) == ("LLM title", "llm")


def test_idempotent_node_ids(store: SessionStore) -> None:
    a = store.append_message("s1", "user", "x", node_id="native-1")
    b = store.append_message("s1", "user", "changed", node_id="native-1")
    assert a == b and len(store.get_nodes("s1")) == 1
    with pytest.raises(OpmemError):
        store.append_message("s1", "user", "x", node_id="../evil")
    with pytest.raises(OpmemError):
        store.append_message("s1", "assistant", "x", parent_id="missing")


def test_nothing_to_commit_returns_none(store: SessionStore) -> None:
    add_turn(store, "s1", "a", "b")
    assert store.commit_turn("s1") is None


def test_killed_writer_loses_nothing_and_is_backfilled(home, tmp_path) -> None:
    script = f"""
import os
from opmem_tui.backend.home import Home
s = Home({str(home.path)!r}).sessions
u = s.append_message("s1", "user", "first")
s.append_message("s1", "assistant", "one")
s.commit_turn("s1")
s.append_message("s1", "user", "second")
s.append_message("s1", "assistant", "two")
os._exit(9)  # killed between node write and commit
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    repo = home.sessions.root / "s1"
    assert git(repo, "log", "--all", "--format=%s").splitlines() == ["turn 1: first"]
    store = SessionStore(home.sessions.root)
    assert [n.content for n in store.get_branch("s1")] == ["first", "one", "second", "two"]
    assert git(repo, "log", "--format=%s").splitlines() == ["turn 2: second", "turn 1: first"]
    subprocess.run(["git", "-C", str(repo), "fsck"], check=True, capture_output=True)


def test_folder_without_git_is_migrated_once(store: SessionStore) -> None:
    add_turn(store, "s1", "first", "one", tools=1)
    add_turn(store, "s1", "second", "two")
    import shutil

    shutil.rmtree(store.root / "s1" / ".git")
    fresh = SessionStore(store.root)
    assert [t.number for t in fresh.get_turns("s1")] == [1, 2]
    log = git(store.root / "s1", "log", "--format=%s").splitlines()
    assert log == ["turn 2: second", "turn 1: first"]
    again = SessionStore(store.root)
    again.get_turns("s1")
    assert git(store.root / "s1", "log", "--format=%s").splitlines() == log


def test_corrupt_node_file_is_reported_and_session_still_reads(store: SessionStore) -> None:
    add_turn(store, "s1", "first", "one")
    bad = store.root / "s1" / "history" / "000099-a-broken.json"
    bad.write_text("{not json")
    fresh = SessionStore(store.root)
    assert [n.content for n in fresh.get_branch("s1")] == ["first", "one"]
    problems = fresh.problems("s1")
    assert problems and str(bad) in problems[0] and "invalid JSON" in problems[0]
    report = fresh.verify()
    assert any(str(bad) in p for p in report.problems)
    assert bad.exists()  # nothing is deleted


def test_packing_keeps_history_and_bounds_size(tmp_path) -> None:
    store = SessionStore(tmp_path / "sessions", pack_threshold=10**9, durable=False)
    for turn in range(60):
        add_turn(store, "s1", f"prompt {turn} " + "x" * 200, f"reply {turn} " + "y" * 300, tools=3)
    repo_path = store.root / "s1"
    nodes_bytes = sum(f.stat().st_size for f in (repo_path / "history").iterdir())
    store.pack("s1")
    git_bytes = sum(f.stat().st_size for f in (repo_path / ".git").rglob("*") if f.is_file())
    assert git_bytes <= 3 * nodes_bytes, (git_bytes, nodes_bytes)
    assert not [d for d in (repo_path / ".git" / "objects").iterdir() if len(d.name) == 2]
    subprocess.run(["git", "-C", str(repo_path), "fsck", "--strict"], check=True, capture_output=True)
    assert len(git(repo_path, "log", "--format=%H").split()) == 60
    add_turn(store, "s1", "after pack", "still works")
    assert store.session_commits("s1", limit=1)[0].turn == 61


def test_turn_commits_write_packs_not_loose_objects_and_merge_them(tmp_path) -> None:
    store = SessionStore(tmp_path / "sessions", pack_threshold=5, durable=False)
    objects = store.root / "s1" / ".git" / "objects"
    add_turn(store, "s1", "p", "r", tools=3)
    assert not [d for d in objects.iterdir() if len(d.name) == 2]  # nothing loose
    assert len(list((objects / "pack").glob("*.idx"))) == 1
    for turn in range(60):
        add_turn(store, "s1", f"p{turn}", f"r{turn}")
        assert len(list((objects / "pack").glob("*.idx"))) <= 5 + 8
    path = store.root / "s1"
    subprocess.run(["git", "-C", str(path), "fsck", "--strict"], check=True, capture_output=True)
    for idx in (objects / "pack").glob("*.idx"):
        subprocess.run(["git", "-C", str(path), "verify-pack", str(idx)], check=True, capture_output=True)
    assert len(git(path, "log", "--format=%H").split()) == 61
    assert git(path, "show", "HEAD:meta.json").startswith("{")


@pytest.mark.parametrize("native", ["rollout.jsonl:12", "a..b", "x.lock", "id:with:colons"])
def test_retry_branch_names_are_git_legal_for_any_node_id(store: SessionStore, native: str) -> None:
    u, _ = add_turn(store, "s1", "q", "a")
    store.append_message("s1", "assistant", "again", parent_id=u.id, node_id=native)
    assert store.commit_turn("s1")
    names = {b.name for b in store.branches("s1")}
    assert len(names) == 2
    git(store.root / "s1", "check-ref-format", "--branch", next(n for n in names if n != "main"))


def test_system_preface_commit_is_turn_zero(store: SessionStore) -> None:
    store.append_message("s1", "system", "You are a helpful agent.")
    store.commit_turn("s1")
    add_turn(store, "s1", "first question", "first answer")
    assert [c.turn for c in store.session_commits("s1")] == [1, 0]
    turns = store.get_turns("s1")
    assert [t.number for t in turns] == [1] and turns[0].nodes[0].role == "system"
    assert store.get_meta("s1").turn_count == 1


def test_control_bytes_in_messages_stay_out_of_commit_messages(store: SessionStore) -> None:
    # Found by the pack writer's property test: git fsck --strict refuses a NUL in a commit.
    add_turn(store, "s1", "hi\x00 there \x1b[31mred\x1b[0m", "ok\x07", tools=1)
    repo = store.root / "s1"
    message = git(repo, "log", "-1", "--format=%B")
    assert "\x00" not in message and "\x1b" not in message and "\x07" not in message
    assert message.startswith("turn 1: hi there red")
    subprocess.run(["git", "-C", str(repo), "fsck", "--strict", "--full"], check=True, capture_output=True)
    assert store.get_meta("s1").title == "hi there red"
