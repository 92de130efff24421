"""Gemini CLI: `mcpServers.opmem` in ~/.gemini/settings.json, the global block in ~/.gemini/GEMINI.md.

Checked against google-gemini/gemini-cli docs/tools/mcp-server.md and docs/cli/configuration.md:
user settings are ~/.gemini/settings.json; `mcpServers.<name>` takes `command`, `args`, `env`,
`cwd`, `timeout`, `trust` (`gemini mcp add -s user` writes the same); the hierarchical memory
loads ~/.gemini/GEMINI.md as the global context file for every session. The block there is
rewritten after each sleep. Gemini reads settings.json through strip-json-comments
(packages/cli/src/config/settings.ts), so comments there are allowed, and kept.
"""

from __future__ import annotations

from pathlib import Path

from .base import AgentSpec, Context
from .parts import JsonEntry, Part, TextBlock


def _dir(ctx: Context) -> Path:
    return ctx.user_home / ".gemini"


def parts(ctx: Context) -> list[Part]:
    argv = ctx.mcp_argv
    return [
        JsonEntry(
            _dir(ctx) / "settings.json", ("mcpServers",), "opmem", {"command": argv[0], "args": argv[1:]}, comments=True
        ),
        TextBlock(_dir(ctx) / "GEMINI.md", "gemini", ctx.global_body),
    ]


SPEC = AgentSpec(
    id="gemini",
    label="Gemini CLI",
    binary="gemini",
    config_dir=_dir,
    parts=parts,
    in_repo_file="GEMINI.md",
    notes="the global core block in GEMINI.md, refreshed after each sleep",
)
