"""backend/secrets_purge.py: secrets redacted in the node files, meta.json and every branch of git,
no object holding a value left, everything else byte for byte as it was."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend import secrets_purge as purge_mod
from opmem_tui.backend.home import Home
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.privacy.scan import scan
from opmem_tui.backend.secrets_purge import MARKER_FILE, plan_purge, purge
from opmem_tui.backend.store.session_lock import SessionLock
from opmem_tui.backend.store.sessions import SessionLocked

from .privacy.secret_store import AWS, FRAGMENTS, GITHUB, VALUES, build, tree_hashes


def git(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, check=check)


def holds_a_value(data: bytes) -> list[str]:
    return [v for v in (*VALUES, *FRAGMENTS) if v.encode() in data]


def commit_shapes(folder: Path) -> list[tuple[str, ...]]:
    """Who and when of every commit on every branch, in order, and the subject's first words."""
    out = git(folder, "log", "--all", "--date-order", "--format=%an|%ae|%at|%cn|%ce|%ct|%P").stdout.decode()
    return [tuple(line.split("|")[:6]) for line in out.splitlines()]


@pytest.fixture
def home(tmp_path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    build(home)
    return home


def test_purge_of_one_session_leaves_no_value_in_any_file_or_git_object(home: Home) -> None:
    leaky = home.sessions_dir / "leaky"
    others = {sid: tree_hashes(home.sessions_dir / sid) for sid in ("clean", "other")}
    history_before = tree_hashes(leaky / "history")
    branches_before = {
        b.shorthand: str(b.target) for b in map(pygit2.Repository(str(leaky)).branches.get, ("main", "retry-r1"))
    }
    shapes_before = commit_shapes(leaky)
    old_blob = git(leaky, "rev-parse", "main~1:history/000000-u-u1.json").stdout.decode().strip()
    assert git(leaky, "cat-file", "-p", old_blob).stdout.count(GITHUB.encode()) == 1
    assert holds_a_value(git(leaky, "log", "-p", "--all").stdout)

    assert GITHUB in home.sessions.get_nodes("leaky")[0].content  # open for reading in this process
    before = list(scan(home.sessions, "leaky"))
    assert len(before) == 7
    plan = plan_purge(home, "leaky")
    assert (len(plan.sessions), plan.nodes, plan.findings) == (1, 6, 7)
    report = purge(home, plan)
    assert (report.sessions, report.nodes, report.findings) == (1, 6, 7)
    assert report.refs_moved == 2 and report.commits_rewritten == 3 and report.problems == []

    assert list(scan(home.sessions, "leaky")) == []
    # no value anywhere: files, history with patches, every object (reachable or not)
    for path in leaky.rglob("*"):
        if path.is_file():
            assert not holds_a_value(path.read_bytes()), path
    assert not holds_a_value(git(leaky, "log", "-p", "--all").stdout)
    assert not holds_a_value(git(leaky, "cat-file", "--batch-all-objects", "--batch").stdout)
    fsck = git(leaky, "fsck", "--unreachable", "--strict", "--no-dangling")
    assert fsck.stdout == b"" and fsck.returncode == 0, fsck.stderr
    assert git(leaky, "fsck", "--unreachable", "--no-reflogs").stdout == b""
    assert git(leaky, "cat-file", "-p", old_blob, check=False).returncode != 0
    assert git(leaky, "reflog", "--all").stdout == b""
    assert git(leaky, "status", "--porcelain").stdout == b""  # the index follows the new HEAD

    # every branch rewritten; the same commits by the same authors at the same times
    repo = pygit2.Repository(str(leaky))
    after = {name: str(repo.branches[name].target) for name in ("main", "retry-r1")}
    assert set(repo.branches.local) == {"main", "retry-r1"}
    assert all(after[n] != branches_before[n] for n in after)
    assert commit_shapes(leaky) == shapes_before
    subjects = git(leaky, "log", "--all", "--format=%s").stdout.decode().splitlines()
    assert "turn 1: my deploy key is stored here, the value is [secret:github-token#" in "\n".join(subjects)
    retry = json.loads(git(leaky, "show", "retry-r1:history/000006-a-r1.json").stdout)
    assert retry["content"].startswith("Retry: the key [secret:aws-access-key#")

    # the node files: only the affected ones changed, each whole and redacted
    history_after = tree_hashes(leaky / "history")
    assert history_after.keys() == history_before.keys()
    changed = {name for name in history_after if history_after[name] != history_before[name]}
    assert {n.split("-", 2)[2] for n in changed} == {f"{n}.json" for n in ("u1", "a1", "t1", "t2", "a2", "r1")}
    node = json.loads((leaky / "history" / "000003-t-t2.json").read_text())
    assert node["content"].startswith("aws_access_key_id = [secret:aws-access-key#")
    assert node["reads"][0].startswith("https://u:[secret:url-password#")
    meta = json.loads((leaky / "meta.json").read_text())
    assert GITHUB[:7] not in meta["title"] and "[secret:github-token#" in meta["title"]
    assert not (leaky / ".git" / MARKER_FILE).exists()

    # the other sessions: byte for byte
    assert {sid: tree_hashes(home.sessions_dir / sid) for sid in others} == others
    assert len(list(scan(home.sessions, "other"))) == 3

    report = home.sessions.verify(repair=False)
    assert report.ok and report.problems == ()
    first = home.sessions.get_nodes("leaky")[0]  # this process's open copy was dropped: read again
    assert first.content.startswith("my deploy key is stored here, the value is [secret:github-token#")


def test_purge_of_the_store_leaves_a_clean_session_alone(home: Home) -> None:
    clean = tree_hashes(home.sessions_dir / "clean")
    report = purge(home, plan_purge(home))
    assert report.sessions == 2
    assert list(scan(home.sessions)) == []
    assert tree_hashes(home.sessions_dir / "clean") == clean
    other = home.sessions_dir / "other"
    assert not holds_a_value(git(other, "cat-file", "--batch-all-objects", "--batch").stdout)
    assert plan_purge(home).sessions == []  # nothing left to do


def index_bytes(home: Home) -> bytes:
    """memory/index.sqlite and its side files, lowercased (the index keeps its terms so)."""
    return b"".join(p.read_bytes().lower() for p in home.memory_dir.glob("index.sqlite*") if p.is_file())


def test_the_search_index_forgets_the_values(home: Home) -> None:
    home.search_index.update()
    # the index masks what it takes from the raw session already (memory/index_update.py)...
    assert home.search("p4ssw0rdXyz") == ()
    # terms share their start with the one before them on a page: look for a piece of each
    pieces = [value.lower()[4:14].encode() for value in ("p4ssw0rdXyz", AWS)]
    assert not [piece for piece in pieces if piece in index_bytes(home)]
    assert home.search("deploy key")
    purge(home, plan_purge(home, "leaky"))  # ...and the purge rebuilds it from the purged session
    assert home.search("p4ssw0rdXyz") == ()
    assert not [piece for piece in pieces if piece in index_bytes(home)]
    assert home.search("deploy key")  # the session itself is indexed again, redacted


def test_a_purge_cut_short_is_finished_by_running_it_again(home: Home, monkeypatch) -> None:
    real = purge_mod.write_atomic
    written: list[str] = []

    def crash_on_third_node(path, data, *, durable=True):
        if path.parent.name == "history":
            if len(written) == 2:
                raise OSError(28, "No space left on device", str(path))
            written.append(path.name)
        real(path, data, durable=durable)

    monkeypatch.setattr(purge_mod, "write_atomic", crash_on_third_node)
    with pytest.raises(OSError):
        purge(home, plan_purge(home, "leaky"))
    leaky = home.sessions_dir / "leaky"
    for path in (leaky / "history").iterdir():  # every node file whole: the old one or the new one
        json.loads(path.read_bytes())
    assert (leaky / ".git" / MARKER_FILE).exists()
    assert 0 < len(list(scan(home.sessions, "leaky"))) < 7  # two files done, the rest still raw
    monkeypatch.setattr(purge_mod, "write_atomic", real)
    purge(home, plan_purge(home, "leaky"))
    assert list(scan(home.sessions, "leaky")) == []
    assert not holds_a_value(git(leaky, "cat-file", "--batch-all-objects", "--batch").stdout)
    assert not (leaky / ".git" / MARKER_FILE).exists()
    assert home.sessions.verify(repair=False).ok


def test_an_index_rebuild_that_fails_is_done_by_the_next_purge(home: Home, monkeypatch) -> None:
    home.search_index.update()

    def fail(**_kw):
        raise OpmemError("disk gone")

    monkeypatch.setattr(home.search_index, "rebuild", fail)
    report = purge(home, plan_purge(home, "leaky"))
    assert "opmem index rebuild" in report.problems[0]
    monkeypatch.undo()
    plan = plan_purge(home)
    assert [s.session for s in plan.sessions] == ["leaky", "other"]  # leaky: by its marker only
    assert plan.sessions[0].findings == []
    purge(home, plan_purge(home, "leaky"))
    assert home.search("p4ssw0rdXyz") == ()
    assert not (home.sessions_dir / "leaky" / ".git" / MARKER_FILE).exists()


def test_purge_waits_for_the_session_lock_then_says_so(home: Home) -> None:
    home.config.path.write_text("[store]\nlock_timeout_s = 0.2\n")
    held = SessionLock(str(home.sessions_dir / ".locks" / "leaky.lock"))
    held.acquire()
    try:
        with pytest.raises(SessionLocked, match="leaky"):
            purge(Home(home.path, durable=False), plan_purge(home, "leaky"))
    finally:
        held.release()
    assert len(list(scan(home.sessions, "leaky"))) == 7  # nothing was touched


def test_a_session_another_writer_is_writing_a_turn_of_is_refused(home: Home) -> None:
    writer = Home(home.path, durable=False).sessions  # another store: its uncommitted turn is in flight
    writer.append_message("leaky", "user", "a turn being written", node_id="live1")
    before = tree_hashes(home.sessions_dir / "leaky")
    with pytest.raises(SessionLocked, match="writing a turn of it right now"):
        purge(Home(home.path, durable=False), plan_purge(home, "leaky"))
    assert tree_hashes(home.sessions_dir / "leaky") == before
    writer.commit_turn("leaky")
    purge(Home(home.path, durable=False), plan_purge(home, "leaky"))
    assert list(scan(home.sessions, "leaky")) == []


def test_memory_records_cut_from_the_sessions_are_scrubbed_too(home: Home) -> None:
    from opmem_tui.backend.memory.records import Event
    from opmem_tui.backend.model import Provenance

    leaky = home.sessions_dir / "leaky"
    old_commit = git(leaky, "rev-parse", "main~1").stdout.decode().strip()

    def event(summary: str, commit: str | None) -> Event:
        prov = Provenance("", "leaky", ("u1",), commit, 1000.0, 1000.0, 1)
        return Event(Event.make_id(summary, "work", prov), summary, "work", 0.5, prov)

    cut = "Pushed with " + GITHUB[:14] + "…"  # a summary cut in the middle of the token
    plain_event = event("Ran the tests: 12 pass", old_commit)
    home.memory.append_events([event(cut, old_commit), plain_event, event(f"Read {VALUES[1]}", None)])
    core = home.memory_dir / "core.md"
    core.write_text(f"· token {GITHUB} ↪ session:leaky\n")
    log = next((home.memory_dir / "timeline").glob("*.jsonl"))
    plain_line = next(line for line in log.read_bytes().splitlines() if b"12 pass" in line)

    found = [f for f in scan(home.sessions, memory_dir=home.memory_dir) if f.field.startswith("memory/")]
    assert {(f.session, f.field) for f in found} == {("leaky", f"memory/timeline/{log.name}"), ("", "memory/core.md")}
    plan = plan_purge(home)
    assert plan.memory is not None and plan.memory_findings == 2
    report = purge(home, plan)
    assert report.memory_files == 2
    assert list(scan(home.sessions, memory_dir=home.memory_dir)) == []
    for path in home.memory_dir.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".md"):
            assert not holds_a_value(path.read_bytes()) and GITHUB[:14].encode() not in path.read_bytes(), path
    assert not (home.memory_dir / ".cache.sqlite").exists() or not holds_a_value(
        (home.memory_dir / ".cache.sqlite").read_bytes()
    )
    new_commit = git(leaky, "rev-parse", "main~1").stdout.decode().strip()
    lines = log.read_bytes().splitlines()
    assert plain_line not in lines  # it named the old commit: moved to the new one
    assert any(new_commit.encode() in line and b"12 pass" in line for line in lines)
    summaries = [e.summary for e in home.memory_readonly().timeline(limit=10).events]
    assert any(s.startswith("Pushed with [secret:github-token#") for s in summaries)  # the cache rebuilt


