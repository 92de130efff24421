"""The SessionStart hook and `opmem core` agree on the project a folder belongs to: one function
decides (projects/identity.py), in a git project, a worktree of it, and a plain folder."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.agents.session_start import context_for, project_for, render_context, run
from opmem_tui.backend.distill.pipeline import RunOptions
from opmem_tui.backend.distill.pipeline import run as distil
from opmem_tui.backend.home import Home
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.core_block import core_block
from tests.backend.projects.project_repo_helpers import make_repo


def _session(home: Home, sid: str, cwd: Path, said: str, command: str) -> None:
    meta = {"cwd": str(cwd)}
    user = home.sessions.append_message(sid, "user", said, created_at=1_700_000_000.0, session_meta=meta)
    reply = home.sessions.append_message(sid, "assistant", "", parent_id=user.id, name="m", created_at=1_700_000_001.0)
    home.sessions.append_message(
        sid, "tool", "done", parent_id=reply.id, called_by=reply.id, name="Bash",
        input={"command": command}, metadata={"exit_code": 0}, created_at=1_700_000_002.0,
    )  # fmt: skip
    home.sessions.commit_turn(sid)


def _hook(home: Home, cwd: Path) -> str:
    out = io.StringIO()
    run(
        str(home.path),
        io.StringIO(json.dumps({"cwd": str(cwd), "hook_event_name": "SessionStart"})),
        out,
        io.StringIO(),
    )
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]


def _core(home: Home, cwd: Path) -> tuple[str, str]:
    recall = recall_for(home, cwd=cwd)
    return recall.scope.project_id, core_block(recall)


@pytest.fixture
def store(tmp_path: Path) -> tuple[Home, Path, Path]:
    home = Home(tmp_path / "home", durable=False)
    repo = make_repo(tmp_path / "work" / "shop")
    (repo / "src").mkdir()
    plain = tmp_path / "notes" / "garden"
    (plain / "beds").mkdir(parents=True)
    project = home.projects.resolve_project(repo)
    _session(home, "s-shop", repo, "We're on Phoenix with Ecto and Postgres.", "mix test")
    home.sessions.update_session("s-shop", project_id=project.id)
    _session(home, "s-garden", plain, "The planner is written in Rust.", "cargo build")
    distil(home, RunOptions())
    return home, repo, plain


def _agree(home: Home, cwd: Path) -> str:
    project_id, block = _core(home, cwd)
    assert project_for(str(home.path), str(cwd)) == project_id
    assert _hook(home, cwd) == render_context(block) == context_for(str(home.path), str(cwd))
    return block


def test_in_a_git_project_both_give_its_block(store: tuple[Home, Path, Path]) -> None:
    home, repo, _plain = store
    for cwd in (repo, repo / "src"):
        block = _agree(home, cwd)
        assert "Phoenix" in block and "project: shop" in block


def test_in_a_worktree_of_it_both_give_the_same_block(store: tuple[Home, Path, Path], tmp_path: Path) -> None:
    home, repo, _plain = store
    git = pygit2.Repository(str(repo))
    branch = git.branches.local.create("feature", git.head.peel(pygit2.Commit))
    tree = tmp_path / "trees" / "shop-feature"
    tree.parent.mkdir()
    git.add_worktree("shop-feature", str(tree), branch)
    assert "Phoenix" in _agree(home, tree)


def test_in_a_plain_folder_both_give_its_folder_projects_block(store: tuple[Home, Path, Path]) -> None:
    home, _repo, plain = store
    for cwd in (plain, plain / "beds"):
        block = _agree(home, cwd)
        assert "Rust" in block and "project: garden" in block and "Phoenix" not in block
        # the block offers no tool that fails for a folder with no repository
        assert "memory_git_log" not in block


def test_outside_any_project_both_give_the_global_block(store: tuple[Home, Path, Path], tmp_path: Path) -> None:
    home, _repo, _plain = store
    project_id, block = _core(home, tmp_path)
    assert project_id == "" and "project: (global)" in block
    assert _hook(home, tmp_path) == render_context(block)


def test_an_unbound_repository_and_its_worktree_are_one_project(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    repo = make_repo(tmp_path / "src" / "tools")
    git = pygit2.Repository(str(repo))
    branch = git.branches.local.create("fast-path", git.head.peel(pygit2.Commit))
    tree = tmp_path / "worktrees" / "tools-fast-path"
    tree.parent.mkdir()
    git.add_worktree("tools-fast-path", str(tree), branch)
    _session(home, "s-main", repo, "We're on Phoenix with Ecto and Postgres.", "mix test")
    _session(home, "s-tree", tree, "The planner is written in Rust.", "cargo build")
    distil(home, RunOptions())
    assert not home.projects.list_projects()  # nothing bound: the memory's own folder project
    for cwd in (repo, tree):
        block = _agree(home, cwd)
        assert "project: tools" in block and "Phoenix" in block and "Rust" in block
