"""Imported sessions are bound to the git repository of their cwd, and project commits are linked
to the turns that made them: real repositories in tmp_path, synthetic Claude Code transcripts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
from click.testing import CliRunner

from opmem_tui.backend.importers import run_import
from opmem_tui.backend.projects.binding import ProjectBinder, project_root
from opmem_tui.cli import main

from ..importers.conftest import Transcript, text, tool_use
from .project_repo_helpers import git, make_repo, user_commit, write

SID = "aaaaaaaa-0000-4000-8000-000000000001"


def transcript(cwd: Path, session: str = SID, start: datetime | None = None) -> Transcript:
    t = Transcript(session=session, cwd=str(cwd))
    t.clock = start or datetime.now(UTC) - timedelta(minutes=10)
    return t


def claude_file(root: Path, t: Transcript) -> Path:
    return t.write(root / "claude" / "projects" / "-proj" / f"{t.session}.jsonl")


def projects_json(home) -> list[dict]:
    return json.loads((home.path / "projects" / "projects.json").read_text())["projects"]


def link_lines(home) -> list[dict]:
    path = home.path / "projects" / "links.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_cwd_inside_a_repository_binds_the_session(home, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    (repo / "src").mkdir()
    t = transcript(repo / "src")
    t.prompt("explain the code")
    t.assistant("msg_1", text("It prints hello."))
    claude_file(tmp_path, t)

    report = run_import(home, "claude", [tmp_path / "claude"])

    sid = f"cc-{SID}"
    meta = home.sessions.get_meta(sid)
    [project] = projects_json(home)
    assert project["workdir"] == str(repo.resolve()) and project["sessions"] == [sid]
    assert meta.project_id == project["id"]
    assert meta.title_source != "user"  # only project_id was set
    assert report.warnings == []
    # the user's repository only gained the exclude line for opmem's folder
    assert git(repo, "status", "--porcelain") == ""


def test_reimport_is_idempotent(home, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    t = transcript(repo)
    t.prompt("commit the fix")
    call = t.assistant("msg_1", tool_use("toolu_1", "Bash", command='git commit -am "fix the parser"'))
    write(repo / "README.md", "fixed\n")
    when = t.clock.timestamp()
    oid = user_commit(repo, "fix the parser", {"README.md": "fixed\n"}, when=when)
    t.result("toolu_1", f"[main {oid[:7]}] fix the parser\n 1 file changed", parent=call)
    t.assistant("msg_2", text("Committed."))
    claude_file(tmp_path, t)

    run_import(home, "claude", [tmp_path / "claude"])
    first_links = link_lines(home)
    again = run_import(home, "claude", [tmp_path / "claude"], force=True)

    assert again.new_sessions == 0
    assert [p["sessions"] for p in projects_json(home)] == [[f"cc-{SID}"]]
    assert len(first_links) == 1 and link_lines(home) == first_links


def test_a_git_commit_tool_call_links_its_commit_with_high_confidence(home, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    t = transcript(repo)
    t.prompt("look around")
    t.assistant("msg_0", text("A small repo."))
    t.prompt("add a feature and commit it")
    write_call = t.assistant(
        "msg_1", tool_use("toolu_w", "Write", file_path=str(repo / "feature.py"), content="x = 1\n")
    )
    t.result("toolu_w", "File created", parent=write_call)
    commit_call = t.assistant(
        "msg_2", tool_use("toolu_c", "Bash", command='git add feature.py && git commit -m "Add feature"')
    )
    oid = user_commit(repo, "Add feature", {"feature.py": "x = 1\n"}, when=t.clock.timestamp())
    t.result("toolu_c", f"[main {oid[:7]}] Add feature\n 1 file changed, 1 insertion(+)", parent=commit_call)
    t.assistant("msg_3", text("Done."))
    claude_file(tmp_path, t)

    run_import(home, "claude", [tmp_path / "claude"])

    sid = f"cc-{SID}"
    project_id = home.sessions.get_meta(sid).project_id
    [link] = home.projects.links_for_commit(project_id, oid)
    assert (link.session_id, link.turn, link.confidence, link.reason) == (sid, 2, "high", "hash")
    assert link.head_id == "msg_3"
    # the initial commit predates the session window by far less than an hour, but no turn made it
    initial = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert home.projects.links_for_commit(project_id, initial) == []


def test_a_commit_in_the_window_that_touched_a_written_path_is_a_low_confidence_link(home, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    t = transcript(repo)
    t.prompt("write the notes")
    call = t.assistant("msg_1", tool_use("toolu_w", "Write", file_path=str(repo / "notes.md"), content="n\n"))
    t.result("toolu_w", "File created", parent=call)
    t.assistant("msg_2", text("Written."))
    oid = user_commit(repo, "wip", {"notes.md": "n\n"}, when=t.clock.timestamp() + 5)
    claude_file(tmp_path, t)

    run_import(home, "claude", [tmp_path / "claude"])

    project_id = home.sessions.get_meta(f"cc-{SID}").project_id
    [link] = home.projects.links_for_commit(project_id, oid)
    assert (link.confidence, link.reason, link.paths) == ("low", "paths", ("notes.md",))


def test_every_branch_is_linked(home, tmp_path: Path) -> None:
    """A rewind: the commit was made on the branch the user left; it is still linked."""
    repo = make_repo(tmp_path / "proj")
    t = transcript(repo)
    t.prompt("hello")
    reply = t.assistant("msg_0", text("Hi."))
    t.prompt("commit it")
    call = t.assistant("msg_1", tool_use("toolu_c", "Bash", command='git commit -am "first try"'))
    oid = user_commit(repo, "first try", {"README.md": "try\n"}, when=t.clock.timestamp())
    t.result("toolu_c", f"[main {oid[:7]}] first try", parent=call)
    t.assistant("msg_2", text("Committed."))
    t.prompt("no, do something else", parent=reply)  # rewind to after the first reply
    t.assistant("msg_3", text("Sure."))
    claude_file(tmp_path, t)

    run_import(home, "claude", [tmp_path / "claude"])

    sid = f"cc-{SID}"
    assert home.sessions.head(sid) == "msg_3" and len(home.sessions.leaves(sid)) == 2
    project_id = home.sessions.get_meta(sid).project_id
    [link] = home.projects.links_for_commit(project_id, oid)
    assert (link.turn, link.confidence, link.head_id) == (2, "high", "msg_2")


def test_no_bind_binds_nothing(home, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    t = transcript(repo)
    t.prompt("hi")
    t.assistant("msg_1", text("hello"))
    claude_file(tmp_path, t)

    run_import(home, "claude", [tmp_path / "claude"], bind=False)
    assert home.sessions.get_meta(f"cc-{SID}").project_id == ""
    assert not (home.path / "projects" / "projects.json").exists()
    # a later import that binds picks the session up even though the file is unchanged (--force)
    run_import(home, "claude", [tmp_path / "claude"], force=True)
    assert home.sessions.get_meta(f"cc-{SID}").project_id == projects_json(home)[0]["id"]


def test_cli_import_no_bind(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    t = transcript(repo)
    t.prompt("hi")
    t.assistant("msg_1", text("hello"))
    claude_file(tmp_path, t)
    home_dir = tmp_path / "h"

    result = CliRunner().invoke(
        main, ["--home", str(home_dir), "import", "claude", str(tmp_path / "claude"), "--no-bind"]
    )
    assert result.exit_code == 0, result.output
    assert not (home_dir / "projects" / "projects.json").exists()

    result = CliRunner().invoke(
        main, ["--home", str(home_dir), "import", "claude", str(tmp_path / "claude"), "--force"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((home_dir / "projects" / "projects.json").read_text())["projects"][0]["sessions"] == [f"cc-{SID}"]


def test_cwds_that_bind_nothing(home, tmp_path: Path) -> None:
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    bare = tmp_path / "bare.git"
    pygit2.init_repository(str(bare), bare=True)
    home_repo = Path.home()  # the tests' own $HOME, in tmp_path
    make_repo(home_repo)
    (home_repo / "work").mkdir()
    for cwd in (tmp_path / "gone", plain_dir, bare, home_repo / "work", home_repo, "relative/path"):
        assert project_root(cwd) is None, cwd
    # opmem's own session repositories are never projects
    inside = home.path / "sessions" / "x"
    make_repo(inside)
    assert project_root(inside, exclude=(home.path.resolve(),)) is None
    assert ProjectBinder.for_home(home)("cc-x", str(inside)) is None


def test_a_worktree_or_nested_repository_is_its_own_project(home, tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer")
    inner = make_repo(outer / "vendor" / "lib")
    binder = ProjectBinder.for_home(home)
    home.sessions.append_message("s1", "user", "x")
    home.sessions.append_message("s2", "user", "y")
    outer_id = binder("s1", str(outer / "vendor"))
    inner_id = binder("s2", str(inner))
    assert outer_id != inner_id
    assert {p["workdir"] for p in projects_json(home)} == {str(outer.resolve()), str(inner.resolve())}
    # an already bound folder is found again, not bound twice
    assert ProjectBinder.for_home(home)("s2", str(inner / ".")) == inner_id
    assert len(projects_json(home)) == 2


def test_the_link_cache_follows_its_own_appends_and_other_writers(tmp_path: Path) -> None:
    from opmem_tui.backend.projects.links import CommitLink, LinkStore

    path = tmp_path / "links.jsonl"
    ours, other = LinkStore(path), LinkStore(path)
    assert len(ours.add([CommitLink("a" * 40, "s1", 1, "low", "paths", project_id="p")])) == 1
    assert len(ours.add([CommitLink("a" * 40, "s1", 1, "high", "hash", project_id="p")])) == 1
    assert ours.add([CommitLink("a" * 40, "s1", 1, "low", "paths", project_id="p")]) == []
    [best] = ours.for_commit("a" * 40)
    assert best.confidence == "high"
    other.add([CommitLink("b" * 40, "s2", 2, "high", "hash", project_id="p")])  # another writer
    assert [item.commit[0] for item in ours.by_commit("p").values()] == ["a", "b"]
    assert len(path.read_text().splitlines()) == 3
