import multiprocessing
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.model import Turn
from opmem_tui.backend.projects.agent_commit import AgentCommitter
from opmem_tui.backend.projects.registry import ProjectRegistry
from opmem_tui.backend.projects.repository import ProjectGit

from .project_repo_helpers import (
    TurnBuilder,
    changed_in,
    fsck,
    git,
    head,
    make_repo,
    status,
    write,
)


@pytest.fixture
def setup(tmp_path: Path):
    repo = make_repo(
        tmp_path / "work",
        {"b.py": "b = 1\n", "c.txt": "user notes\n", "d.txt": "data\n", "src/keep.py": "k\n"},
    )
    reg = ProjectRegistry(tmp_path / "home")
    project = reg.resolve_project(repo)
    return reg, project, repo.resolve()


def test_clean_tree_commits_exactly_the_agent_paths(setup):
    reg, project, repo = setup
    write(repo / "c.txt", "user notes, edited before the turn\n")  # user's own dirty file
    start_head = head(repo)
    watch = reg.begin_turn(project.id)

    turn = TurnBuilder("Please add a module and bump b to two " + "x" * 80, model="claude-test")
    write(repo / "src/pkg/new.py", "print('new')\n")
    turn.tool("Write", {"file_path": str(repo / "src/pkg/new.py"), "content": "print('new')\n"})
    write(repo / "b.py", "b = 2\n")
    turn.tool("Edit", {"file_path": "b.py", "old_string": "1", "new_string": "2"})
    turn.tool("Read", {"file_path": str(repo / "d.txt")})
    result = reg.commit_agent_turn(watch, Turn(3, tuple(turn.nodes)), session_id="sess-a")

    assert result.commit and result.warning == "" and result.turn == 3
    assert set(result.paths) == {"src/pkg/new.py", "b.py"}
    assert head(repo) == result.commit
    assert changed_in(repo, result.commit) == {"src/pkg/new.py", "b.py"}
    assert git(repo, "rev-parse", "HEAD^").strip() == start_head
    assert git(repo, "log", "-1", "--format=%an|%ae|%s").strip() == (
        "agent (claude-test via opmem)|agent@opmem.invalid|"
        "[agent sess-a] turn 3: Please add a module and bump b to two xxxxxxxxxxxxxxxxxxxxxx"
    )
    assert git(repo, "show", "HEAD:b.py") == "b = 2\n"
    # the user's dirty file is still theirs: modified, unstaged, not committed
    assert status(repo) == [" M c.txt"]
    fsck(repo)
    # the link to the turn is kept, and the session joins the project
    [link] = reg.links_for_commit(project.id, result.commit[:9])
    assert (link.session_id, link.turn, link.confidence, link.reason) == ("sess-a", 3, "high", "opmem")
    assert "sess-a" in reg.get(project.id).sessions
    assert reg.log(project.id, 5, agent_only=True)[0].oid == result.commit


def test_user_dirty_path_blocks_the_commit_and_warns(setup):
    reg, project, repo = setup
    write(repo / "b.py", "b = 'user wip'\n")
    before = head(repo)
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("edit b and add e")
    write(repo / "b.py", "b = 'user wip'\nagent = True\n")
    turn.tool("Edit", {"file_path": str(repo / "b.py")})
    write(repo / "e.py", "e\n")
    turn.tool("Write", {"file_path": str(repo / "e.py")})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="sess-b", turn_number=7)

    assert result.commit is None and result.skipped == "dirty at turn start"
    assert result.dirty_paths == ("b.py",) and "b.py" in result.warning
    assert head(repo) == before
    assert sorted(status(repo)) == [" M b.py", "?? e.py"]  # nothing staged
    [warning] = reg.warnings(project.id)
    assert (warning.session_id, warning.turn, warning.paths) == ("sess-b", 7, ("b.py",))
    assert "uncommitted changes" in warning.message
    reg.dismiss_warning(warning.id)
    assert reg.warnings(project.id) == []
    assert len(reg.warnings(project.id, include_dismissed=True)) == 1


def test_untracked_user_file_counts_as_dirty(setup):
    reg, project, repo = setup
    write(repo / "scratch/notes.md", "mine\n")  # an untracked folder, listed as scratch/
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("tidy notes")
    write(repo / "scratch/notes.md", "agent rewrote\n")
    turn.tool("Write", {"file_path": str(repo / "scratch/notes.md")})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert result.commit is None and result.dirty_paths == ("scratch/notes.md",)


