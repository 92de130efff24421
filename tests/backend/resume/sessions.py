"""Stores for the resume and handoff tests: a written session with tools and a secret, and real transcripts imported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.resume.conversation import messages_of
from opmem_tui.backend.store.sessions import SessionStore

T0 = 1_750_000_000.0
SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2  # a GitHub token's shape
OLD = 1_600_000_000
FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "transcripts"


def worked_session(store: SessionStore, sid: str = "worked") -> str:
    """Three turns: a tool call that succeeds, one that fails, a secret in a prompt and a tool input."""
    store.append_message(sid, "user", "Fix the failing test in app.py", created_at=T0)
    reply = store.append_message(sid, "assistant", "Let me run the tests.", name="claude-sonnet-4-5", created_at=T0 + 1)
    store.append_message(
        sid,
        "tool",
        "1 failed: test_add",
        called_by=reply.id,
        name="Bash",
        input={"command": "pytest -q"},
        created_at=T0 + 2,
    )
    store.append_message(
        sid,
        "tool",
        "The file app.py has been updated.",
        called_by=reply.id,
        name="Edit",
        input={"file_path": "/work/app/app.py", "old_string": "a - b", "new_string": "a + b"},
        created_at=T0 + 3,
    )
    store.append_message(sid, "assistant", "Fixed: add() subtracted.", name="claude-sonnet-4-5", created_at=T0 + 4)
    store.commit_turn(sid)
    store.append_message(sid, "user", f"Push it with token {SECRET}", created_at=T0 + 60)
    reply2 = store.append_message(sid, "assistant", "Pushing.", name="claude-sonnet-4-5", created_at=T0 + 61)
    store.append_message(
        sid,
        "tool",
        "remote: permission denied",
        called_by=reply2.id,
        name="Bash",
        input={"command": f"GITHUB_TOKEN={SECRET} git push"},
        metadata={"is_error": True},
        created_at=T0 + 62,
    )
    store.commit_turn(sid)
    store.append_message(sid, "user", "Then leave it for now", created_at=T0 + 120)
    store.append_message(
        sid, "assistant", "Left as is; the push is still open.", name="claude-sonnet-4-5", created_at=T0 + 121
    )
    store.commit_turn(sid)
    return sid


def age(path: Path) -> None:
    items = [path, *path.rglob("*")] if path.is_dir() else [path]
    for item in items:
        os.utime(item, (OLD, OLD))


def import_into(home: Home, source: str, path: Path) -> str:
    """Import `path` with opmem's own importer for `source`; the one session's id."""
    age(path)
    before = {m.id for m in home.sessions.list_sessions(rescan=True).sessions}
    run_import(home, source, [path], bind=False)
    new = [m.id for m in home.sessions.list_sessions(rescan=True).sessions if m.id not in before]
    assert new, f"the {source} importer read no session from {path}"
    # a subagent or fork would add more; the resumed file is one trunk session
    return max(new, key=lambda sid: len(home.sessions.get_nodes(sid)))


def fixture(relative: str) -> Path:
    path = FIXTURES / relative
    if not path.is_file():
        pytest.skip(f"real fixture {relative} is absent")
    return path


def shape(store: SessionStore, sid: str) -> list[tuple]:
    """The session as a resume can carry it: (role, text, ((tool, input, output, error), ...)) per message."""
    turns = [t for t in store.get_turns(sid, store.head(sid)) if t.nodes]
    return [
        (m.role, m.text, tuple((c.name, c.input_object(), c.output, c.is_error) for c in m.tools))
        for m in messages_of(turns)
    ]
