"""Cursor: `mcpServers.opmem` in ~/.cursor/mcp.json.

Checked against cursor.com/docs/mcp ("global: ~/.cursor/mcp.json", `mcpServers.<name>` with
`command`, `args`, `env` for a stdio server; the Cursor CLI `agent` reads the same file).
Cursor's user rules live in its settings UI, not in a file opmem could keep a block in, so
Cursor gets the memory through the MCP tools (memory_search, memory_open_session, ...);
`--in-repo` writes the project block into the repo's AGENTS.md, which Cursor reads.
"""

from __future__ import annotations

from pathlib import Path

from .base import AgentSpec, Context
from .parts import JsonEntry, Part


def _dir(ctx: Context) -> Path:
    return ctx.user_home / ".cursor"


def parts(ctx: Context) -> list[Part]:
    argv = ctx.mcp_argv
    return [JsonEntry(_dir(ctx) / "mcp.json", ("mcpServers",), "opmem", {"command": argv[0], "args": argv[1:]})]


SPEC = AgentSpec(
    id="cursor",
    label="Cursor",
    binary="cursor-agent",
    config_dir=_dir,
    parts=parts,
    in_repo_file="AGENTS.md",
    notes="the MCP tools only (no user-level instruction file); --in-repo for the project block",
)