def test_file_the_user_edits_during_the_turn_is_not_staged(setup):
    reg, project, repo = setup
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("change b")
    write(repo / "b.py", "b = 3\n")
    turn.tool("Write", {"file_path": str(repo / "b.py"), "content": "b = 3\n"})
    write(repo / "d.txt", "user typed this meanwhile\n")  # not written by any tool
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert changed_in(repo, result.commit) == {"b.py"}
    assert status(repo) == [" M d.txt"]
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_codex_patch_adds_updates_and_deletes(setup):
    reg, project, repo = setup
    watch = reg.begin_turn(project.id)
    patch = (
        "*** Begin Patch\n*** Update File: b.py\n@@\n-b = 1\n+b = 9\n*** Add File: docs/guide.md\n+# guide\n"
        "*** Delete File: d.txt\n*** End Patch"
    )
    turn = TurnBuilder("patch")
    turn.tool("shell", {"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{patch}\nEOF"], "workdir": str(repo)})
    write(repo / "b.py", "b = 9\n")
    write(repo / "docs/guide.md", "# guide\n")
    (repo / "d.txt").unlink()
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="codex-1", turn_number=2)
    assert changed_in(repo, result.commit) == {"b.py", "docs/guide.md", "d.txt"}
    assert "d.txt" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert status(repo) == []
    fsck(repo)


def test_ignored_outside_and_unchanged_paths_make_no_commit(setup, tmp_path: Path):
    reg, project, repo = setup
    write(repo / ".gitignore", "build/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore build")
    before = head(repo)
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("build")
    write(repo / "build/out.bin", "x")
    turn.tool("Write", {"file_path": str(repo / "build/out.bin")})
    turn.tool("Write", {"file_path": str(tmp_path / "elsewhere.txt")})
    turn.tool("Edit", {"file_path": str(repo / "b.py")})  # an edit that changed nothing
    turn.tool("Write", {"file_path": str(repo / ".git/config")})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert result.commit is None and result.warning == ""
    assert result.ignored == ("build/out.bin",)
    assert set(result.outside) == {str(tmp_path / "elsewhere.txt"), str(repo / ".git/config")}
    assert head(repo) == before


def test_paused_project_gets_no_commits(setup):
    reg, project, repo = setup
    reg.set_status(project.id, "paused")
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("x")
    write(repo / "b.py", "changed\n")
    turn.tool("Write", {"file_path": str(repo / "b.py")})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert result.commit is None and "paused" in result.skipped


def test_first_commit_in_an_empty_repository(tmp_path: Path):
    folder = tmp_path / "empty"
    folder.mkdir()
    reg = ProjectRegistry(tmp_path / "home")
    project = reg.resolve_project(folder)  # git init
    write(folder / "user.txt", "not mine\n")
    watch = reg.begin_turn(project.id)
    assert watch.head is None
    turn = TurnBuilder("start")
    write(folder / "main.py", "print()\n")
    turn.tool("Write", {"file_path": str(folder / "main.py"), "content": "print()\n"})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert git(folder, "ls-tree", "-r", "--name-only", "HEAD").split() == ["main.py"]
    assert git(folder, "rev-list", "--count", "HEAD").strip() == "1"
    assert status(folder) == ["?? user.txt"]
    fsck(folder)
    assert result.commit == head(folder)


