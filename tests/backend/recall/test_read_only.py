"""No tool writes: after calling every tool, every way, the state is byte-identical."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from opmem_tui.backend.recall.context import Recall, recall_for
from opmem_tui.backend.recall.registry import TOOLS, call

from .stores import Built, add_memory, build_index


def snapshot(*roots: Path) -> dict[str, tuple[str, int]]:
    """Every file and folder under the roots: (content hash or "dir", mode)."""
    out: dict[str, tuple[str, int]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in dirs:
                path = Path(folder) / name
                out[str(path)] = ("dir", path.lstat().st_mode)
            for name in files:
                path = Path(folder) / name
                digest = "link" if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
                out[str(path)] = (digest, path.lstat().st_mode)
    return out


def every_call(built: Built) -> list[tuple[str, dict]]:
    sid = built.session_id
    return [
        ("memory_open_session", {"session_id": sid}),
        ("memory_open_session", {"session_id": sid, "turn": 2}),
        ("memory_open_session", {"session_id": sid, "turn": 2, "page": 3}),
        ("memory_open_session", {"session_id": sid, "node": "t2", "offset": 10}),
        ("memory_open_session", {"session_id": sid, "node": "t1", "part": "input"}),
        ("memory_open_session", {"session_id": sid, "branch": "main", "turn": 1}),
        ("memory_open_session", {"session_id": built.other_id, "turn": 1}),
        ("memory_open_session", {"session_id": "no-such-session"}),
        ("memory_open_session", {"session_id": "../escape"}),
        ("memory_git_log", {}),
        ("memory_git_log", {"since": "2 weeks ago", "limit": 1}),
        ("memory_git_log", {"project_id": "nope"}),
        ("memory_git_show", {"commit": built.agent_commit}),
        ("memory_git_show", {"commit": "HEAD", "path": "README.md"}),
        ("memory_git_show", {"commit": "0000000"}),
        ("memory_timeline", {}),
        ("memory_timeline", {"entity": "worker", "since": "2025-06-01", "kinds": ["decision"]}),
        ("memory_timeline", {"entity": "wroker"}),
        ("memory_graph_neighbors", {"entity": "worker", "hops": 3}),
        ("memory_graph_neighbors", {"entity": "worker", "as_of": "2025-06-15"}),
        ("memory_graph_neighbors", {"entity": "nobody"}),
        ("memory_search", {"query": "which port does the worker listen on"}),
        ("memory_search", {"query": "pytest", "k": 3, "since": "2025-06-01"}),
        ("memory_usage", {}),
        ("memory_usage", {"report": "session", "project_id": "all", "since": "2025-06-01"}),
        ("memory_usage", {"report": "model", "project_id": "nope"}),
        ("memory_handoff", {"session_id": sid, "budget": 400}),
        ("memory_handoff", {"session_id": "no-such-session"}),
    ]


@pytest.mark.parametrize("memory_cache", ["kept", "deleted"])
def test_every_tool_leaves_the_state_byte_identical(built: Built, memory_cache: str) -> None:
    add_memory(built)
    build_index(built)
    if memory_cache == "deleted":  # derived: a reader must neither rebuild nor create it
        for path in (built.home.memory_dir).glob(".cache.sqlite*"):
            path.unlink()
    before = snapshot(built.home.path, built.workdir)
    # A fresh Home, as a new process (the MCP server) would have: no warm caches.
    recall: Recall = recall_for(type(built.home)(built.home.path), cwd=built.workdir)
    calls = every_call(built)
    assert {name for name, _ in calls} == set(TOOLS)
    for name, args in calls:
        reply = call(recall, name, args)
        assert reply, name
    assert "error" not in call(recall, "memory_timeline", {})
    after = snapshot(built.home.path, built.workdir)
    assert sorted(set(after) - set(before)) == []
    assert after == before


def test_an_absent_memory_folder_is_not_created(built: Built) -> None:
    assert not built.home.memory_dir.exists()
    recall = recall_for(type(built.home)(built.home.path), cwd=built.workdir)
    assert call(recall, "memory_timeline", {})["events"] == []
    assert call(recall, "memory_search", {"query": "greet"})["hits"] == []
    assert not built.home.memory_dir.exists()
