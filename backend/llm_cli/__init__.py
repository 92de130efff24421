"""The LLM extractor through an agent CLI the user already has (Claude Code, Codex, Gemini CLI)
or Ollama's local API, chosen by `[llm] via` (docs/llm.md).

    agents.py  each CLI's headless JSON mode: its command line, its output, its errors
    runner.py  AgentChat: ChatClient's `chat()` over a CLI, with redaction, limits and dry runs
    detect.py  the CLIs installed and signed in, found without an LLM call (`opmem connect`)
"""

from __future__ import annotations

from pathlib import Path

from ..config import LlmSettings
from .agents import CliMissing, RateLimited, SignedOut
from .runner import AgentChat, CallLimit, Request

AGENT_VIAS = frozenset({"claude", "codex", "gemini", "ollama"})

__all__ = [
    "AGENT_VIAS",
    "AgentChat",
    "CallLimit",
    "CliMissing",
    "RateLimited",
    "Request",
    "SignedOut",
    "agent_chat",
]


def agent_chat(settings: LlmSettings, home_path: Path, *, dry_run: bool = False) -> AgentChat | None:
    """The chat for `[llm] via` when it names an agent CLI or Ollama (or any LLM, for a dry run),
    else None (the HTTP client's turn)."""
    if settings.via not in AGENT_VIAS and not dry_run:
        return None
    return AgentChat(settings, home_path / "llm-cli", dry_run=dry_run)
