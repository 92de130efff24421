"""OpenCode: `mcp.opmem` in ~/.config/opencode/opencode.json(c), the global block in
~/.config/opencode/AGENTS.md.

Checked against sst/opencode's docs (opencode.ai/docs/mcp-servers, /config, /rules) and its
config schema (opencode.ai/config.json): the global config is $XDG_CONFIG_HOME/opencode/
opencode.json or opencode.jsonc (JSONC: comments and trailing commas are allowed, and kept
here); a local server is `{"type": "local", "command": [program, ...args], "enabled": true,
"environment": {...}}` (no `args` key: `additionalProperties: false`); global rules are read
from ~/.config/opencode/AGENTS.md. The block there is rewritten after each sleep.
"""

from __future__ import annotations

from pathlib import Path

from .base import AgentSpec, Context
from .parts import JsonEntry, Part, TextBlock


def _dir(ctx: Context) -> Path:
    env = ctx.env.get("XDG_CONFIG_HOME")
    return (Path(env) if env else ctx.user_home / ".config") / "opencode"


def config_file(ctx: Context) -> Path:
    jsonc = _dir(ctx) / "opencode.jsonc"
    return jsonc if jsonc.exists() else _dir(ctx) / "opencode.json"


def parts(ctx: Context) -> list[Part]:
    entry = {"type": "local", "command": ctx.mcp_argv, "enabled": True}
    return [
        JsonEntry(config_file(ctx), ("mcp",), "opmem", entry, comments=True),
        TextBlock(_dir(ctx) / "AGENTS.md", "opencode", ctx.global_body),
    ]


SPEC = AgentSpec(
    id="opencode",
    label="OpenCode",
    binary="opencode",
    config_dir=_dir,
    parts=parts,
    in_repo_file="AGENTS.md",
    notes="the global core block in AGENTS.md, refreshed after each sleep",
)
