"""Realistic user-level agent configs, as the agents (or their users) leave them: other MCP
servers, hooks, settings, comments where the format allows them."""

from __future__ import annotations

import json
from pathlib import Path

CLAUDE_JSON = {
    "numStartups": 42,
    "installMethod": "native",
    "theme": "dark",
    "projects": {"/home/u/src/app": {"allowedTools": [], "history": [{"display": "fix the tests"}], "mcpServers": {}}},
    "mcpServers": {
        "github": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_TOKEN": "x"},
        }
    },
    "userID": "abc123",
}
CLAUDE_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)", "Bash(npm test:*)"], "deny": []},
    "hooks": {
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "notify-send compacting"}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "ruff format ."}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}
CODEX_TOML = """# Codex configuration (hand-written)
model = "gpt-5-codex"  # the default model
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
startup_timeout_sec = 20

[mcp_servers.context7.env]
LOG_LEVEL = "info"

# profiles for quick switching
[profiles.fast]
model = "o4-mini"
"""
CODEX_AGENTS = "# Global instructions\n\nAlways run the tests before committing.\n"
GEMINI_SETTINGS = {
    "general": {"vimMode": True, "preferredEditor": "code"},
    "ui": {"theme": "GitHub"},
    "mcpServers": {
        "playwright": {"command": "npx", "args": ["@playwright/mcp@latest"], "timeout": 30000, "trust": False}
    },
}
GEMINI_MD = "# My Gemini context\n\n- Prefer small diffs.\n"
CURSOR_MCP = {"mcpServers": {}}
OPENCODE_JSONC = """{
  "$schema": "https://opencode.ai/config.json",
  // my providers
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    /* the docs server */
    "context7": {
      "type": "remote",
      "url": "https://mcp.context7.com/mcp",
    },
    "everything": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],
    },
  },
}
"""
OPENCODE_AGENTS = "Use British spelling."  # no final newline
COPILOT_MCP = {
    "mcpServers": {"sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp", "headers": {}, "tools": ["*"]}}
}
COPILOT_INSTRUCTIONS = "Answer briefly.\n\n"

# agent -> {relative path: content}
EXISTING: dict[str, dict[str, str]] = {
    "claude": {
        ".claude.json": json.dumps(CLAUDE_JSON, indent=2),
        ".claude/settings.json": json.dumps(CLAUDE_SETTINGS, indent=2) + "\n",
    },
    "codex": {".codex/config.toml": CODEX_TOML, ".codex/AGENTS.md": CODEX_AGENTS},
    "gemini": {
        ".gemini/settings.json": json.dumps(GEMINI_SETTINGS, indent=4).replace(
            '{\n    "general"', '{\n    // mine\n    "general"', 1
        )
        + "\n",
        ".gemini/GEMINI.md": GEMINI_MD,
    },
    "cursor": {".cursor/mcp.json": json.dumps(CURSOR_MCP, indent=2) + "\n"},
    "opencode": {".config/opencode/opencode.jsonc": OPENCODE_JSONC, ".config/opencode/AGENTS.md": OPENCODE_AGENTS},
    "copilot": {
        ".copilot/mcp-config.json": json.dumps(COPILOT_MCP, indent=2),
        ".copilot/copilot-instructions.md": COPILOT_INSTRUCTIONS,
    },
}
# the file holding each agent's MCP entry, and where in it
MCP_FILE = {
    "claude": ".claude.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/mcp.json",
    "opencode": ".config/opencode/opencode.jsonc",
    "copilot": ".copilot/mcp-config.json",
}


def write_existing(user_home: Path, agent: str) -> dict[str, str]:
    for rel, text in EXISTING[agent].items():
        path = user_home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return EXISTING[agent]


def snapshot(root: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every file under root (relative path -> bytes), folders included as b"<dir>"."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            continue
        out[rel] = b"<dir>" if path.is_dir() else path.read_bytes()
    return out
