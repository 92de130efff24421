from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.recall.context import Scope, recall_for
from opmem_tui.backend.recall.errors import RecallError

from .stores import Built


def test_scope_defaults_from_the_current_folder(built: Built) -> None:
    inside = recall_for(built.home, cwd=built.workdir)
    assert inside.scope == Scope(built.project_id, "")
    assert inside.scope.memory_scope == f"project:{built.project_id}"
    outside = recall_for(built.home, cwd=built.workdir.parent)
    assert outside.scope == Scope() and outside.scope.memory_scope is None
    named = recall_for(built.home, cwd="/", project="shop", agent="claude")
    assert named.scope == Scope(built.project_id, "claude")
    assert named.scope.memory_scope == f"project:{built.project_id} + agent:claude"
    assert named.scope.memory_scopes == {f"project:{built.project_id}", "agent:claude"}
    assert recall_for(built.home, cwd="/", agent="claude").scope.memory_scope == "agent:claude"
    with pytest.raises(RecallError, match="no project 'shpo'") as info:
        recall_for(built.home, project="shpo")
    assert info.value.suggestions == (built.project_id,)


def test_reply_budget_comes_from_config(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    assert recall_for(home, cwd=tmp_path).max_reply_bytes == 16384
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text("[recall]\nmax_reply_bytes = 2048\n")
    assert recall_for(Home(tmp_path / "home"), cwd=tmp_path).max_reply_bytes == 2048
    (tmp_path / "home" / "config.toml").write_text("[recall]\nmax_reply_bytes = 100\n")
    home = Home(tmp_path / "home")
    assert recall_for(home, cwd=tmp_path).max_reply_bytes == 16384  # refused: the default, and said
    assert any("recall.max_reply_bytes must be an integer >= 1024" in p for p in home.config.problems())
