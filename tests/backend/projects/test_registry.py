import json
from pathlib import Path

import pytest

from opmem_tui.backend.model import CorruptFile, InvalidSessionId
from opmem_tui.backend.projects.registry import (
    Project,
    ProjectError,
    ProjectNotFound,
    ProjectRegistry,
)

from .project_repo_helpers import git, head, make_repo, status, tree_hashes, write


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_plain_folder_gets_git_init(home: Path, tmp_path: Path):
    folder = tmp_path / "fresh"
    folder.mkdir()
    reg = ProjectRegistry(home)
    project = reg.resolve_project(folder)
    assert (folder / ".git").is_dir()
    assert project.status == "active" and project.name == "fresh"
    assert project.workdir == str(folder.resolve())
    assert project.id.startswith("fresh-") and len(project.id) == len("fresh-") + 6
    stored = json.loads((home / "projects" / "projects.json").read_text())
    assert stored == {"projects": [project.to_json()]}
    assert set(stored["projects"][0]) == {"id", "name", "workdir", "status", "created_at", "sessions"}


def test_existing_repo_is_reused_and_binding_is_idempotent(home: Path, tmp_path: Path):
    repo = make_repo(tmp_path / "work", {"a.txt": "a\n", "sub/b.txt": "b\n"})
    before = head(repo)
    reg = ProjectRegistry(home)
    first = reg.resolve_project(repo, "My Work!")
    assert first.id.startswith("my-work-") and first.name == "My Work!"
    again = reg.resolve_project(repo / "sub")  # a subfolder binds the repository it lies in
    assert again == first
    assert head(repo) == before
    assert [p.id for p in ProjectRegistry(home).list_projects()] == [first.id]


def test_sessions_status_and_lookup(home: Path, tmp_path: Path):
    reg = ProjectRegistry(home)
    p = reg.resolve_project(make_repo(tmp_path / "r"))
    reg.add_session_to_project(p.id, "s1")
    reg.add_session_to_project(p.id, "s2")
    assert reg.add_session_to_project(p.id, "s1").sessions == ("s1", "s2")
    with pytest.raises(InvalidSessionId):
        reg.add_session_to_project(p.id, "../x")
    assert reg.set_status(p.id, "paused").status == "paused"
    assert reg.get(p.id).status == "paused"
    with pytest.raises(ProjectError, match="unknown project status"):
        reg.set_status(p.id, "archived")
    with pytest.raises(ProjectNotFound, match="no project 'nope'"):
        reg.get("nope")
    assert reg.find(tmp_path / "r" / "deep" / "file.py") == reg.get(p.id)
    assert reg.find(tmp_path) is None


def test_unbind_leaves_git_byte_identical(home: Path, tmp_path: Path):
    repo = make_repo(tmp_path / "r", {"x.py": "print(1)\n"})
    reg = ProjectRegistry(home)
    p = reg.resolve_project(repo)
    location = reg.session_location(p.id, "sess-1")
    write(location / "meta.json", "{}")
    before = tree_hashes(repo / ".git")
    removed = reg.unbind(p.id)
    assert removed.id == p.id
    assert tree_hashes(repo / ".git") == before
    assert (location / "meta.json").exists()  # nothing is deleted automatically
    assert reg.list_projects() == []
    with pytest.raises(ProjectNotFound):
        reg.unbind(p.id)


def test_opmem_folder_stays_out_of_git_status(home: Path, tmp_path: Path):
    repo = make_repo(tmp_path / "r")
    reg = ProjectRegistry(home)
    p = reg.resolve_project(repo)
    location = reg.session_location(p.id, "s1")
    assert location == repo.resolve() / ".opmem" / "sessions" / "s1"
    location.mkdir(parents=True)
    git(location, "init", "-q")  # a session repo nested in the project
    write(location / "meta.json", "{}")
    assert status(repo) == []
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.opmem/") == 1
    reg.resolve_project(repo)  # binding again adds no second line
    assert (repo / ".git" / "info" / "exclude").read_text() == exclude


@pytest.mark.parametrize(
    "content, problem",
    [
        (b'{"projects": [', "invalid JSON at line 1"),
        (b"", "file is empty"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"projects": 3}', 'expected {"projects": [...]}'),
        (
            b'{"projects": [{"id": "a", "name": "a", "workdir": "/x", "status": "zzz"}]}',
            "project #1 (a) has unknown status 'zzz'",
        ),
        (b'{"projects": [{"id": "../a", "name": "a", "workdir": "/x"}]}', "unsafe id"),
        (b'{"projects": [{"name": "a", "workdir": "/x"}]}', "project #1 lacks a string 'id'"),
    ],
)
def test_corrupt_registry_names_the_file_and_is_not_overwritten(home: Path, tmp_path: Path, content, problem):
    path = home / "projects" / "projects.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    reg = ProjectRegistry(home)
    with pytest.raises(CorruptFile) as err:
        reg.list_projects()
    assert str(path) in str(err.value) and problem in str(err.value)
    with pytest.raises(CorruptFile):
        reg.resolve_project(make_repo(tmp_path / "r"))
    assert path.read_bytes() == content  # never replaced by a fresh registry


def test_bad_folders(home: Path, tmp_path: Path):
    reg = ProjectRegistry(home)
    with pytest.raises(ProjectError, match="not a folder"):
        reg.resolve_project(tmp_path / "missing")
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(ProjectError, match="bare"):
        reg.resolve_project(bare)


def test_project_commits_read_primitive(home: Path, tmp_path: Path):
    repo = make_repo(tmp_path / "r")
    reg = ProjectRegistry(home)
    p = reg.resolve_project(repo)
    [c] = reg.project_commits(p.id)
    assert c.oid == head(repo) and c.summary == "initial" and not c.is_agent
    assert reg.project_commits(p.id, limit=5) == [c]


def test_project_record_round_trip():
    p = Project("a-1", "A", "/x", "done", 12.5, ("s1",))
    assert Project.from_json(p.to_json(), Path("f"), 0) == p
