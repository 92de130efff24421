"""Two stores (two Homes with their own machine ids) and a bare git remote on the filesystem."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.sync import Sync, SyncError, SyncRefused, origins

from .helpers import (
    SECRET,
    T0,
    add_event,
    add_turn,
    all_objects,
    bare_remote,
    git,
    machine_home,
    meta,
    refs_of,
    turns,
)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Home, Home, Path]:
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    return a, b, remote


def fresh(home: Home) -> Home:
    return Home(home.path, durable=False)


def sync_all(*homes: Home) -> None:
    for home in homes:
        Sync(fresh(home)).run()


def fsck(git_dir: Path) -> None:
    done = subprocess.run(["git", f"--git-dir={git_dir}", "fsck", "--strict"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_both_machines_end_with_both_sessions_memory_and_titles(pair: tuple[Home, Home, Path]) -> None:
    a, b, remote = pair
    first = add_turn(a, "sa1", "set up the worker", "done")
    add_turn(a, "sa1", "add the queue", "queue added", at=T0 + 10)
    add_turn(a, "sa1", "no, use redis instead", "redis it is", at=T0 + 20, parent=first)  # a retry branch
    a.sessions.rename_session("sa1", "Worker set-up")
    add_turn(b, "sb1", "hello from the desk", "hi")
    add_event(a, "the worker uses goose migrations", "sa1")
    add_event(b, "the desk prefers pytest fixtures", "sb1")
    sync_all(a, b, a)
    a, b = fresh(a), fresh(b)
    for home in (a, b):
        assert sorted(m.id for m in home.sessions.list_sessions().sessions) == ["sa1", "sb1"]
    assert turns(b, "sa1") == turns(a, "sa1")
    assert turns(a, "sb1") == turns(b, "sb1")
    assert sorted(br.name for br in b.sessions.branches("sa1")) == sorted(br.name for br in a.sessions.branches("sa1"))
    assert len(b.sessions.branches("sa1")) == 2
    assert meta(b, "sa1")["title"] == "Worker set-up"
    assert [h.snippet for h in b.search("goose")][:1] == ["the worker uses goose migrations"]
    assert [h.snippet for h in a.search("pytest fixtures")][:1] == ["the desk prefers pytest fixtures"]
    # the same records fold to the same memory on both machines
    ids_a = sorted(e.id for e in a.memory.timeline(limit=100).events)
    ids_b = sorted(e.id for e in b.memory.timeline(limit=100).events)
    assert ids_a == ids_b and len(ids_a) == 2
    assert origins(a) == {"sb1": "desk"} and origins(b) == {"sa1": "laptop"}
    for home in (a, b):
        report = home.sessions.verify(repair=False)
        assert report.ok and not report.problems
        for sid in ("sa1", "sb1"):
            fsck(home.sessions.path_for(sid) / ".git")
    fsck(remote)


def test_a_title_the_user_gave_on_the_other_machine_wins(pair: tuple[Home, Home, Path]) -> None:
    a, b, _ = pair
    add_turn(a, "sa1", "fix the flaky test", "fixed")
    a.sessions.update_session("sa1", title="Flaky test", title_source="excerpt")
    sync_all(a, b)
    b = fresh(b)
    b.sessions.rename_session("sa1", "Flaky CI test hunt")
    sync_all(b, a)
    assert meta(fresh(a), "sa1")["title"] == "Flaky CI test hunt"
    assert meta(fresh(a), "sa1")["title_source"] == "user"


def test_a_new_turn_reaches_the_other_machine(pair: tuple[Home, Home, Path]) -> None:
    a, b, _ = pair
    add_turn(a, "sa1", "one", "first")
    sync_all(a, b)
    add_turn(fresh(a), "sa1", "two", "second", at=T0 + 50)
    report = Sync(fresh(a)).run()
    assert report.pushed_refs >= 1
    report = Sync(fresh(b)).run()
    assert report.updated_sessions == ["sa1"]
    assert turns(fresh(b), "sa1") == [("one", "first"), ("two", "second")]
    assert fresh(b).sessions.verify(repair=False).ok


def test_secrets_are_pushed_redacted_and_raw_only_when_asked(pair: tuple[Home, Home, Path], tmp_path: Path) -> None:
    a, b, remote = pair
    add_turn(a, "sa1", f"deploy with GITHUB_TOKEN={SECRET}", "deployed")
    a.sessions.rename_session("sa1", f"deploy {SECRET}")
    add_event(a, f"the token {SECRET} deploys", "sa1")
    sync_all(a, b)
    assert SECRET.encode() not in all_objects(remote)
    assert b"[secret:" in all_objects(remote)
    assert SECRET not in "".join(n.content for n in fresh(b).sessions.get_nodes("sa1"))
    assert SECRET in "".join(n.content for n in fresh(a).sessions.get_nodes("sa1"))  # the local record stays raw
    raw_remote = bare_remote(tmp_path / "raw.git")
    home = fresh(a)
    home.config.set("sync.redact", False)
    home.config.save()
    Sync(fresh(a), str(raw_remote)).run()
    assert SECRET.encode() in all_objects(raw_remote)


def test_a_private_session_never_moves(pair: tuple[Home, Home, Path]) -> None:
    a, b, remote = pair
    add_turn(a, "secret-work", "client work", "ok")
    a.sessions.update_session("secret-work", private=True)
    add_turn(a, "open-work", "public work", "ok")
    add_event(a, "client detail", "secret-work")
    sync_all(a, b)
    assert not any("secret-work" in name for name in refs_of(remote))
    assert b"client work" not in all_objects(remote) and b"client detail" not in all_objects(remote)
    assert [m.id for m in fresh(b).sessions.list_sessions().sessions] == ["open-work"]


def test_a_second_sync_with_nothing_new_changes_no_ref(pair: tuple[Home, Home, Path]) -> None:
    a, b, remote = pair
    add_turn(a, "sa1", "one", "first")
    add_turn(b, "sb1", "two", "second")
    add_event(a, "a fact", "sa1")
    sync_all(a, b, a, b)
    before = (refs_of(remote), refs_of(a.path / "sync" / "outbox.git"), refs_of(b.path / "sync" / "outbox.git"))
    report_a, report_b = Sync(fresh(a)).run(), Sync(fresh(b)).run()
    after = (refs_of(remote), refs_of(a.path / "sync" / "outbox.git"), refs_of(b.path / "sync" / "outbox.git"))
    assert before == after
    assert not report_a.refs_changed and not report_b.refs_changed
    assert report_a.pushed_refs == report_b.pushed_refs == 0


def test_an_idle_sync_rewrites_only_last_json(pair: tuple[Home, Home, Path]) -> None:
    a, b, remote = pair
    add_turn(a, "sa1", "one", "first")
    sync_all(a, b, a)
    state = a.path / "sync" / "state.json"
    before = (state.read_bytes(), state.stat().st_ino)
    Sync(fresh(a)).run()
    assert (state.read_bytes(), state.stat().st_ino) == before  # the big file is not rewritten
    status = Sync(fresh(a)).status()
    assert status["last_sync"] and status["remote"] == str(remote)
    add_turn(a, "sa1", "two", "second", at=T0 + 10)
    Sync(fresh(a)).run()
    assert state.stat().st_ino != before[1]  # a changed session is noted


def test_a_push_of_many_refs_packs_a_local_remote(pair: tuple[Home, Home, Path], monkeypatch) -> None:
    """Loose refs on the remote are read on every ls-remote and push: a push of many packs them."""
    from opmem_tui.backend.sync import pull, push

    a, b, remote = pair
    for i in range(3):
        add_turn(a, f"sa{i}", f"task {i}", "done")
    for side in (pull, push):
        monkeypatch.setattr(side, "PACK_AFTER", 3)  # 4 refs: 3 sessions and the meta ref
    Sync(fresh(a)).run()
    loose = [p for p in (remote / "refs" / "opmem").rglob("*") if p.is_file()]
    assert loose == []
    packed = (remote / "packed-refs").read_text()
    assert all(f"refs/opmem/sessions/sa{i}/heads/main" in packed for i in range(3))
    graph = Path("objects") / "info" / "commit-graph"  # each side's check of the other's tips reads it
    assert (remote / graph).is_file() and (a.path / "sync" / "outbox.git" / graph).is_file()
    add_turn(a, "sa0", "more", "ok", at=T0 + 10)
    assert Sync(fresh(a)).run().pushed_refs == 2  # a small push leaves its refs loose (not packed)
    assert [p.name for p in (remote / "refs" / "opmem" / "sessions").rglob("*") if p.is_file()] == ["main"]
    Sync(fresh(b)).run()
    assert (b.path / "sync" / "outbox.git" / graph).is_file()  # its first pull fetched 4 refs
    assert turns(fresh(b), "sa0")[-1] == ("more", "ok")
    fsck(remote)


def test_a_pull_leaves_no_loose_refs_in_the_outbox(pair: tuple[Home, Home, Path], monkeypatch) -> None:
    """git fetch writes each ref it takes as a loose file: read and removed by the same sync, not
    left for the next one to read (10,000 of them: 12 s). A save of more than LOOSE_AT_MOST refs
    writes them all in packed-refs."""
    from opmem_tui.backend.sync import refs

    monkeypatch.setattr(refs, "LOOSE_AT_MOST", 2)
    a, b, _remote = pair
    for i in range(3):
        add_turn(a, f"sa{i}", f"task {i}", "done")
    sync_all(a, b)
    outbox = b.path / "sync" / "outbox.git"
    assert [p for p in (outbox / "refs").rglob("*") if p.is_file()] == []
    assert not (outbox / "refs" / "sync").exists()  # nor the folders the fetched refs were in
    names = set(refs_of(outbox))
    assert not any(n.startswith("refs/sync/incoming/") for n in names)
    assert {f"refs/sync/seen/opmem/sessions/sa{i}/heads/main" for i in range(3)} <= names
    assert turns(fresh(b), "sa2") == [("task 2", "done")]


def test_a_remote_rewritten_by_someone_else_is_refused_naming_the_refs(pair: tuple[Home, Home, Path]) -> None:
    a, b, remote = pair
    add_turn(a, "sa1", "one", "first")
    sync_all(a, b)
    add_turn(fresh(a), "sa1", "two", "second", at=T0 + 50)
    sync_all(a)
    # someone forces the session's branch back to an unrelated commit
    empty = (
        subprocess.run(
            ["git", f"--git-dir={remote}", "hash-object", "-t", "tree", "-w", "--stdin"], input=b"", capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    rogue = git(
        "-c",
        "user.name=someone",
        "-c",
        "user.email=someone@example.invalid",
        f"--git-dir={remote}",
        "commit-tree",
        empty,
        "-m",
        "rewritten",
    ).strip()
    git(f"--git-dir={remote}", "update-ref", "refs/opmem/sessions/sa1/heads/main", rogue)
    before = turns(fresh(b), "sa1")
    with pytest.raises(SyncRefused) as caught:
        Sync(fresh(b)).run()
    assert "refs/opmem/sessions/sa1/heads/main" in str(caught.value)
    assert "rewritten" in str(caught.value)
    assert turns(fresh(b), "sa1") == before  # nothing local changed or deleted
    assert fresh(b).sessions.verify(repair=False).ok


def test_an_unreachable_remote_is_one_clear_error(tmp_path: Path) -> None:
    home = machine_home(tmp_path / "a", "laptop", str(tmp_path / "nowhere.git"))
    add_turn(home, "sa1", "one", "first")
    with pytest.raises(SyncError) as caught:
        Sync(fresh(home)).run()
    message = str(caught.value)
    assert "cannot reach the sync remote" in message and "\n" not in message


def test_no_remote_configured(tmp_path: Path) -> None:
    home = Home(tmp_path / "a", durable=False)
    home.ensure()
    with pytest.raises(SyncError, match="opmem sync init"):
        Sync(home).run()


def test_a_pulled_session_never_overwrites_one_recorded_here(pair: tuple[Home, Home, Path]) -> None:
    a, b, _ = pair
    add_turn(a, "same-id", "laptop's words", "laptop")
    add_turn(b, "same-id", "desk's words", "desk")
    Sync(fresh(a)).run()
    report = Sync(fresh(b)).run()
    assert any("same-id" in c for c in report.conflicts)
    assert turns(fresh(b), "same-id") == [("desk's words", "desk")]
    assert "same-id" not in origins(fresh(b))


def test_two_machines_fold_the_same_memory_patches_included(pair: tuple[Home, Home, Path]) -> None:
    a, b, _ = pair
    add_turn(a, "sa1", "one", "first")
    add_turn(b, "sb1", "two", "second")
    old = add_event(a, "the ORM is sqlalchemy", "sa1", at=T0)
    sync_all(a, b)
    new = add_event(fresh(b), "the ORM is now sqlmodel", "sb1", at=T0 + 100)
    fresh(b).memory.supersede(old.id, new.id, reason="replaced")
    add_event(fresh(a), "tests run with pytest -x", "sa1", at=T0 + 50)
    sync_all(a, b, a)

    def folded(home: Home) -> list[tuple[str, str | None]]:
        page = home.memory.timeline(limit=100, include_superseded=True)
        return sorted((e.id, e.superseded_by) for e in page.events)

    assert folded(fresh(a)) == folded(fresh(b))
    assert (old.id, new.id) in folded(fresh(a))
    logs_a = sorted(p.relative_to(a.memory_dir) for p in a.memory_dir.rglob("*.jsonl"))
    assert logs_a == sorted(p.relative_to(b.memory_dir) for p in b.memory_dir.rglob("*.jsonl"))
    for name in logs_a:  # the same lines on both machines (each in the order it appended them)
        assert sorted((a.memory_dir / name).read_bytes().splitlines()) == sorted(
            (b.memory_dir / name).read_bytes().splitlines()
        )


def test_a_sync_after_a_new_turn_adds_one_pack_to_the_outbox(pair: tuple[Home, Home, Path]) -> None:
    """The session's redacted history and the meta commit naming it go in one pack (one fsync)."""
    a, b, _ = pair
    add_turn(a, "sa1", "one", "first")
    sync_all(a, b, a)
    packs = a.path / "sync" / "outbox.git" / "objects" / "pack"
    before = len(list(packs.glob("*.pack")))
    add_turn(fresh(a), "sa1", "two", "second", at=T0 + 10)
    assert Sync(fresh(a)).run().pushed_refs == 2  # the session's branch and the meta ref
    assert len(list(packs.glob("*.pack"))) == before + 1
    fsck(a.path / "sync" / "outbox.git")
    Sync(fresh(b)).run()
    assert turns(fresh(b), "sa1") == [("one", "first"), ("two", "second")]


