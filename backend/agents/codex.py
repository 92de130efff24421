"""Codex CLI: `[mcp_servers.opmem]` in ~/.codex/config.toml, the global block in ~/.codex/AGENTS.md.

Checked against openai/codex docs/config.md (`mcp_servers.<name>` tables: `command`, `args`,
`env`, `startup_timeout_sec`; `codex mcp add` writes the same) and
developers.openai.com/codex/guides/agents-md (global scope: in the Codex home, ~/.codex unless
CODEX_HOME is set, Codex reads AGENTS.override.md if it is there and not empty, else AGENTS.md,
before the project's files; so the block goes into whichever of the two Codex reads). Codex has no hook that adds context at session start, so the global core
block goes in AGENTS.md between markers, rewritten after every sleep; the project's detail is
one MCP call away. CODEX_HOME moves both files.
"""

from __future__ import annotations

from pathlib import Path

from .base import AgentSpec, Context
from .parts import Part, TextBlock, TomlTable


def _dir(ctx: Context) -> Path:
    env = ctx.env.get("CODEX_HOME")
    return Path(env) if env else ctx.user_home / ".codex"


def instructions_file(ctx: Context) -> Path:
    override = _dir(ctx) / "AGENTS.override.md"
    try:
        if override.stat().st_size > 0:
            return override
    except OSError:
        pass
    return _dir(ctx) / "AGENTS.md"


def parts(ctx: Context) -> list[Part]:
    argv = ctx.mcp_argv
    return [
        TomlTable(_dir(ctx) / "config.toml", "opmem", {"command": argv[0], "args": argv[1:]}),
        TextBlock(instructions_file(ctx), "codex", ctx.global_body),
    ]


SPEC = AgentSpec(
    id="codex",
    label="Codex CLI",
    binary="codex",
    config_dir=_dir,
    parts=parts,
    in_repo_file="AGENTS.md",
    notes="the global core block in AGENTS.md, refreshed after each sleep",
)