def test_a_session_someone_ran_git_gc_in(home: Home) -> None:
    leaky = home.sessions_dir / "leaky"
    git(leaky, "gc", "--quiet")  # packed-refs, a commit-graph, .rev files, reflog entries of its own
    assert (leaky / ".git" / "packed-refs").exists()
    purge(home, plan_purge(home, "leaky"))
    assert not holds_a_value(git(leaky, "cat-file", "--batch-all-objects", "--batch").stdout)
    fsck = git(leaky, "fsck", "--unreachable", "--strict", "--no-dangling")
    assert fsck.stdout == b"" and fsck.returncode == 0, fsck.stderr
    refs = git(leaky, "for-each-ref", "--format=%(objectname) %(refname)").stdout.decode().split()
    packed = (leaky / ".git" / "packed-refs").read_text()
    assert all(oid in packed or not oid.isalnum() for oid in refs[::2])  # packed-refs names the new tips
    assert home.sessions.verify(repair=False).ok


def test_a_broken_mirror_is_a_clear_error_and_nothing_changes(home: Home) -> None:
    leaky = home.sessions_dir / "leaky"
    for pack in (leaky / ".git" / "objects" / "pack").glob("pack-*"):
        pack.unlink()
    before = tree_hashes(leaky / "history")
    with pytest.raises(OpmemError, match=r"git mirror cannot be read.*opmem verify"):
        purge(home, plan_purge(home, "leaky"))
    assert tree_hashes(leaky / "history") == before
    home.sessions.verify(repair=True)  # rebuilt from the node files
    purge(Home(home.path, durable=False), plan_purge(home, "leaky"))
    assert list(scan(home.sessions, "leaky")) == []
    assert not holds_a_value(git(leaky, "cat-file", "--batch-all-objects", "--batch").stdout)