def test_the_outbox_packs_are_rolled_up_past_the_limit(pair: tuple[Home, Home, Path], monkeypatch) -> None:
    """One pack per sync must not grow without end: past the limit a sync rolls the small ones
    up, and every object is still there (fsck, and the other machine pulls every turn)."""
    from opmem_tui.backend.sync import outbox

    monkeypatch.setattr(outbox, "OUTBOX_PACKS_AT_MOST", 3)
    a, b, _ = pair
    packs = a.path / "sync" / "outbox.git" / "objects" / "pack"
    counts = []
    for i in range(8):
        add_turn(fresh(a), "sa1", f"prompt {i}", f"reply {i}", at=T0 + 10 * i)
        Sync(fresh(a)).run()
        counts.append(len(list(packs.glob("*.pack"))))
    assert max(counts) <= 4, counts  # never more than the limit plus the sync's own new pack
    fsck(a.path / "sync" / "outbox.git")
    Sync(fresh(b)).run()
    assert turns(fresh(b), "sa1") == [(f"prompt {i}", f"reply {i}") for i in range(8)]


def test_a_pull_killed_before_its_reindex_is_indexed_by_the_next_sync(
    pair: tuple[Home, Home, Path], monkeypatch
) -> None:
    """The memory merged, then the kill: the next pull finds nothing new to merge, and still the
    search index takes in what the killed one merged."""
    a, b, _ = pair
    add_turn(a, "sa1", "one", "first")
    sync_all(a, b)  # b's search index exists from here
    add_event(fresh(a), "a remembered fact", "sa1")
    Sync(fresh(a)).run()

    class Killed(Exception):
        pass

    def killed(*args: object, **kwargs: object) -> None:
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(Sync, "_reindex", killed)
        with pytest.raises(Killed):
            Sync(fresh(b)).run()
    assert (b.path / "sync" / "reindex-owed").exists()
    report = Sync(fresh(b)).run()
    assert report.memory_records == 0  # merged by the killed sync
    assert [h.snippet for h in fresh(b).search("remembered fact")][:1] == ["a remembered fact"]
    assert not (b.path / "sync" / "reindex-owed").exists()
