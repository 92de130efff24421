"""SessionStore: discovery, locations.json, cache, locks across threads and processes."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import threading
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.model import SessionNotFound
from opmem_tui.backend.store.provenance import iter_nodes_since, node_provenance, session_commits
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn, git


def test_listing_sorted_skips_invalid_and_counts(store: SessionStore) -> None:
    add_turn(store, "old", "old one", "x", created_at=1000.0)
    add_turn(store, "new", "new one", "y", created_at=2000.0)
    (store.root / "no-meta").mkdir()
    (store.root / "bad-meta").mkdir()
    (store.root / "bad-meta" / "meta.json").write_text("[1, 2]")
    (store.root / "broken").mkdir()
    (store.root / "broken" / "meta.json").write_text("{oops")
    (store.root / "bad id!").mkdir()
    listing = store.list_sessions()
    assert [m.id for m in listing.sessions] == ["new", "old"]
    assert listing.skipped == 4 and listing.unreadable == ("bad id!", "bad-meta", "broken", "no-meta")
    assert any("broken/meta.json" in p and "invalid JSON" in p for p in listing.problems)
    assert listing.sessions[0].turn_count == 1 and listing.sessions[0].preview == "new one"


def test_listing_warm_cache_sees_changes(store: SessionStore) -> None:
    add_turn(store, "a", "a", "a")
    first = store.list_sessions()
    assert store.list_sessions() is first  # warm: nothing re-read
    add_turn(store, "b", "b", "b")
    assert {m.id for m in store.list_sessions().sessions} == {"a", "b"}
    other = SessionStore(store.root)  # another process's view of the same folder
    other.rename_session("a", "renamed elsewhere")
    assert {m.title for m in store.list_sessions().sessions} == {"renamed elsewhere", "b"}


def test_in_project_location_merged_and_deduplicated(store: SessionStore, tmp_path: Path) -> None:
    loc = tmp_path / "proj" / ".opmem" / "sessions" / "p1"
    add_turn(store, "p1", "in project", "ok", location=loc)
    add_turn(store, "g1", "global", "ok")
    assert (loc / "meta.json").exists() and not (store.root / "p1").exists()
    assert json.loads(store.locations_path.read_text()) == {"p1": str(loc.resolve())}
    assert {m.id for m in store.list_sessions().sessions} == {"p1", "g1"}
    fresh = SessionStore(store.root)
    assert [n.content for n in fresh.get_branch("p1")] == ["in project", "ok"]
    fresh.delete_session("p1")
    assert not loc.exists()
    assert json.loads(store.locations_path.read_text()) == {}
    assert [m.id for m in fresh.list_sessions().sessions] == ["g1"]


def test_delete_then_dangling_provenance_is_skipped(store: SessionStore) -> None:
    add_turn(store, "s1", "a", "b")
    store.delete_session("s1")
    assert list(iter_nodes_since(store, "s1")) == []
    assert session_commits(store, "s1") == []
    with pytest.raises(SessionNotFound):
        store.get_meta("s1")


def test_provenance_read_layer(store: SessionStore) -> None:
    u, a = add_turn(store, "s1", "a", "b", tools=1, session_meta={"project_id": "proj"})
    add_turn(store, "s1", "c", "d")
    nodes = list(iter_nodes_since(store, "s1", after_seq=1))
    assert [n.seq for n in nodes] == [2, 3, 4]
    prov = node_provenance(store, "s1", [u, a])
    commits = session_commits(store, "s1", limit=10)
    assert prov.project_id == "proj" and prov.node_ids == (u.id, a.id)
    assert prov.commit == commits[-1].oid and prov.event_time == a.created_at


def test_eviction_and_reload_identical(home: Home) -> None:
    store = SessionStore(home.sessions_dir, cache_cap=2)
    for i in range(5):
        add_turn(store, f"s{i}", f"prompt {i}", f"reply {i}", tools=2)
    assert len(store.cached_ids()) == 2
    reference = SessionStore(home.sessions_dir, cache_cap=100)
    for i in range(5):
        assert store.get_nodes(f"s{i}") == reference.get_nodes(f"s{i}")
        assert store.get_turns(f"s{i}") == reference.get_turns(f"s{i}")
        assert store.get_meta(f"s{i}") == reference.get_meta(f"s{i}")


def test_cache_cap_from_env_and_config(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    home.config.set("store.session_cache_cap", 7)
    home.config.save()
    assert Home(home.path).sessions.cache_cap == 7
    monkeypatch.setenv("OPENPROGRAM_SESSION_CACHE_CAP", "3")
    assert Home(home.path).sessions.cache_cap == 3


def test_threads_appending_serialize(store: SessionStore) -> None:
    store.append_message("s1", "user", "root")

    def worker(k: int) -> None:
        for i in range(10):
            store.append_message("s1", "assistant", f"{k}-{i}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    nodes = store.get_nodes("s1")
    assert sorted(n.seq for n in nodes) == list(range(41))
    assert len(store.get_branch("s1")) == 41  # one linear chain


def _append_from_process(home_path: str, tag: str, count: int) -> None:
    import traceback

    try:
        store = Home(home_path).sessions
        for i in range(count):
            store.append_message("shared", "user", f"{tag} prompt {i}")
            store.append_message("shared", "assistant", f"{tag} reply {i}")
            store.commit_turn("shared")
    except BaseException:
        Path(home_path, f"error-{tag}.txt").write_text(traceback.format_exc())
        raise


def test_two_processes_append_consistent_dag(home: Home) -> None:
    add_turn(home.sessions, "shared", "start", "ok")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_from_process, args=(str(home.path), tag, 8)) for tag in ("A", "B")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    errors = [f.read_text() for f in home.path.glob("error-*.txt")]
    assert not errors, errors[0]
    assert [p.exitcode for p in procs] == [0, 0]
    store = SessionStore(home.sessions_dir)
    nodes = store.get_nodes("shared")
    assert sorted(n.seq for n in nodes) == list(range(34))
    ids = {n.id for n in nodes}
    assert all(n.parent_id in ids for n in nodes if n.parent_id)
    files = list((home.sessions_dir / "shared" / "history").iterdir())
    assert len(files) == 34
    repo = home.sessions_dir / "shared"
    subprocess.run(["git", "-C", str(repo), "fsck", "--strict"], check=True, capture_output=True)
    # Every node is in git, and every commit is a turn whose head is a node of the session.
    # How many commits depends on the interleaving: a commit can cover the other process's
    # messages (its own commit then finds nothing new), and a first open can backfill the other
    # process's half-written turn. One per commit_turn call is the most there can be.
    assert (
        not {n.id for n in nodes}
        - SessionStore(home.sessions_dir)._open("shared", create=False, location=None).covered_node_ids()
    )
    heads = git(repo, "log", "--all", "--format=%(trailers:key=Opmem-Head,valueonly)").split()
    assert set(heads) <= ids and 2 <= len(heads) <= 1 + 16 + 2


def test_verify_repairs_missing_commits(tmp_path: Path) -> None:
    import gc

    writer = SessionStore(tmp_path / "sessions")
    add_turn(writer, "s1", "a", "b")
    writer.append_message("s1", "user", "uncommitted")
    report = SessionStore(tmp_path / "sessions", cache_cap=1).verify(repair=True)
    # the writer is alive: its turn is in flight, not missing, and not committed for it
    assert report.checked == 1 and report.ok
    assert len(git(tmp_path / "sessions" / "s1", "log", "--format=%H").split()) == 1
    del writer
    gc.collect()
    report = SessionStore(tmp_path / "sessions", cache_cap=1).verify(repair=True)
    # opening already backfills a writer that is gone; verify reports a clean store
    assert report.checked == 1 and report.ok
    assert len(git(tmp_path / "sessions" / "s1", "log", "--format=%H").split()) == 2


def test_switch_head_updates_listed_turn_count(store: SessionStore) -> None:
    _, a1 = add_turn(store, "s1", "one", "1")
    add_turn(store, "s1", "two", "2")
    add_turn(store, "s1", "three", "3")
    assert store.list_sessions().sessions[0].turn_count == 3
    store.switch_head("s1", a1.id)
    assert store.list_sessions().sessions[0].turn_count == 1


def test_rescan_sees_edits_by_other_programs(store: SessionStore) -> None:
    add_turn(store, "s1", "one", "1")
    assert store.list_sessions().skipped == 0
    meta = store.root / "s1" / "meta.json"
    st = meta.stat()
    meta.write_text("{broken")
    import os

    os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))  # same timestamps: the warm cache cannot tell
    assert store.list_sessions(rescan=True).skipped == 1