def test_executable_bit_is_kept_and_a_symlink_is_not_taken_for_the_agents_file(setup):
    reg, project, repo = setup
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("script")
    write(repo / "run.sh", "#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("b.py")  # made outside the agent's write tools
    turn.tool("Write", {"file_path": str(repo / "run.sh"), "content": "#!/bin/sh\necho hi\n"})
    turn.tool("Write", {"file_path": "link", "content": "b = 1\n"})  # a Write goes through the link
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    tree = git(repo, "ls-tree", "HEAD").splitlines()
    modes = {line.split("\t")[1]: line.split()[0] for line in tree}
    assert modes["run.sh"] == "100755" and "link" not in modes
    assert result.commit and result.unverified == ("link",) and "symbolic link" in result.warning
    assert status(repo) == ["?? link"]


# -- two processes committing to one project -----------------------------------------------------


def _agent_process(home: str, project_id: str, name: str, barrier, rounds: int) -> None:
    reg = ProjectRegistry(home)
    root = Path(reg.get(project_id).workdir)
    for i in range(rounds):
        watch = reg.begin_turn(project_id)
        barrier.wait(timeout=30)  # both turns are open at once
        path = root / f"{name}-{i}.txt"
        path.write_text(f"{name} {i}\n")
        turn = TurnBuilder(f"{name} round {i}", prefix=name)
        turn.tool("Write", {"file_path": str(path), "content": f"{name} {i}\n"})
        result = reg.commit_agent_turn(watch, turn.nodes, session_id=name, turn_number=i + 1)
        assert result.commit, result


def test_concurrent_sessions_serialize_their_commits(setup):
    reg, project, repo = setup
    start = head(repo)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    rounds = 3
    procs = [
        ctx.Process(target=_agent_process, args=(str(reg.home), project.id, name, barrier, rounds), daemon=True)
        for name in ("alpha", "beta")
    ]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(60)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(5)
    assert [p.exitcode for p in procs] == [0, 0]
    revs = git(repo, "rev-list", "--parents", f"{start}..HEAD").splitlines()
    assert len(revs) == 2 * rounds
    assert all(len(line.split()) == 2 for line in revs)  # one parent each: a straight line
    assert git(repo, "rev-list", "--merges", "HEAD") == ""
    files = set(git(repo, "ls-tree", "--name-only", "HEAD").split())
    assert {f"{n}-{i}.txt" for n in ("alpha", "beta") for i in range(rounds)} <= files
    subjects = git(repo, "log", "--format=%s", f"{start}..HEAD").splitlines()
    assert sorted(subjects) == sorted(
        f"[agent {n}] turn {i + 1}: {n} round {i}" for n in ("alpha", "beta") for i in range(rounds)
    )
    assert status(repo) == []
    fsck(repo)


def test_commit_refuses_when_head_moved_under_it(setup, monkeypatch):
    """create_commit only moves HEAD's branch if it still points at the parent we read."""
    _reg, _project, repo = setup
    pg = ProjectGit(repo)
    watch = AgentCommitter(pg).begin_turn()
    turn = TurnBuilder("x")
    write(repo / "b.py", "moved\n")
    turn.tool("Write", {"file_path": str(repo / "b.py"), "content": "moved\n"})
    real_head = ProjectGit.head_oid
    stale = pygit2.Oid(hex=head(repo))

    def racing_head(self):
        oid = real_head(self)
        # the user commits between our read of HEAD and our ref update
        git(repo, "commit", "-q", "--allow-empty", "-m", "user raced")
        return stale if oid == stale else oid

    monkeypatch.setattr(ProjectGit, "head_oid", racing_head)
    result = AgentCommitter(pg).commit_turn(watch, turn.nodes, session_id="s", turn_number=1)
    monkeypatch.undo()
    assert result.commit is None and result.skipped == "commit failed"
    assert git(repo, "log", "-1", "--format=%s").strip() == "user raced"
    fsck(repo)


def test_tracked_file_matching_an_ignore_rule_is_still_committed(setup):
    reg, project, repo = setup
    write(repo / ".gitignore", "*.lock\n")
    write(repo / "deps.lock", "v1\n")
    git(repo, "add", ".gitignore")
    git(repo, "add", "-f", "deps.lock")
    git(repo, "commit", "-q", "-m", "track a lock file")
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("bump deps")
    write(repo / "deps.lock", "v2\n")
    turn.tool("Write", {"file_path": str(repo / "deps.lock"), "content": "v2\n"})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert result.commit and changed_in(repo, result.commit) == {"deps.lock"}
    assert status(repo) == []


def test_only_files_whose_content_the_agents_writes_explain_are_committed(setup):
    reg, project, repo = setup
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("three files")
    write(repo / "d.txt", "user line first\ndata\n")  # the user, during the turn, before the agent's edit
    write(repo / "d.txt", "user line first\nDATA\n")
    turn.tool("Edit", {"file_path": str(repo / "d.txt"), "old_string": "data", "new_string": "DATA"})
    write(repo / "b.py", "b = 'from a shell'\n")
    turn.tool("NotebookEdit", {"notebook_path": str(repo / "b.py"), "new_source": "?"})
    write(repo / "new.py", "n = 1\n")
    turn.tool("Write", {"file_path": str(repo / "new.py"), "content": "n = 1\n"})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=4)

    assert result.commit and changed_in(repo, result.commit) == {"new.py"}
    assert result.changed_outside == ("d.txt",) and result.unverified == ("b.py",)
    assert "d.txt changed outside the agent during the turn" in result.warning
    assert "what the agent wrote to b.py cannot be told" in result.warning
    assert "the rest of the turn was committed" in result.warning
    assert sorted(status(repo)) == [" M b.py", " M d.txt"]  # both left to the user, unstaged
    [warning] = reg.warnings(project.id)
    assert warning.paths == ("d.txt", "b.py") and warning.turn == 4
    fsck(repo)


