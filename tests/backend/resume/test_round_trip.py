"""A session resumed into each agent is read back by opmem's own importer for that agent with the
same messages and tool calls; only the folders the test points the agents at are written."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.resume import TARGETS, ResumeError, resume

from .sessions import SECRET, fixture, import_into, shape, worked_session

SOURCE = {"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode"}
# A rollout's function_call_output is plain text: Codex has no failed flag there to carry.
NO_ERROR_FLAG = frozenset({"codex"})


def carried(target: str, messages: list[tuple]) -> list[tuple]:
    """`messages` as far as `target` can hold them."""
    if target not in NO_ERROR_FLAG:
        return messages
    return [(role, text, tuple((*call[:3], False) for call in calls)) for role, text, calls in messages]


def agent_env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "user"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "GEMINI_CLI_HOME": str(tmp_path / "gemini-home"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
    }


def read_back(tmp_path: Path, target: str, written) -> tuple[Home, str]:
    home = Home(tmp_path / f"back-{target}", durable=False)
    return home, import_into(home, SOURCE[target], written.path)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_resume_reads_back_the_same(tmp_path: Path, target: str) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    written = resume(home.sessions, sid, target, raw=True, cwd="/work/app", env=agent_env(tmp_path))
    assert written.path.is_relative_to(tmp_path) and written.native_id in " ".join(written.command)
    back, new = read_back(tmp_path, target, written)
    assert shape(back.sessions, new) == carried(target, shape(home.sessions, sid))
    assert back.sessions.get_meta(new).extra.get("cwd") == "/work/app"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_resume_is_redacted_unless_raw(tmp_path: Path, target: str) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    written = resume(home.sessions, sid, target, cwd="/work/app", env=agent_env(tmp_path))
    files = [written.path] if written.path.is_file() else [p for p in written.path.parent.rglob("*") if p.is_file()]
    assert all(SECRET.encode() not in f.read_bytes() for f in files)
    back, new = read_back(tmp_path, target, written)
    texts = [text for _, text, _ in shape(back.sessions, new)]
    assert "[secret:" in " ".join(texts) and SECRET not in " ".join(texts)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_resume_up_to_a_turn(tmp_path: Path, target: str) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    written = resume(home.sessions, sid, target, turn=1, cwd="/work/app", env=agent_env(tmp_path))
    back, new = read_back(tmp_path, target, written)
    got = shape(back.sessions, new)
    assert [role for role, *_ in got] == ["user", "assistant", "assistant"]
    assert got == carried(target, shape(home.sessions, sid))[:3]


REAL = {
    "claude": ("claude", "claude-code/spotter-tool_heavy.jsonl"),
    "codex": ("codex", "codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"),
}


@pytest.mark.parametrize("origin", sorted(REAL))
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_real_sessions_cross_over(tmp_path: Path, origin: str, target: str) -> None:
    source, relative = REAL[origin]
    home = Home(tmp_path / "home", durable=False)
    copy = tmp_path / "in" / Path(relative).name
    copy.parent.mkdir()
    copy.write_bytes(fixture(relative).read_bytes())
    sid = import_into(home, source, copy)
    written = resume(home.sessions, sid, target, raw=True, cwd="/work/app", env=agent_env(tmp_path))
    back, new = read_back(tmp_path, target, written)
    want = shape(home.sessions, sid)
    assert len(want) > 5 and shape(back.sessions, new) == carried(target, want)


def test_unknown_agent_and_bad_turn(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    with pytest.raises(ResumeError, match="unknown agent"):
        resume(home.sessions, sid, "vim", env=agent_env(tmp_path))
    with pytest.raises(ResumeError, match="--turn 0"):
        resume(home.sessions, sid, "claude", turn=0, env=agent_env(tmp_path))


@pytest.mark.parametrize("target", ["claude", "codex"])
def test_resume_along_another_branch(tmp_path: Path, target: str) -> None:
    home = Home(tmp_path / "home", durable=False)
    store = home.sessions
    sid = worked_session(store)
    second = next(n for n in store.get_nodes(sid) if n.role == "user" and n.content.startswith("Push it"))
    store.append_message(
        sid, "assistant", "A different take: push later.", parent_id=second.id, created_at=second.created_at + 5
    )
    store.commit_turn(sid)
    retry = next(b.name for b in store.branches(sid) if b.name.startswith("retry-"))
    main_head = next(b for b in store.branches(sid) if b.name == "main").head_id
    store.switch_head(sid, main_head)
    written = resume(store, sid, target, branch=retry, raw=True, cwd="/work/app", env=agent_env(tmp_path))
    back, new = read_back(tmp_path, target, written)
    texts = [text for _, text, _ in shape(back.sessions, new)]
    assert texts[-1] == "A different take: push later." and "Left as is; the push is still open." not in texts
