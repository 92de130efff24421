from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


@pytest.fixture
def store(home: Home) -> SessionStore:
    return home.sessions


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def add_turn(store: SessionStore, sid: str, prompt: str, reply: str, *, tools: int = 0, parent_id=None, **kw):
    """One user message, an assistant reply with `tools` tool calls, and a commit."""
    extra = {} if parent_id is None else {"parent_id": parent_id}
    user = store.append_message(sid, "user", prompt, **extra, **kw)
    assistant = store.append_message(sid, "assistant", reply)
    for i in range(tools):
        store.append_message(sid, "tool", f"result {i}", called_by=assistant.id, name="grep" if i % 2 else "read")
    store.commit_turn(sid)
    return user, assistant
