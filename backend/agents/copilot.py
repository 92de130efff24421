"""GitHub Copilot CLI: `mcpServers.opmem` in ~/.copilot/mcp-config.json, the global block in
~/.copilot/copilot-instructions.md.

Checked against docs.github.com/copilot/how-tos/copilot-cli (add-mcp-servers: the servers
`/mcp add` saves are in ~/.copilot/mcp-config.json, `mcpServers.<name>` with `type: "local"`,
`command`, `args`, `env`, `tools: ["*"]`; add-custom-instructions: user-level instructions in
$HOME/.copilot/copilot-instructions.md apply across repositories). The block there is
rewritten after each sleep.
"""

from __future__ import annotations

from pathlib import Path

from .base import AgentSpec, Context
from .parts import JsonEntry, Part, TextBlock


def _dir(ctx: Context) -> Path:
    return ctx.user_home / ".copilot"


def parts(ctx: Context) -> list[Part]:
    argv = ctx.mcp_argv
    entry = {"type": "local", "command": argv[0], "args": argv[1:], "env": {}, "tools": ["*"]}
    return [
        JsonEntry(_dir(ctx) / "mcp-config.json", ("mcpServers",), "opmem", entry),
        TextBlock(_dir(ctx) / "copilot-instructions.md", "copilot", ctx.global_body),
    ]


SPEC = AgentSpec(
    id="copilot",
    label="Copilot CLI",
    binary="copilot",
    config_dir=_dir,
    parts=parts,
    in_repo_file="AGENTS.md",
    notes="the global core block in copilot-instructions.md, refreshed after each sleep",
)
