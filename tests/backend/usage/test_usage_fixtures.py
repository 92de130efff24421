"""Every reply's tokens in the usage index equal what the agent's own file records, parsed here
independently of the importers (straight from the raw lines / files)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import

FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"


def fixture(relative: str) -> Path:
    path = (FIXTURES / relative).resolve()
    if not path.exists():
        pytest.skip(f"fixture {relative} is absent")
    return path


def lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def indexed(tmp_path: Path, source: str, path: Path) -> Counter:
    """(input, output, cache write, cache read, reasoning) of every reply row the index holds."""
    home = Home(tmp_path / "home")
    run_import(home, source, [path], bind=False)
    home.usage.update()
    with home.usage.connect() as conn:
        rows = conn.execute("SELECT input, output, cache_write, cache_read, reasoning FROM usage WHERE seq >= 0")
        return Counter(tuple(r) for r in rows)


def test_claude_code_replies(tmp_path: Path) -> None:
    folder = fixture("transcripts/claude-code")
    expected: Counter = Counter()
    for file in sorted(folder.rglob("*.jsonl")):
        calls: dict = {}  # Claude writes one line per content block, each with the call's usage
        for obj in lines(file):
            message = obj.get("message") or {}
            usage = message.get("usage") if obj.get("type") == "assistant" else None
            if not isinstance(usage, dict):
                continue
            key = (message.get("id"), obj.get("requestId"))
            if key not in calls or usage.get("output_tokens", 0) >= calls[key].get("output_tokens", 0):
                calls[key] = usage
        for u in calls.values():
            expected[
                (
                    u["input_tokens"],
                    u["output_tokens"],
                    u.get("cache_creation_input_tokens", 0),
                    u.get("cache_read_input_tokens", 0),
                    0,
                )
            ] += 1
    assert expected
    assert indexed(tmp_path, "claude", folder) == expected


def test_codex_replies_use_the_per_call_delta(tmp_path: Path) -> None:
    file = fixture(
        "transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
    )
    expected: Counter = Counter()
    previous_total = None
    for obj in lines(file):
        payload = obj.get("payload") or {}
        if obj.get("type") != "event_msg" or payload.get("type") != "token_count" or not payload.get("info"):
            continue
        total = payload["info"].get("total_token_usage")
        if total == previous_total:
            continue  # Codex repeats a count when nothing was called since
        previous_total = total
        last = payload["info"]["last_token_usage"]
        cached = last.get("cached_input_tokens", 0)
        expected[
            (last["input_tokens"] - cached, last["output_tokens"], 0, cached, last.get("reasoning_output_tokens", 0))
        ] += 1
    assert expected
    got = indexed(tmp_path, "codex", file)
    assert got == expected
    # the deltas, not the running totals: they add up to Codex's last cumulative count
    assert sum(c[0] + c[3] for c in got.elements()) == previous_total["input_tokens"]


def test_gemini_replies(tmp_path: Path) -> None:
    file = fixture("transcripts/catalog/agent-sessions-gemini-jsonl_v040.jsonl")
    expected: Counter = Counter()
    for obj in lines(file):
        t = obj.get("tokens")
        if obj.get("type") == "gemini" and isinstance(t, dict):
            expected[
                (t["input"] - t["cached"] + t["tool"], t["output"] + t["thoughts"], 0, t["cached"], t["thoughts"])
            ] += 1
            assert t["input"] + t["output"] + t["thoughts"] + t["tool"] == t["total"]
    assert expected
    assert indexed(tmp_path, "gemini", file) == expected


def test_kimi_steps(tmp_path: Path) -> None:
    file = fixture("agents/kimi-cli/jazzyalex+agent-sessions/stage0/assistant_tools.jsonl")
    expected: Counter = Counter()
    for obj in lines(file):
        event = obj.get("event") or {}
        if obj.get("type") == "context.append_loop_event" and event.get("type") == "step.end" and event.get("usage"):
            u = event["usage"]
            expected[(u["inputOther"], u["output"], u["inputCacheCreation"], u["inputCacheRead"], 0)] += 1
    assert expected
    assert indexed(tmp_path, "kimi", file) == expected


def test_opencode_messages(tmp_path: Path) -> None:
    folder = fixture("agents/opencode/jazzyalex+agent-sessions/stage0/storage_v2")
    expected: Counter = Counter()
    for file in sorted((folder / "message").rglob("*.json")):
        msg = json.loads(file.read_text(encoding="utf-8"))
        t = msg.get("tokens")
        if msg.get("role") == "assistant" and isinstance(t, dict):
            cache = t.get("cache") or {}
            reasoning = t.get("reasoning", 0)
            row = (
                t.get("input", 0),
                t.get("output", 0) + reasoning,
                cache.get("write", 0),
                cache.get("read", 0),
                reasoning,
            )
            if sum(row[:4]):
                expected[row] += 1
    assert expected
    assert indexed(tmp_path, "opencode", folder) == expected


def test_copilot_records_output_only(tmp_path: Path) -> None:
    file = fixture("agents/copilot-cli/jazzyalex+agent-sessions/stage0/small.jsonl")
    expected: Counter = Counter()
    for obj in lines(file):
        data = obj.get("data") or {}
        if obj.get("type") == "assistant.message" and data.get("outputTokens"):
            expected[(0, data["outputTokens"], 0, 0, 0)] += 1
    assert expected
    assert indexed(tmp_path, "copilot", file) == expected


def test_crush_keeps_totals_per_session(tmp_path: Path) -> None:
    import sqlite3

    db = fixture("agents/crush/kashifkhan0771+utils/.opencode/opencode.db")
    copy = tmp_path / "crush" / "opencode.db"
    copy.parent.mkdir()
    copy.write_bytes(db.read_bytes())
    conn = sqlite3.connect(copy)
    raw = conn.execute(
        "SELECT id, prompt_tokens, completion_tokens FROM sessions WHERE prompt_tokens + completion_tokens > 0"
    ).fetchall()
    conn.close()
    home = Home(tmp_path / "home")
    run_import(home, "crush", [copy], bind=False)
    home.usage.update()
    with home.usage.connect() as c:
        got = {
            r[0].removeprefix("crush-"): (r[1], r[2])
            for r in c.execute("SELECT session_id, input, output FROM usage WHERE seq = -1")
        }
    assert raw
    assert got == {sid: (prompt, completion) for sid, prompt, completion in raw}


def test_goose_session_totals(tmp_path: Path) -> None:
    import sqlite3

    db = fixture("agents/goose/jwp23+dotfiles/.local/share/goose/sessions/sessions.db")
    copy = tmp_path / "goose" / "sessions.db"
    copy.parent.mkdir()
    copy.write_bytes(db.read_bytes())
    conn = sqlite3.connect(copy)
    with conn:  # the fixture's session is empty: give it a question, an answer and Goose's counters
        conn.execute("UPDATE sessions SET accumulated_input_tokens = 12345, accumulated_output_tokens = 678")
        (sid,) = conn.execute("SELECT id FROM sessions").fetchone()
        for role, text, at in (("user", "hello", 1_764_694_800), ("assistant", "hi", 1_764_694_805)):
            conn.execute(
                "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, ?, ?, ?)",
                (sid, role, json.dumps([{"type": "text", "text": text}]), at),
            )
    raw = conn.execute("SELECT id, accumulated_input_tokens, accumulated_output_tokens FROM sessions").fetchall()
    conn.close()
    home = Home(tmp_path / "home")
    run_import(home, "goose", [copy], bind=False)
    home.usage.update()
    with home.usage.connect() as c:
        got = {
            r[0].removeprefix("goose-"): (r[1], r[2])
            for r in c.execute("SELECT session_id, input, output FROM usage WHERE seq = -1")
        }
    assert got == {sid: (i, o) for sid, i, o in raw}


def test_droid_settings_totals(tmp_path: Path) -> None:
    source = fixture("agents/factory-droid/jazzyalex+agent-sessions/stage0/session_store_small.jsonl")
    folder = tmp_path / "droid"
    folder.mkdir()
    copy = folder / source.name
    copy.write_bytes(source.read_bytes())
    usage = {"inputTokens": 5000, "outputTokens": 700, "cacheCreationTokens": 300, "cacheReadTokens": 9000}
    (folder / (source.stem + ".settings.json")).write_text(
        json.dumps({"model": "claude-opus-4-1", "tokenUsage": usage})
    )
    home = Home(tmp_path / "home")
    run_import(home, "droid", [copy], bind=False)
    home.usage.update()
    with home.usage.connect() as c:
        rows = c.execute("SELECT model, input, output, cache_write, cache_read FROM usage WHERE seq = -1").fetchall()
    assert rows == [("claude-opus-4-1", 5000, 700, 300, 9000)]


def test_qwen_replies(tmp_path: Path) -> None:
    folder = fixture("agents/qwen-code/jazzyalex+agent-sessions/stage0")
    expected: Counter = Counter()
    for file in sorted(folder.glob("*.jsonl")):
        for obj in lines(file):
            u = obj.get("usageMetadata")
            if obj.get("type") != "assistant" or not isinstance(u, dict):
                continue
            cached, thoughts = u.get("cachedContentTokenCount", 0), u.get("thoughtsTokenCount", 0)
            row = (
                u.get("promptTokenCount", 0) - cached,
                u.get("candidatesTokenCount", 0) + thoughts,
                0,
                cached,
                thoughts,
            )
            if sum(row[:4]):
                expected[row] += 1
    assert expected
    assert indexed(tmp_path, "qwen", folder) == expected


def test_an_import_and_a_grown_file_keep_the_index_current(tmp_path: Path) -> None:
    """The after-ingest hook every import uses (Home.ingest_hooks) writes the index: no update call."""
    source = fixture(
        "transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
    )
    raw = source.read_bytes().splitlines(keepends=True)
    half = len(raw) // 2
    file = tmp_path / "codex" / source.name
    file.parent.mkdir()
    file.write_bytes(b"".join(raw[:half]))
    home = Home(tmp_path / "home")
    run_import(home, "codex", [file], bind=False, hooks=home.ingest_hooks())
    with home.usage.read() as conn:
        first = conn.execute("SELECT count(*), sum(input + cache_read) FROM usage").fetchone()
    file.write_bytes(b"".join(raw))  # the session went on
    run_import(home, "codex", [file], bind=False, hooks=home.ingest_hooks())
    with home.usage.read() as conn:
        second = conn.execute("SELECT count(*), sum(input + cache_read) FROM usage").fetchone()
    final_total = None
    for obj in lines(source):
        info = (obj.get("payload") or {}).get("info") if obj.get("type") == "event_msg" else None
        if isinstance(info, dict) and info.get("total_token_usage"):
            final_total = info["total_token_usage"]["input_tokens"]
    assert 0 < first[0] < second[0]
    assert second[1] == final_total  # every call counted once, none twice
