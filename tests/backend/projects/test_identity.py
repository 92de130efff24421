"""A project is its repository: worktrees and checkouts of one origin are one project, and a session
from a folder not on this machine is matched by the remote it recorded (ARCHITECTURE.md §4)."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.distill.collect import session_info
from opmem_tui.backend.home import Home
from opmem_tui.backend.projects.binding import ProjectBinder
from opmem_tui.backend.projects.identity import normalize_remote, project_for_folder, repository_identity

from .project_repo_helpers import make_repo

ORIGIN = "git@github.com:me/app.git"


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:me/app.git",
        "ssh://git@github.com/me/app.git",
        "https://github.com/me/app",
        "https://user@GitHub.com/me/app.git/",
        "ssh://git@github.com:22/me/app.git",
    ],
)
def test_the_forms_of_one_remote_agree(url: str) -> None:
    assert normalize_remote(url) == "github.com/me/app"


def test_other_remotes_differ() -> None:
    assert normalize_remote("git@github.com:me/app-two.git") != normalize_remote(ORIGIN)
    assert normalize_remote("") == ""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    main = make_repo(tmp_path / "src" / "app")
    pygit2.Repository(str(main)).remotes.create("origin", ORIGIN)
    return main


def worktree(main: Path, where: Path) -> Path:
    repo = pygit2.Repository(str(main))
    branch = repo.branches.local.create("feature", repo.head.peel(pygit2.Commit))
    where.parent.mkdir(parents=True, exist_ok=True)
    repo.add_worktree("app-feature", str(where), branch)
    return where


def second_checkout(main: Path, where: Path) -> Path:
    clone = pygit2.clone_repository(str(main), str(where))
    clone.remotes.set_url("origin", "https://github.com/me/app")  # another form of the same origin
    return where


def test_a_worktree_and_a_second_checkout_of_one_origin_are_one_project(home: Home, app: Path, tmp_path: Path) -> None:
    tree = worktree(app, tmp_path / "worktrees" / "app-feature")
    other = second_checkout(app, tmp_path / "elsewhere" / "app")
    (tree / "lib").mkdir()
    assert repository_identity(tree).common_dir == repository_identity(app).common_dir
    binder = ProjectBinder.for_home(home)
    for sid in ("s-main", "s-tree", "s-other"):
        home.sessions.append_message(sid, "user", "hi")
    ids = {binder("s-main", str(app)), binder("s-tree", str(tree / "lib")), binder("s-other", str(other))}
    assert len(ids) == 1 and None not in ids
    (project,) = home.projects.list_projects()
    assert set(project.sessions) == {"s-main", "s-tree", "s-other"}
    assert project.workdir == str(app.resolve())  # the first checkout stays the project's folder
    # the one function asked by the hook, `opmem core` and the distiller agrees for every folder
    for folder in (app, tree, tree / "lib", other):
        assert home.projects.project_for(folder) == project.id


def test_another_repository_stays_another_project(home: Home, app: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "src" / "tool")
    binder = ProjectBinder.for_home(home)
    home.sessions.append_message("s1", "user", "hi")
    home.sessions.append_message("s2", "user", "hi")
    assert binder("s1", str(app)) != binder("s2", str(other))


def test_a_session_from_a_folder_not_on_this_machine_is_matched_by_its_remote(home: Home, app: Path) -> None:
    bound = home.projects.resolve_project(app)
    meta_extra = {"cwd": "/home/someone/work/app", "source_extra": {"git_remote": "ssh://git@github.com/me/app.git"}}
    node = home.sessions.append_message("s-away", "user", "fix the build", session_meta=meta_extra)
    home.sessions.append_message(
        "s-away", "tool", "ok", parent_id=node.id, called_by=node.id, name="Bash", input={"command": "make"}
    )
    meta = home.sessions.get_meta("s-away")
    info = session_info(home.sessions, home.projects, meta, home.sessions.get_nodes("s-away"))
    assert info.scope == f"project:{bound.id}" and info.project_id == bound.id
    assert project_for_folder("/home/someone/work/app", [bound], remote=ORIGIN) == bound.id
    assert project_for_folder("/home/someone/work/web", [bound]) == ""  # no remote, another name: not guessed


def test_with_no_remote_recorded_a_folder_not_here_is_matched_by_its_name_and_branch(app: Path, tmp_path: Path) -> None:
    repo = pygit2.Repository(str(app))
    repo.branches.local.create("otel-tracing", repo.head.peel(pygit2.Commit))
    bound = [type("P", (), {"id": "app-1", "workdir": str(app)})()]
    away = "/home/someone/src/app"
    assert project_for_folder(away, bound) == "app-1"
    assert project_for_folder(away, bound, branch="otel-tracing") == "app-1"
    assert project_for_folder(away, bound, branch="main") == "app-1"  # a trunk name tells nothing
    assert project_for_folder(away, bound, branch="someone-elses-branch") == ""
    assert project_for_folder("/home/someone/src/tool", bound) == ""
    assert project_for_folder(away, bound, remote="git@github.com:other/app.git") == ""  # another repository
    twin = make_repo(tmp_path / "old" / "app")
    both = [*bound, type("P", (), {"id": "app-2", "workdir": str(twin)})()]
    assert project_for_folder(away, both) == ""  # two of that name: not guessed
    assert project_for_folder(away, both, branch="otel-tracing") == "app-1"  # the branch tells which


def test_the_identity_read_from_gits_files_is_what_pygit2_sees(app: Path, tmp_path: Path) -> None:
    tree = worktree(app, tmp_path / "worktrees" / "app-feature")
    other = second_checkout(app, tmp_path / "elsewhere" / "app")
    (tree / "deep" / "er").mkdir(parents=True)
    for folder in (app, tree / "deep" / "er", other):
        repo = pygit2.Repository(pygit2.discover_repository(str(folder)))
        found = repository_identity(folder)
        assert found is not None
        assert found.root == str(Path(repo.workdir).resolve())
        common = Path(repo.path).resolve()
        assert Path(found.common_dir) in (common, common.parent.parent)  # a worktree's git dir is under the common one
        assert found.remote == normalize_remote(repo.remotes["origin"].url)
        assert found.branch == repo.head.shorthand
    assert repository_identity(tmp_path) is None


def test_a_worktree_session_keeps_its_paths_relative_to_its_own_work_tree(
    home: Home, app: Path, tmp_path: Path
) -> None:
    tree = worktree(app, tmp_path / "worktrees" / "app-feature")
    project = home.projects.resolve_project(app)
    node = home.sessions.append_message("s-tree", "user", "fix it", session_meta={"cwd": str(tree)})
    home.sessions.append_message("s-tree", "tool", "ok", parent_id=node.id, called_by=node.id, name="Bash", input={})
    meta = home.sessions.get_meta("s-tree")
    info = session_info(home.sessions, home.projects, meta, home.sessions.get_nodes("s-tree"))
    assert info.project_id == project.id and info.root == str(tree.resolve())
    ProjectBinder.for_home(home)("s-tree", str(tree))  # bound at import: the same
    meta = home.sessions.get_meta("s-tree")
    assert meta.project_id == project.id
    assert session_info(home.sessions, home.projects, meta, ()).root == str(tree.resolve())
