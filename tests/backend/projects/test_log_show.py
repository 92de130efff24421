from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.projects.repository import ProjectGit, ProjectGitError, iter_commits

from .project_repo_helpers import git, make_repo, user_commit


def build_history(path: Path, count: int) -> list[str]:
    """`count` commits written as objects; every 5th is an agent commit. Returns oids newest first."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    parent: list = []
    oids = []
    for i in range(count):
        blob = repo.create_blob(f"line {i}\n".encode())
        builder = repo.TreeBuilder()
        builder.insert("counter.txt", blob, pygit2.enums.FileMode.BLOB)
        tree = builder.write()
        when = 1_700_000_000 + i * 60
        if i % 5 == 0:
            author = pygit2.Signature("agent (gpt-x via opmem)", "agent@opmem.invalid", when, 0)
            message = f"[agent sess-{i}] turn {i}: change {i}\n"
        else:
            author = pygit2.Signature("Uma User", "uma@example.com", when, 60)
            message = f"user change {i}\n\nbody {i}\n"
        oid = repo.create_commit("refs/heads/main", author, author, message, tree, parent)
        parent = [oid]
        oids.append(str(oid))
    return oids[::-1]


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("history")
    return path, build_history(path, 250)


def test_log_pages_match_git(history):
    path, oids = history
    assert git(path, "log", "--format=%H").split() == oids
    pg = ProjectGit(path)
    first = pg.log(100)
    assert [c.oid for c in first] == oids[:100]
    second = pg.log(100, after=first[-1].oid)  # warm cursor: the walk continues
    third = ProjectGit(path).log(100, after=second[-1].oid)  # cold cursor: a fresh object
    assert [c.oid for c in second] == oids[100:200]
    assert [c.oid for c in third] == oids[200:]
    assert [c.oid for c in iter_commits(pg, page=64)] == oids
    assert pg.log(10, after="0" * 40) == []


def test_log_fields_and_agent_filter(history):
    path, oids = history
    pg = ProjectGit(path)
    newest = pg.log(1)[0]  # i = 249: a user commit
    assert newest.summary == "user change 249" and newest.message.startswith("user change 249\n\nbody")
    assert newest.author_name == "Uma User" and newest.offset == 60 and not newest.is_agent
    assert newest.time == 1_700_000_000 + 249 * 60 and newest.parents == (oids[1],)
    agents = pg.log(20, agent_only=True)
    assert len(agents) == 20 and all(c.is_agent for c in agents)
    assert agents[0].summary == "[agent sess-245] turn 245: change 245"
    assert agents[0].session_id == "sess-245" and agents[0].turn == 245 and agents[0].model == "gpt-x"
    more = pg.log(20, agent_only=True, after=agents[-1].oid)
    assert more[0].session_id == "sess-145"
    all_agent = pg.log(1000, agent_only=True)
    assert len(all_agent) == 50
    recent = pg.log(1000, since=1_700_000_000 + 240 * 60)
    assert len(recent) == 10


def test_empty_repo_and_bad_revisions(tmp_path: Path):
    pygit2.init_repository(str(tmp_path / "empty"))
    assert ProjectGit(tmp_path / "empty").log(10) == []
    repo = make_repo(tmp_path / "r")
    with pytest.raises(ProjectGitError, match="no commit 'nope'"):
        ProjectGit(repo).show("nope")
    with pytest.raises(ProjectGitError, match="not a git repository"):
        ProjectGit(tmp_path / "not-a-repo").log()


def test_show_files_and_hunks(tmp_path: Path):
    body = "".join(f"line {i}\n" for i in range(1, 21))
    repo = make_repo(tmp_path / "r", {"a.txt": body, "gone.txt": "bye\n", "move_me.txt": "same content here\n" * 5})
    changed = body.replace("line 3\n", "line three\n").replace("line 18\n", "")
    oid = user_commit(
        repo,
        "several changes",
        {"a.txt": changed, "gone.txt": None, "new/b.txt": "fresh\n"},
    )
    git(repo, "mv", "move_me.txt", "moved.txt")
    (repo / "bin.dat").write_bytes(b"\x00\x01\x02" * 10)
    git(repo, "add", "bin.dat")
    git(repo, "commit", "-q", "-m", "rename and binary")

    pg = ProjectGit(repo)
    detail = pg.show(oid[:8])  # abbreviated hashes resolve
    assert detail.commit.oid == oid and detail.commit.summary == "several changes"
    files = {f.path: f for f in detail.files}
    assert set(files) == {"a.txt", "gone.txt", "new/b.txt"}
    assert detail.commit.paths == tuple(f.path for f in detail.files)
    a = files["a.txt"]
    assert (a.status, a.additions, a.deletions, a.binary) == ("M", 1, 2, False)
    assert len(a.hunks) == 2
    first = a.hunks[0]
    assert first.header.startswith("@@ -1,6 +1,6 @@")
    assert [(item.origin, item.content) for item in first.lines if item.origin in "+-"] == [
        ("-", "line 3\n"),
        ("+", "line three\n"),
    ]
    assert files["gone.txt"].status == "D" and files["gone.txt"].deletions == 1
    assert files["new/b.txt"].status == "A" and files["new/b.txt"].hunks[0].lines[0].content == "fresh\n"

    latest = pg.show("HEAD")
    by_path = {f.path: f for f in latest.files}
    assert by_path["moved.txt"].status == "R" and by_path["moved.txt"].old_path == "move_me.txt"
    assert by_path["bin.dat"].binary and by_path["bin.dat"].hunks == ()

    root = pg.show(git(repo, "rev-list", "--max-parents=0", "HEAD").strip())
    assert {f.path for f in root.files} == {"a.txt", "gone.txt", "move_me.txt"}
    assert all(f.status == "A" for f in root.files)


def test_show_truncates_huge_files(tmp_path: Path):
    repo = make_repo(tmp_path / "r")
    user_commit(repo, "big", {"big.txt": "".join(f"{i}\n" for i in range(5000))})
    [big] = ProjectGit(repo).show("HEAD", max_lines_per_file=100).files
    assert big.truncated and sum(len(h.lines) for h in big.hunks) == 100 and big.additions == 5000


def test_equal_timestamps_keep_git_order(tmp_path: Path):
    """Scripted or rebased history often shares one timestamp; the log must not shuffle it."""
    repo = pygit2.init_repository(str(tmp_path / "same"), initial_head="main")
    sig = pygit2.Signature("Uma User", "uma@example.com", 1_700_000_000, 0)
    parents: list = []
    for i in range(30):
        builder = repo.TreeBuilder()
        builder.insert("f", repo.create_blob(str(i).encode()), pygit2.enums.FileMode.BLOB)
        parents = [repo.create_commit("refs/heads/main", sig, sig, f"c{i}", builder.write(), parents)]
    expected = git(tmp_path / "same", "log", "--format=%H").split()
    pg = ProjectGit(tmp_path / "same")
    page = pg.log(10)
    assert [c.oid for c in page + pg.log(50, after=page[-1].oid)] == expected