def test_a_copy_open_elsewhere_reads_the_redacted_session_after_a_purge(home: Home) -> None:
    elsewhere = Home(home.path, durable=False).sessions  # another process's store, both caches warm
    assert GITHUB in elsewhere.get_nodes("leaky")[0].content
    elsewhere.append_message("leaky", "user", "one more question", node_id="u3")
    elsewhere.commit_turn("leaky")
    purge(home, plan_purge(home, "leaky"))
    assert elsewhere.get_nodes("leaky")[0].content.startswith("my deploy key is stored here, the value is [secret:")
    elsewhere.append_message("leaky", "assistant", "Here is the answer.", node_id="a3")  # its writer copy too
    elsewhere.commit_turn("leaky")
    assert "[secret:" in elsewhere.get_branch("leaky", "a3")[0].content
    leaky = home.sessions_dir / "leaky"
    assert not holds_a_value(git(leaky, "log", "-p", "--all").stdout)
    assert home.sessions.verify(repair=False).ok


def test_a_session_without_its_git_never_purges_a_repository_enclosing_the_home(tmp_path) -> None:
    """A home kept inside the user's own repository: a purge of a session whose .git is gone
    must not rewrite, expire or repack that repository (git searches upward by default)."""
    import shutil

    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    (outer / "notes.txt").write_text("mine\n")
    git(outer, "add", "notes.txt")
    git(outer, "-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit", "-qm", "mine")
    loose = (
        subprocess.run(  # unreachable: a repack of that repository would prune it
            ["git", "-C", str(outer), "hash-object", "-w", "--stdin"], input=b"kept\n", capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    head = git(outer, "rev-parse", "HEAD").stdout
    reflog = git(outer, "reflog").stdout
    home = Home(outer / "home", durable=False)
    build(home)
    shutil.rmtree(home.sessions_dir / "leaky" / ".git")
    try:
        purge(home, plan_purge(home, "leaky"))
    except OpmemError:
        pass  # refusing is fine; touching the user's repository is not
    assert git(outer, "rev-parse", "HEAD").stdout == head
    assert git(outer, "reflog").stdout == reflog
    assert git(outer, "cat-file", "-e", loose, check=False).returncode == 0
