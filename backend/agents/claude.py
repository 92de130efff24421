"""Claude Code: the MCP server in ~/.claude.json, the core block from a SessionStart hook.

Checked against Claude Code's documentation (code.claude.com/docs/en/mcp, /hooks, /settings):
  - user-scope MCP servers (`claude mcp add --scope user`) live in ~/.claude.json under the
    top-level `mcpServers`, each `{"type": "stdio", "command", "args", "env"}`. Claude Code
    rewrites that file itself (JSON, two-space indent), so the entry is edited in as text;
  - hooks live in ~/.claude/settings.json, `hooks.<Event>: [{"matcher"?, "hooks": [{"type":
    "command", "command", "timeout"}]}]`; SessionStart's stdout JSON
    `hookSpecificOutput.additionalContext` is added to the context (sources startup, resume,
    clear, compact; no matcher: all of them). PreCompact and SessionEnd run `opmem flush`, the
    hooks `opmem hooks install claude` adds (backend/agents/claude_hooks.py), so the two never differ.
"""

from __future__ import annotations

from pathlib import Path

from .base import AgentSpec, Context
from .claude_hooks import flush_command
from .parts import ClaudeHooks, JsonEntry, Part


def _dir(ctx: Context) -> Path:
    return ctx.user_home / ".claude"


def parts(ctx: Context) -> list[Part]:
    argv = ctx.mcp_argv
    return [
        JsonEntry(
            ctx.user_home / ".claude.json",
            ("mcpServers",),
            "opmem",
            {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}},
        ),
        ClaudeHooks(
            _dir(ctx) / "settings.json",
            session_start=ctx.command("hook", "session-start"),
            flush=flush_command(ctx.opmem_home, prefix=ctx.executable),
        ),
    ]


SPEC = AgentSpec(
    id="claude",
    label="Claude Code",
    binary="claude",
    config_dir=_dir,
    parts=parts,
    in_repo_file="CLAUDE.md",
    notes="the project's core block at every session start (SessionStart hook)",
)
