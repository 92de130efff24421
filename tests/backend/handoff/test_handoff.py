"""The handoff brief: within its budget on the fixtures' largest real sessions, a pointer on every
line, no secret in it, and the sections a fresh agent needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opmem_tui.backend.handoff import AGENT_COMMANDS, HandoffError, agent_command, handoff
from opmem_tui.backend.handoff.budget import Line, estimate_tokens, fit
from opmem_tui.backend.home import Home
from opmem_tui.backend.orchestration import set_private

from ..resume.sessions import SECRET, fixture, import_into, worked_session

LARGEST = {
    "codex": "codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
    "claude": "claude-code/spotter-tool_heavy.jsonl",
}
POINTED = re.compile(r"  ↪ session:(?P<sid>[A-Za-z0-9._-]+)(?:#turn (?P<turn>\d+))?$")


def check_pointers(text: str, sid: str, turns: int) -> None:
    """Every line but headings and blank ones ends with a pointer into this session's turns."""
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = POINTED.search(line)
        assert m is not None, line
        if m["turn"] is not None:
            assert m["sid"] == sid and 1 <= int(m["turn"]) <= turns, line


def test_estimate_counts_bytes_over_three() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abc") == 1 and estimate_tokens("abcd") == 2
    assert estimate_tokens("日本") == 2  # 6 bytes


def test_fit_keeps_the_best_ranked_within_budget() -> None:
    lines = [Line("A", f"- line {i} " + "x" * 40, rank=i, order=i) for i in range(50)]
    text, left = fit("# head", ("A",), lines, 120)
    assert estimate_tokens(text) <= 120 and left > 0 and "- line 0 " in text
    kept = [int(m) for m in re.findall(r"- line (\d+)", text)]
    assert kept == sorted(kept) and kept == list(range(len(kept)))


@pytest.mark.parametrize("origin", sorted(LARGEST))
@pytest.mark.parametrize("budget", [120, 400, 1500, 6000])
def test_real_sessions_stay_within_budget(tmp_path: Path, origin: str, budget: int) -> None:
    home = Home(tmp_path / "home", durable=False)
    copy = tmp_path / "in" / Path(LARGEST[origin]).name
    copy.parent.mkdir()
    copy.write_bytes(fixture(LARGEST[origin]).read_bytes())
    sid = import_into(home, origin, copy)
    brief = handoff(home, sid, budget)
    assert brief.tokens == estimate_tokens(brief.text) <= budget
    turns = len([t for t in home.sessions.get_turns(sid, home.sessions.head(sid)) if t.number >= 1])
    check_pointers(brief.text, sid, turns)
    if budget >= 400:
        assert "## Goal" in brief.text
    if budget >= 1500:
        assert ("## Done" in brief.text and brief.left_out == 0) or brief.tokens > budget - 80
    if budget >= 1500 and origin == "codex":  # the codex session edits files; the claude one only reads
        assert "## Files touched" in brief.text


def test_sections_of_a_worked_session(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    text = handoff(home, sid, 2000).text
    check_pointers(text, sid, 3)
    assert "- Fix the failing test in app.py  ↪ session:worked#turn 1" in text
    assert "latest ask: Then leave it for now  ↪ session:worked#turn 3" in text
    assert "/work/app/app.py (turns 1)  ↪ session:worked#turn 1" in text
    failed = text.split("## Failed")[1].split("##")[0]
    assert "git push: remote: permission denied  ↪ session:worked#turn 2" in failed
    assert "still failing" in text.split("## Open")[1].split("##")[0]


def test_no_planted_secret_passes(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    planted = {
        "aws": "AKIA" + "QWERTYUIOPASDFGH",
        "openai": "sk-proj-" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s",
        "db": "Sup3rS3cretPw",
        "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    }
    store = home.sessions
    store.append_message("s", "user", f"Deploy with AWS_ACCESS_KEY_ID={planted['aws']} and {SECRET}", created_at=1.0)
    reply = store.append_message("s", "assistant", "Decided to use the token " + SECRET, created_at=2.0)
    store.append_message(
        "s",
        "tool",
        f"error: login failed at postgres://app:{planted['db']}@db:5432/x with {planted['openai']}",
        called_by=reply.id,
        name="Bash",
        input={"command": f"curl -H 'Authorization: Bearer {planted['slack']}' https://x"},
        created_at=3.0,
    )
    store.commit_turn("s")
    text = handoff(home, "s", 3000).text
    for value in (SECRET, *planted.values()):
        assert value not in text
    assert "[secret:" in text
    check_pointers(text, "s", 1)


def test_private_sessions_and_small_budgets_are_refused(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    with pytest.raises(HandoffError, match="at least"):
        handoff(home, sid, 10)
    set_private(home, sid, True)
    with pytest.raises(HandoffError, match="private"):
        handoff(home, sid, 500)


def test_agent_commands_take_the_brief_as_one_argument() -> None:
    assert set(AGENT_COMMANDS) == {"claude", "codex", "gemini", "opencode"}
    assert agent_command("gemini", "brief text") == ("gemini", "--prompt-interactive", "brief text")
    assert agent_command("claude", "a\nb")[-1] == "a\nb"
    with pytest.raises(HandoffError, match="unknown agent"):
        agent_command("vim", "x")


def test_the_mcp_tool_answers_like_the_others(tmp_path: Path) -> None:
    from opmem_tui.backend.recall.context import recall_for
    from opmem_tui.backend.recall.registry import call

    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    recall = recall_for(home, cwd=tmp_path)
    reply = call(recall, "memory_handoff", {"session_id": f"session:{sid}", "budget": 300})
    assert reply["session_id"] == sid and reply["tokens"] <= 300 and SECRET not in reply["brief"]
    assert call(recall, "memory_handoff", {"session_id": "workd"})["error"]["did_you_mean"] == [sid]
    assert call(recall, "memory_handoff", {"session_id": sid, "budget": 5})["error"]["code"] == "bad_argument"
    set_private(home, sid, True)
    assert call(recall, "memory_handoff", {"session_id": sid})["error"]["code"] == "private"


def test_the_core_blocks_pointed_lines_join(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    sid = worked_session(home.sessions)
    core = (
        "═══\nopmem memory · project: app\n═══\n[Project · app]\n· stack: python 3.12, fastapi  ↪ session:other\n═══\n"
    )
    text = handoff(home, sid, 2000, core).text
    section = text.split("## Project memory\n")[1]
    assert section.splitlines() == ["- stack: python 3.12, fastapi  ↪ session:other"]
    assert "opmem memory" not in text  # the block's own header and rules stay out
