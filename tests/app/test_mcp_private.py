"""Private and excluded sessions over MCP: the real `mcp` client spawning `opmem mcp` over stdio."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from opmem_tui.backend.distill.pipeline import run
from opmem_tui.backend.orchestration import set_private
from opmem_tui.mcp_server import CORE_URI
from tests.app.test_mcp_server import opmem_command
from tests.backend.privacy.test_exclusions import (
    PATH_WORD,
    PRIVATE_WORD,
    PUBLIC_WORD,
    START,
    configure,
    write_session,
)


async def test_mcp_returns_nothing_of_private_or_excluded_sessions(tmp_path: Path) -> None:
    user = tmp_path / "user"
    home = configure(tmp_path / "opmem", exclude_paths=[str(user / "work/secret-client/**")])
    write_session(home, "pub", PUBLIC_WORD)
    write_session(home, "later", PRIVATE_WORD, at=START + 100)
    write_session(home, "client", PATH_WORD, cwd=str(user / "work/secret-client/app"), at=START + 200)
    run(home)  # "later" is distilled while public, then turned private
    set_private(home, "later")
    home.search_index.update()

    command, args = opmem_command()
    env = {"OPMEM_HOME": str(home.path), "HOME": str(user), "PATH": os.environ.get("PATH", "")}
    user.mkdir(parents=True, exist_ok=True)
    # the sessions' folder (/work/proj) is bound to no project here: the server answers for its folder project
    args = [*args, "--project", "proj"]
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(tmp_path))
    async with Client(params, mode="legacy") as client:

        async def call(name: str, arguments: dict) -> tuple[str, bool]:
            result = await client.call_tool(name, arguments)
            (content,) = result.content
            return content.text, bool(result.is_error)

        text, error = await call("memory_search", {"query": PUBLIC_WORD})
        assert not error and json.loads(text)["hits"]  # the check can fail: public words are found
        for word in (PRIVATE_WORD, PATH_WORD):
            text, error = await call("memory_search", {"query": word})
            assert not error and json.loads(text)["hits"] == [], text
            text, error = await call("memory_graph_neighbors", {"entity": f"{word}.py"})
            assert error and json.loads(text)["error"]["code"] == "unknown_entity"
        for sid in ("later", "client"):
            text, error = await call("memory_open_session", {"session_id": sid})
            assert error and json.loads(text)["error"]["code"] == "private"
            assert "parser" not in text
        text, error = await call("memory_timeline", {})
        assert not error and PUBLIC_WORD in text
        assert PRIVATE_WORD not in text and PATH_WORD not in text
        (core,) = (await client.read_resource(CORE_URI)).contents
        assert PUBLIC_WORD in core.text and PRIVATE_WORD not in core.text and PATH_WORD not in core.text
