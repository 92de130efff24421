"""Which agent CLIs are installed and signed in, found without an LLM call (for `opmem connect`).

Signed in means the CLI's own credentials file exists (its content is never read) or its API key
variable is set: Claude Code ``$CLAUDE_CONFIG_DIR/.credentials.json`` (else ``~/.claude``) or
``ANTHROPIC_API_KEY``; Codex ``$CODEX_HOME/auth.json`` (else ``~/.codex``) or ``OPENAI_API_KEY``;
Gemini CLI ``~/.gemini/oauth_creds.json`` or ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``. On macOS
Claude Code keeps its sign-in in the keychain, so an installed ``claude`` without the file is
"installed, sign-in unknown". Ollama: its local API answers ``/api/version``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config import LlmSettings


@dataclass(frozen=True, slots=True)
class Found:
    via: str
    program: str  # its path on PATH ("" for ollama's API)
    signed_in: bool | None  # None: cannot tell without asking it
    how: str  # what showed it


def _dir(env: Mapping[str, str], var: str, default: str) -> Path:
    value = env.get(var, "").strip()
    return Path(value).expanduser() if value else Path(env.get("HOME") or Path.home()).expanduser() / default


def _signed_in(via: str, env: Mapping[str, str]) -> tuple[bool | None, str]:
    if via == "claude":
        files, keys = [_dir(env, "CLAUDE_CONFIG_DIR", ".claude") / ".credentials.json"], ["ANTHROPIC_API_KEY"]
    elif via == "codex":
        files, keys = [_dir(env, "CODEX_HOME", ".codex") / "auth.json"], ["OPENAI_API_KEY"]
    else:
        gemini = (Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else _dir(env, "HOME", "")) / ".gemini"
        files, keys = [gemini / "oauth_creds.json"], ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    for key in keys:
        if env.get(key):
            return True, f"${key} is set"
    for file in files:
        if file.is_file():
            return True, f"{file} exists"
    return (None if via == "claude" else False), "no sign-in found"


def agent_clis(env: Mapping[str, str] | None = None, settings: LlmSettings | None = None) -> list[Found]:
    """The agent CLIs on PATH (and Ollama when its API answers), signed in or not."""
    env = os.environ if env is None else env
    found = []
    for via in ("claude", "codex", "gemini"):
        program = shutil.which(via, path=env.get("PATH"))
        if program:
            signed, how = _signed_in(via, env)
            found.append(Found(via, program, signed, how))
    from .runner import _ollama_version

    version = _ollama_version(settings or LlmSettings(), timeout=1.0)
    if version:
        found.append(
            Found(
                "ollama",
                shutil.which("ollama", path=env.get("PATH")) or "",
                True,
                f"its API answers (version {version})",
            )
        )
    return found
