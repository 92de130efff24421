"""A sync looks only at the sessions the store's change journal names since the last sync; every
writer of a session names it there, and a journal that cannot say (missing, replaced, torn, or
silent while the store's change token moved) makes the sync look at every session again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.orchestration import set_private
from opmem_tui.backend.secrets_purge import plan_purge, purge
from opmem_tui.backend.store.change_journal import ChangeJournal
from opmem_tui.backend.store.mirror_backlog import MirrorWriter
from opmem_tui.backend.sync import Sync, push

from .helpers import SECRET, T0, add_turn, bare_remote, git, machine_home, refs_of

SESSIONS = ("sa1", "sa2", "sa3")


@pytest.fixture
def synced(tmp_path: Path) -> tuple[Home, Path]:
    remote = bare_remote(tmp_path / "remote.git")
    home = machine_home(tmp_path / "a", "laptop", str(remote))
    for i, sid in enumerate(SESSIONS):
        add_turn(home, sid, f"task {i}", "done", at=T0 + i)
    Sync(fresh(home)).run()
    Sync(fresh(home)).run()  # the journal's cursor is noted from here on
    return home, remote


def fresh(home: Home) -> Home:
    return Home(home.path, durable=False)


@pytest.fixture
def stamped(monkeypatch) -> list[str]:
    """The session folders a sync stat-ed."""
    seen: list[str] = []
    real = push._stamp

    def spy(where: str) -> list[int] | None:
        seen.append(Path(where).name)
        return real(where)

    monkeypatch.setattr(push, "_stamp", spy)
    return seen


def remote_meta(remote: Path, sid: str) -> dict | None:
    names = git(f"--git-dir={remote}", "ls-tree", "--name-only", "refs/opmem/meta/laptop", "sessions/").split()
    if f"sessions/{sid}.json" not in names:
        return None
    return json.loads(git(f"--git-dir={remote}", "show", f"refs/opmem/meta/laptop:sessions/{sid}.json"))


def tip(remote: Path, sid: str) -> str | None:
    return refs_of(remote).get(f"refs/opmem/sessions/{sid}/heads/main")


def test_an_idle_sync_stats_no_session(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, _ = synced
    assert Sync(fresh(home)).run().pushed_refs == 0
    assert stamped == []


def test_a_new_turn_is_pushed_looking_at_that_session_only(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    before = tip(remote, "sa2")
    add_turn(fresh(home), "sa2", "more", "ok", at=T0 + 50)
    assert Sync(fresh(home)).run().pushed_refs >= 1
    assert stamped == ["sa2"]
    assert tip(remote, "sa2") != before


def test_an_import_batch_is_named_in_the_journal(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    store = fresh(home).sessions
    with store.batch("imported") as batch:
        user = batch.append("user", "imported question", created_at=T0 + 5)
        answer = batch.append("assistant", "imported answer", parent_id=user.id, created_at=T0 + 6)
        batch.commit_turn(answer.id)
    Sync(fresh(home)).run()
    assert stamped == ["imported"]
    assert tip(remote, "imported") is not None
    assert remote_meta(remote, "imported") is not None


def test_a_rename_is_pushed(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    fresh(home).sessions.rename_session("sa1", "Renamed here")
    Sync(fresh(home)).run()
    assert stamped == ["sa1"]
    assert remote_meta(remote, "sa1")["title"] == "Renamed here"


def test_a_private_toggle_withdraws_then_shares_the_session(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    set_private(fresh(home), "sa3", True)
    Sync(fresh(home)).run()
    assert stamped == ["sa3"]
    assert remote_meta(remote, "sa3") is None
    assert remote_meta(remote, "sa1") is not None
    stamped.clear()
    set_private(fresh(home), "sa3", False)
    Sync(fresh(home)).run()
    assert stamped == ["sa3"]
    assert remote_meta(remote, "sa3") is not None


def test_a_private_session_written_to_is_still_not_pushed(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    set_private(fresh(home), "sa3", True)
    Sync(fresh(home)).run()
    pushed = tip(remote, "sa3")
    add_turn(fresh(home), "sa3", "client secret work", "ok", at=T0 + 60)
    Sync(fresh(home)).run()
    assert tip(remote, "sa3") == pushed  # what was pushed before it turned private stays; nothing new goes
    assert remote_meta(remote, "sa3") is None


def test_a_purged_session_is_looked_at_again(tmp_path: Path, stamped: list[str]) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    home = machine_home(tmp_path / "a", "laptop", str(remote))
    add_turn(home, "sa1", f"deploy with GITHUB_TOKEN={SECRET}", "deployed")
    add_turn(home, "sa2", "clean", "ok")
    Sync(fresh(home)).run()
    Sync(fresh(home)).run()
    stamped.clear()
    report = purge(fresh(home), plan_purge(fresh(home), "sa1"))
    assert report.sessions == 1 and not report.problems
    Sync(fresh(home)).run()
    assert stamped == ["sa1"]


def test_a_deleted_session_leaves_the_sync_state(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, _ = synced
    fresh(home).sessions.delete_session("sa2")
    Sync(fresh(home)).run()
    assert stamped == ["sa2"]
    state = json.loads((home.path / "sync" / "state.json").read_bytes())
    assert sorted(state["sessions"]) == ["sa1", "sa3"]


def test_a_change_made_while_no_journal_existed_is_pushed(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    journal = home.sessions_dir / ".journal"
    journal.unlink()
    before = tip(remote, "sa1")
    add_turn(fresh(home), "sa1", "more", "ok", at=T0 + 50)  # a new journal, with an id the sync never saw
    journal.unlink()
    add_turn(fresh(home), "sa3", "again", "ok", at=T0 + 60)
    Sync(fresh(home)).run()
    assert sorted(stamped) == list(SESSIONS)  # every session looked at
    assert tip(remote, "sa1") != before
    stamped.clear()
    add_turn(fresh(home), "sa2", "and more", "ok", at=T0 + 70)
    Sync(fresh(home)).run()
    assert stamped == ["sa2"]  # the journal the full scan made is trusted from then on


def test_a_writer_that_keeps_no_journal_makes_a_full_scan(
    synced: tuple[Home, Path], stamped: list[str], monkeypatch
) -> None:
    """An older opmem writing the store moves the change token without a journal line."""
    home, remote = synced
    before = tip(remote, "sa1")
    with monkeypatch.context() as m:
        m.setattr(ChangeJournal, "append", lambda self, ids: None)
        add_turn(fresh(home), "sa1", "more", "ok", at=T0 + 50)
    Sync(fresh(home)).run()
    assert sorted(stamped) == list(SESSIONS)
    assert tip(remote, "sa1") != before


def test_a_torn_journal_makes_a_full_scan(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, remote = synced
    before = tip(remote, "sa1")
    add_turn(fresh(home), "sa1", "more", "ok", at=T0 + 50)
    journal = home.sessions_dir / ".journal"
    journal.write_bytes(journal.read_bytes() + b"sa\x00\x00")  # a crash cut a line short
    add_turn(fresh(home), "sa2", "more", "ok", at=T0 + 50)
    Sync(fresh(home)).run()
    assert sorted(stamped) == list(SESSIONS)
    assert tip(remote, "sa1") != before
    stamped.clear()
    add_turn(fresh(home), "sa3", "more", "ok", at=T0 + 70)
    Sync(fresh(home)).run()
    assert stamped == ["sa3"]  # replaced by a sound one


def test_a_long_unseen_full_scan_is_made(synced: tuple[Home, Path], stamped: list[str], monkeypatch) -> None:
    """A folder edited by hand (no journal line, no token) is seen within FULL_SCAN_EVERY."""
    home, remote = synced
    meta = home.sessions_dir / "sa2" / "meta.json"
    data = json.loads(meta.read_bytes())
    data["title"] = "edited by hand"
    meta.write_text(json.dumps(data))
    Sync(fresh(home)).run()
    assert stamped == [] and remote_meta(remote, "sa2")["title"] != "edited by hand"
    monkeypatch.setattr(push, "FULL_SCAN_EVERY", -1.0)
    Sync(fresh(home)).run()
    assert sorted(stamped) == list(SESSIONS)
    assert remote_meta(remote, "sa2")["title"] == "edited by hand"


def test_journal_lines_survive_concurrent_appenders_and_a_half_written_tail(tmp_path: Path) -> None:
    journal = ChangeJournal(tmp_path / ".journal")
    journal.append(["a1", "a2"])
    first = journal.read(None, 0)
    assert first is not None and first.ids == {"a1", "a2"}
    with open(journal.path, "ab") as fh:
        fh.write(b"a3\t")  # a writer mid-line: not read yet
    assert journal.read(first.journal, first.offset).ids == frozenset()
    with open(journal.path, "ab") as fh:
        fh.write(b"\n")
    assert journal.read(first.journal, first.offset) is None  # the line ended without its check: torn
    journal.rotate()
    assert journal.read(first.journal, first.offset) is None  # replaced: another id
    again = journal.read(None, 0)
    assert again is not None and again.ids == frozenset() and again.journal != first.journal


def test_a_writer_killed_before_its_end_line_is_still_seen(
    synced: tuple[Home, Path], stamped: list[str], monkeypatch
) -> None:
    """The session's id is journaled when its lock is taken too: a kill after the files, before
    the end's line and token, leaves that line."""
    from opmem_tui.backend.store.sessions import SessionStore

    home, remote = synced
    before = tip(remote, "sa2")
    with monkeypatch.context() as m:
        m.setattr(SessionStore, "_mark_changed", lambda self, *ids: None)
        add_turn(fresh(home), "sa2", "more", "ok", at=T0 + 50)
    Sync(fresh(home)).run()
    assert stamped == ["sa2"]
    assert tip(remote, "sa2") != before


