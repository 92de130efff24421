"""Secrets in sessions never reach what opmem derives, hands out or sends (issue: privacy).

One store imported from a real Claude Code transcript (the importer reads it) with secrets in
user text, assistant text, a tool input and a tool output, distilled and indexed; then every
file under memory/, every CLI output, every MCP reply (a real client over stdio) and every
request the local LLM server receives is searched for any piece of any value. The ordinary ids
in the same messages (a commit hash, a UUID) must survive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from opmem_tui.backend.home import Home
from opmem_tui.backend.recall.registry import TOOLS
from opmem_tui.cli import main
from opmem_tui.mcp_server import CORE_URI
from tests.app.secret_sessions import COMMIT, UUID, VALUES, leaks, write_transcript
from tests.app.test_mcp_server import opmem_command
from tests.backend.distill.llm_server import ChatServer, Reply


def cli(home: Path, *args: str, cwd: Path | None = None):
    runner = CliRunner(env={"OPMEM_HOME": str(home), "COLUMNS": "100", "HOME": str(home.parent)})
    if cwd is None:
        return runner.invoke(main, list(args), catch_exceptions=False)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str, Path]:
    """(home, session id, the session's cwd): imported, distilled, indexed."""
    workdir = tmp_path / "billing"
    workdir.mkdir()
    transcript = write_transcript(tmp_path / "claude" / "projects" / "-billing", str(workdir))
    home = tmp_path / "home"
    result = cli(home, "import", "claude", str(transcript))
    assert result.exit_code == 0, result.output
    assert cli(home, "distill").exit_code == 0
    assert cli(home, "index", "update").exit_code == 0
    sid = Home(home).sessions.list_sessions().sessions[0].id
    return home, sid, workdir


def test_the_raw_store_keeps_the_values(store) -> None:
    """By default the session itself stays the faithful record: the values are there."""
    home, sid, _ = store
    raw = b"".join(p.read_bytes() for p in (home / "sessions" / sid / "history").iterdir())
    assert not set(v[:8] for v in VALUES) - set(leaks(raw))


def test_no_file_under_memory_holds_a_value(store) -> None:
    home, _, _ = store
    files = [p for p in (home / "memory").rglob("*") if p.is_file()]
    assert any(p.name == "index.sqlite" for p in files) and any(p.suffix == ".jsonl" for p in files)
    found = {str(p.relative_to(home)): leaks(p.read_bytes()) for p in files}
    assert {name: hit for name, hit in found.items() if hit} == {}
    assert any(p.suffix == ".md" for p in files)


def test_no_cli_output_holds_a_value_and_ids_survive(store) -> None:
    home, sid, workdir = store
    outputs = {}
    for args in (
        ("sessions", "list"),
        ("sessions", "list", "--json"),
        ("sessions", "show", sid),
        ("sessions", "show", sid, "--json"),
        ("show", sid),
        ("show", sid, "--turn", "1"),
        ("show", sid, "--turn", "1", "--json"),
        ("search", "deploy"),
        ("search", "deploy", "--json"),
        ("search", "SLACK_BOT_TOKEN"),
        ("timeline",),
        ("timeline", "--json"),
        ("core",),
    ):
        result = cli(home, *args, cwd=workdir)
        assert result.exit_code == 0, (args, result.output)
        outputs[" ".join(args)] = result.output
        assert leaks(result.output) == [], (args, result.output)
    turn = outputs[f"show {sid} --turn 1 --json"]
    assert COMMIT in turn and UUID in turn
    assert "[secret:" in turn


def test_a_value_is_not_searchable_its_kind_is(store) -> None:
    home, sid, _ = store
    for value in VALUES:
        reply = json.loads(cli(home, "search", value, "--json").output)
        assert all(leaks(json.dumps(h)) == [] for h in reply["hits"])
        assert not any(h.get("source") == f"session:{sid}" and h.get("kind") == "turn" for h in reply["hits"]), value
    found = json.loads(cli(home, "search", "secret github token", "--json").output)
    assert any(h.get("source") == f"session:{sid}" for h in found["hits"])


async def test_no_mcp_reply_holds_a_value(store) -> None:
    home, sid, workdir = store
    command, args = opmem_command()
    env = {"OPMEM_HOME": str(home), "HOME": str(home.parent), "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(workdir))
    calls = {
        "memory_open_session": [{"session_id": sid}, {"session_id": sid, "turn": 1}],
        "memory_git_log": [{}],
        "memory_git_show": [{"commit": "HEAD"}],
        "memory_timeline": [{}],
        "memory_graph_neighbors": [{"entity": sid, "hops": 2}],
        "memory_search": [{"query": "deploy staging"}, {"query": VALUES[0]}],
        "memory_handoff": [{"session_id": sid}],
        "memory_usage": [{}, {"report": "session", "project_id": "all"}],
    }
    assert set(calls) == set(TOOLS)
    texts = []
    async with Client(params, mode="legacy") as client:
        for name, argsets in calls.items():
            for arguments in argsets:
                result = await client.call_tool(name, arguments)
                texts.extend(c.text for c in result.content if hasattr(c, "text"))
        core = await client.read_resource(CORE_URI)
        texts.extend(c.text for c in core.contents if hasattr(c, "text"))
    assert texts and all(leaks(t) == [] for t in texts), [t for t in texts if leaks(t)]
    assert any(COMMIT in t for t in texts) and any("[secret:" in t for t in texts)


def test_no_llm_request_holds_a_value(tmp_path: Path) -> None:
    """The LLM extractor and the title maker send redacted text only."""
    transcript = write_transcript(tmp_path / "claude" / "projects" / "-billing", str(tmp_path))
    home = tmp_path / "home"
    home.mkdir()
    with ChatServer() as server:
        server.default = Reply(json.dumps({"turns": []}))
        (home / "config.toml").write_text(
            f'[llm]\nbase_url = "{server.base_url}"\nmodel = "m"\nmax_retries = 0\n[distill]\nextractor = "llm"\n'
        )
        assert cli(home, "import", "claude", str(transcript)).exit_code == 0
        result = cli(home, "distill")
        assert result.exit_code == 0, result.output
        bodies = [json.dumps(r) for r in server.requests]
    assert bodies, "the extractor sent no request"
    assert all(leaks(b) == [] for b in bodies)
    assert any("[secret:" in b for b in bodies) and any(COMMIT in b for b in bodies)
