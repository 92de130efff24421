"""The LLM extractor through an agent CLI (stand-in executables first on PATH) and Ollama's local
API (a real HTTP server on 127.0.0.1): what it adds, what it sends, and the rules' result kept
whole when the CLI is missing, signed out, over its limit or out of calls."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home

from .stand_ins import StandIn, ollama_server

SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0" * 2
CLIS = ("claude", "codex", "gemini")
ADDED = "The team agreed to ship on Friday via the stand-in"


def make_home(path: Path, via: str, **llm: object) -> Home:
    path.mkdir(parents=True)
    keys = "".join(f"{k} = {json.dumps(v)}\n" for k, v in {"via": via, "batch_size": 1, **llm}.items())
    (path / "config.toml").write_text(f'[distill]\nextractor = "llm"\n[llm]\n{keys}')
    home = Home(path, durable=False)
    store = home.sessions
    parent = None
    for k, text in enumerate(
        (
            "We decided to use PostgreSQL 16 for the orders service",
            f"Deploy with GITHUB_TOKEN={SECRET} to staging",
            "Run the tests with pytest -q before shipping",
        )
    ):
        user = store.append_message("s1", "user", text, parent_id=parent, created_at=1_700_000_000.0 + 60 * k)
        reply = store.append_message(
            "s1", "assistant", "Done, noted.", parent_id=user.id, created_at=1_700_000_001.0 + 60 * k
        )
        parent = reply.id
        store.commit_turn("s1")
    return home


def summaries(home: Home) -> set[tuple[str, str]]:
    page = home.memory.timeline(limit=None)
    return {(e.summary, e.kind) for e in page.events}


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, StandIn]:
    bin_dir = tmp_path / "bin"
    found = {agent: StandIn(bin_dir, agent) for agent in CLIS}
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return found


def rules_result(tmp_path: Path) -> set[tuple[str, str]]:
    home = make_home(tmp_path / "rules", "")
    run(home, RunOptions(llm=False))
    return summaries(home)


def test_gemini_keeps_no_chat_of_a_distillation(
    tmp_path: Path, on_path: dict[str, StandIn], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI records `-p` runs in its store; opmem's Gemini importer would bring each prompt
    back as a session. The chats of opmem's own folder go after each call, other projects' stay."""
    gemini_home = tmp_path / "gemini-home"
    theirs = gemini_home / ".gemini" / "tmp" / "webapp" / "chats" / "session-2026-01-01T10-00-aaaa.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_text('{"sessionId": "mine"}')
    (theirs.parent.parent / ".project_root").write_text(str(tmp_path / "webapp"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
    report = run(make_home(tmp_path / "home", "gemini"), RunOptions())
    assert report.llm_batches == 3 and len(on_path["gemini"].calls) == 3
    ours = gemini_home / ".gemini" / "tmp" / "llm-cli"
    assert (ours / ".project_root").exists() and list((ours / "chats").iterdir()) == []
    assert theirs.read_text() == '{"sessionId": "mine"}'


@pytest.mark.parametrize("agent", CLIS)
def test_the_cli_adds_to_the_rules(tmp_path: Path, on_path: dict[str, StandIn], agent: str) -> None:
    home = make_home(tmp_path / "home", agent)
    report = run(home, RunOptions())
    got = summaries(home)
    assert (ADDED, "decision") in got and rules_result(tmp_path) <= got
    calls = on_path[agent].calls
    assert len(calls) == 3 == report.llm_batches and report.llm_failed == 0
    assert all(SECRET not in c["prompt"] for c in calls) and "[secret:" in "".join(c["prompt"] for c in calls)
    version = {"claude": "2.0.14", "codex": "0.58.0", "gemini": "0.40.1"}[agent]
    assert version in report.extra["llm"] and report.extra["llm_calls"] == 3
    if agent != "codex":  # codex exec's events name no model
        assert "model " in report.extra["llm"] and f"via {agent}" in report.line()
    assert report.tokens > 0


@pytest.mark.parametrize("agent", CLIS)
@pytest.mark.parametrize("mode", ["signed-out", "rate-limit"])
def test_a_refusing_cli_leaves_the_rules_result(
    tmp_path: Path, on_path: dict[str, StandIn], agent: str, mode: str
) -> None:
    on_path[agent].mode = mode
    home = make_home(tmp_path / "home", agent)
    report = run(home, RunOptions())
    assert summaries(home) == rules_result(tmp_path)
    assert len(on_path[agent].calls) == 1  # stopped at the first refusal, not asked again
    said = [n for n in report.notes if agent in n]
    why = "not signed in" if mode == "signed-out" else "over its limit"
    assert len(said) == 1 and why in said[0], report.notes


def test_a_missing_cli_is_one_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    home = make_home(tmp_path / "home", "claude")
    report = run(home, RunOptions())
    assert summaries(home) == rules_result(tmp_path)
    assert [n for n in report.notes if "claude" in n] == [
        "LLM extractor: claude is not installed (not on PATH); distilled with the rules"
    ]


def test_calls_per_run_are_capped(tmp_path: Path, on_path: dict[str, StandIn]) -> None:
    home = make_home(tmp_path / "home", "codex", max_calls=1)
    report = run(home, RunOptions())
    assert len(on_path["codex"].calls) == 1 and report.extra["llm_calls"] == 1
    assert any("call limit" in n for n in report.notes) and rules_result(tmp_path) <= summaries(home)


def test_tokens_per_run_are_capped(tmp_path: Path, on_path: dict[str, StandIn]) -> None:
    home = make_home(tmp_path / "home", "gemini", token_budget=10)
    report = run(home, RunOptions())
    assert on_path["gemini"].calls == [] and any("token budget" in n for n in report.notes)
    assert summaries(home) == rules_result(tmp_path)


def test_ollama_through_its_local_api(tmp_path: Path) -> None:
    with ollama_server() as (url, bodies):
        home = make_home(tmp_path / "home", "ollama", ollama_url=url, model="llama3.2")
        report = run(home, RunOptions())
    assert ("Ollama says ship on Friday", "decision") in summaries(home)
    assert len(bodies) == 3 and all(b["stream"] is False and b["format"] == "json" for b in bodies)
    assert SECRET not in json.dumps(bodies) and "0.12.3" in report.extra["llm"]


def test_ollama_rate_limited(tmp_path: Path) -> None:
    with ollama_server("rate-limit") as (url, bodies):
        home = make_home(tmp_path / "home", "ollama", ollama_url=url)
        report = run(home, RunOptions())
    assert len(bodies) == 1 and any("over its limit" in n for n in report.notes)
    assert summaries(home) == rules_result(tmp_path)


def test_dry_run_sends_and_writes_nothing(tmp_path: Path, on_path: dict[str, StandIn]) -> None:
    from click.testing import CliRunner

    from opmem_tui.cli import main

    home = make_home(tmp_path / "home", "claude")
    out = CliRunner().invoke(main, ["--home", str(home.path), "distill", "--dry-run-llm"])
    assert out.exit_code == 0, out.output
    requests = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(requests) == 3 and requests[0]["argv"][1:4] == ["-p", "--output-format", "json"]
    assert SECRET not in out.output and "[secret:" in out.stdout and "nothing sent" in out.stderr
    assert on_path["claude"].calls == [] and summaries(home) == set()
    # the real run that follows sends what the dry run showed
    run(home, RunOptions())
    assert [c["prompt"] for c in on_path["claude"].calls] == [r["prompt"] for r in requests]


def test_signed_in_clis_are_found_without_a_call(tmp_path: Path, on_path: dict[str, StandIn]) -> None:
    from opmem_tui.backend.llm_cli.detect import agent_clis

    (tmp_path / "codex-home").mkdir()
    (tmp_path / "codex-home" / "auth.json").write_text("{}")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "user"), "CODEX_HOME": str(tmp_path / "codex-home")}
    found = {f.via: f for f in agent_clis(env)}
    assert set(found) >= {"claude", "codex", "gemini"}
    assert found["codex"].signed_in is True and found["gemini"].signed_in is False
    assert found["claude"].signed_in is None  # no file: the keychain may hold it; cannot tell without asking
    assert all(s.calls == [] for s in on_path.values())  # detection ran no CLI
    env["GEMINI_API_KEY"] = "set"
    assert {f.via: f for f in agent_clis(env)}["gemini"].signed_in is True


def test_via_openai_is_the_http_endpoint_as_before(tmp_path: Path, on_path: dict[str, StandIn]) -> None:
    from ..distill.llm_server import ChatServer, Reply

    with ChatServer() as server:
        server.default = Reply(json.dumps({"turns": []}))
        home = make_home(tmp_path / "home", "openai", base_url=server.base_url, model="m", max_retries=0)
        report = run(home, RunOptions())
        bodies = [json.dumps(r) for r in server.requests]
    assert len(bodies) == 3 and report.llm_failed == 0 and "llm" not in report.extra
    assert all(SECRET not in b for b in bodies) and any("[secret:" in b for b in bodies)
    assert all(s.calls == [] for s in on_path.values())