def test_a_cursor_edited_into_nonsense_makes_a_full_scan(synced: tuple[Home, Path], stamped: list[str]) -> None:
    home, _ = synced
    last = home.path / "sync" / "last.json"
    data = json.loads(last.read_bytes())
    data["journal"]["offset"] = "twelve"
    last.write_text(json.dumps(data))
    Sync(fresh(home)).run()
    assert sorted(stamped) == list(SESSIONS)
    stamped.clear()
    Sync(fresh(home)).run()
    assert stamped == []


def test_a_backlog_session_is_pushed_once_its_mirror_is_written(synced: tuple[Home, Path]) -> None:
    """A backlog import's session has node files and meta.json before git holds it: the sync
    leaves it for later without calling it a problem, and pushes it once the mirror is written:
    the mirror's commits name it in the journal again, so a sync that ran while it was being
    written does not leave it unpushed."""
    home, remote = synced
    store = fresh(home).sessions
    with store.batch("backlog", defer_mirror=True) as batch:
        user = batch.append("user", "backlog question", created_at=T0 + 5)
        batch.append("assistant", "backlog answer", parent_id=user.id, created_at=T0 + 6)
    assert store.mirror_pending("backlog") is not None
    report = Sync(fresh(home)).run()
    assert report.problems == []
    assert tip(remote, "backlog") is None
    real = store._write_backlog

    def synced_midway(repo, own_since=None):  # a periodic sync while the mirror is being written
        Sync(fresh(home)).run()
        return real(repo, own_since)

    store._write_backlog = synced_midway
    writer = MirrorWriter(store)
    writer.add(store.owed_mirrors())
    assert writer.run().sessions == 1
    Sync(fresh(home)).run()
    assert tip(remote, "backlog") is not None
    assert remote_meta(remote, "backlog") is not None