# -- strict object checks for writes into the user's repository ----------------------------------

STRICT_SCRIPT = """
import json, sys
from pathlib import Path
import pygit2
from opmem_tui.backend.projects.agent_commit import edit_tree
from opmem_tui.backend.projects.registry import ProjectRegistry
from opmem_tui.backend.projects.repository import ProjectGitError
sys.path.insert(0, sys.argv[3])
from project_repo_helpers import TurnBuilder

home, repo_path = sys.argv[1], Path(sys.argv[2])
out = {}
for strict in (False, True):
    pygit2.settings.enable_strict_object_creation(strict)  # whatever the process-wide setting is
    repo = pygit2.Repository(str(repo_path))
    base = repo.head.peel(pygit2.Commit).tree
    missing = pygit2.Oid(hex="12" * 20)
    try:
        edit_tree(repo, base, {"ghost.txt": (missing, pygit2.enums.FileMode.BLOB)})
        out[f"missing-{strict}"] = "written"
    except ProjectGitError as exc:
        out[f"missing-{strict}"] = str(exc)
    blob = repo.create_blob(b"not a tree\\n")
    try:
        edit_tree(repo, base, {"src": (blob, pygit2.enums.FileMode.TREE)})
        out[f"type-{strict}"] = "written"
    except ProjectGitError as exc:
        out[f"type-{strict}"] = str(exc)
    reg = ProjectRegistry(home)
    project = reg.resolve_project(repo_path)
    watch = reg.begin_turn(project.id)
    name = f"strict-{strict}.py"
    (repo_path / name).write_text("x = 1\\n")
    turn = TurnBuilder("strict", prefix=f"s{int(strict)}")
    turn.tool("Write", {"file_path": str(repo_path / name), "content": "x = 1\\n"})
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=int(strict) + 1)
    out[f"commit-{strict}"] = result.commit
print(json.dumps(out))
"""


def test_project_writes_are_checked_strictly_whatever_the_process_setting(setup, tmp_path: Path):
    """An entry naming a missing object, or an object of the wrong type, is refused with strict
    object creation off (as the session store may set it) and on; real commits pass both ways."""
    import json
    import subprocess
    import sys

    reg, _project, repo = setup
    helpers = Path(__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-c", STRICT_SCRIPT, str(reg.home), str(repo), str(helpers)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for strict in ("False", "True"):
        assert "missing object 1212121212121212121212121212121212121212" in out[f"missing-{strict}"]
        assert "is a blob, not a tree" in out[f"type-{strict}"]
        assert out[f"commit-{strict}"]
    assert changed_in(repo, "HEAD") == {"strict-True.py"} and changed_in(repo, "HEAD~1") == {"strict-False.py"}
    fsck(repo)


def test_a_commit_whose_tree_would_name_a_missing_object_is_not_made(setup, monkeypatch):
    reg, project, repo = setup
    before = head(repo)
    watch = reg.begin_turn(project.id)
    turn = TurnBuilder("x")
    write(repo / "b.py", "b = 5\n")
    turn.tool("Write", {"file_path": str(repo / "b.py"), "content": "b = 5\n"})
    real_entry = AgentCommitter._worktree_entry

    def lost_blob(self, rel):
        _oid, mode = real_entry(self, rel)
        return pygit2.Oid(hex="ab" * 20), mode  # as if the blob never reached the object store

    monkeypatch.setattr(AgentCommitter, "_worktree_entry", lost_blob)
    monkeypatch.setattr(AgentCommitter, "_agent_made", lambda self, rel, entry, outcome: outcome)
    result = reg.commit_agent_turn(watch, turn.nodes, session_id="s", turn_number=1)
    assert result.commit is None and result.skipped == "commit failed"
    assert "missing object abababab" in result.warning
    assert head(repo) == before
    fsck(repo)
