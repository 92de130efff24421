"""A real MCP client session over stdio: the `mcp` package's Client spawning `opmem mcp`."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from opmem_tui.backend.memory.core import CORE_BUDGET, RULE
from opmem_tui.backend.recall.registry import TOOLS
from opmem_tui.mcp_server import CORE_URI
from tests.backend.recall.stores import Built, add_memory, build_index, build_store
from tests.backend.recall.test_read_only import snapshot


def opmem_command() -> tuple[str, list[str]]:
    script = Path(sys.executable).parent / "opmem"
    if script.exists():
        return str(script), ["mcp"]
    found = shutil.which("opmem")
    if found:
        return found, ["mcp"]
    return sys.executable, ["-c", "from opmem_tui.cli import main; main()", "mcp"]


@pytest.fixture
def built(tmp_path: Path) -> Built:
    built = build_store(tmp_path)
    add_memory(built)
    build_index(built)
    return built


def params(built: Built) -> StdioServerParameters:
    command, args = opmem_command()
    env = {"OPMEM_HOME": str(built.home.path), "HOME": os.environ["HOME"], "PATH": os.environ.get("PATH", "")}
    return StdioServerParameters(command=command, args=args, env=env, cwd=str(built.workdir))


async def test_initialize_list_and_call_every_tool(built: Built) -> None:
    before = snapshot(built.home.path, built.workdir)
    async with Client(params(built), mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "opmem"
        listed = await client.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert set(tools) == set(TOOLS)
        for name, tool in tools.items():
            assert tool.input_schema == dict(TOOLS[name].input_schema)
            assert tool.annotations is not None and tool.annotations.read_only_hint is True

        calls = {
            "memory_open_session": {"session_id": built.session_id, "turn": 1},
            "memory_git_log": {},
            "memory_git_show": {"commit": built.agent_commit[:10]},
            "memory_timeline": {"kinds": ["decision"]},
            "memory_graph_neighbors": {"entity": "worker", "hops": 1},
            "memory_search": {"query": "pytest"},
            "memory_usage": {"report": "model", "project_id": "all"},
            "memory_handoff": {"session_id": built.session_id, "budget": 400},
        }
        assert set(calls) == set(TOOLS)
        replies = {}
        for name, args in calls.items():
            result = await client.call_tool(name, args)
            assert not result.is_error, result
            (content,) = result.content
            assert len(content.text.encode("utf-8")) <= 16384
            replies[name] = json.loads(content.text)
        assert [m["id"] for m in replies["memory_open_session"]["messages"]] == ["u1", "a1", "t1", "a1b"]
        # the server's scope came from its working folder: the bound project
        assert replies["memory_git_log"]["project"]["id"] == built.project_id
        assert replies["memory_git_show"]["commit"]["oid"] == built.agent_commit
        (decision,) = replies["memory_timeline"]["events"]
        assert decision["source"] == f"session:{built.session_id}" and decision["turn"] == 2
        facts = {e["fact"] for e in replies["memory_graph_neighbors"]["edges"]}
        assert "worker -listens-on-> :18109" in facts
        assert any(h.get("node") == "t2" for h in replies["memory_search"]["hits"])
        brief = replies["memory_handoff"]
        assert brief["tokens"] <= 400 and f"↪ session:{built.session_id}#turn 2" in brief["brief"]
        assert decision["summary"] in brief["brief"]  # the memory's decision, pointed at its turn

        missing = await client.call_tool("memory_open_session", {"session_id": "cc-shop-sesion"})
        assert missing.is_error
        error = json.loads(missing.content[0].text)["error"]
        assert error["code"] == "unknown_session" and error["did_you_mean"] == [built.session_id]

        resources = await client.list_resources()
        assert [r.uri for r in resources.resources] == [CORE_URI]
        (core,) = (await client.read_resource(CORE_URI)).contents
        assert core.text.startswith(RULE) and "project: shop," in core.text
        assert len(core.text.encode("utf-8")) <= CORE_BUDGET
        (line,) = [line for line in core.text.splitlines() if "Decided the worker listens on :18109" in line]
        # the line names its session by a short unique prefix; the pointer opens it as written
        pointer = line.rpartition("↪ ")[2]
        assert pointer == "session:cc-shop-ses"
        opened = await client.call_tool("memory_open_session", {"session_id": pointer})
        assert not opened.is_error and json.loads(opened.content[0].text)["session"]["id"] == built.session_id
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("opmem://nothing.md")
    assert snapshot(built.home.path, built.workdir) == before


async def test_the_server_survives_an_index_truncated_under_it(built: Built) -> None:
    """The index is read through a memory map: truncated in place by something else (`: >
    index.sqlite` to reset it, a sync tool) between two calls, the next read touched pages past
    the end of the file and the server died of SIGBUS ("Connection closed"). It answers with an
    error naming the file instead, and once the index is rebuilt it finds again."""
    index = built.home.path / "memory" / "index.sqlite"
    async with Client(params(built), mode="legacy") as client:
        first = await client.call_tool("memory_search", {"query": "pytest"})
        assert not first.is_error and json.loads(first.content[0].text)["hits"]
        with index.open("r+b") as f:
            f.truncate(0)
        second = await client.call_tool("memory_search", {"query": "pytest"})
        assert second.is_error
        assert "index.sqlite" in json.loads(second.content[0].text)["error"]["message"]
        assert index.stat().st_size == 0  # the read-only server wrote nothing into it
        build_index(built)
        third = await client.call_tool("memory_search", {"query": "pytest"})
        assert not third.is_error and json.loads(third.content[0].text)["hits"]
