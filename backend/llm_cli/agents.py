"""Each agent CLI's headless, JSON-output mode: the command line, and what its output means.

- Claude Code: ``claude -p --output-format json --no-session-persistence --max-turns 1``, the
  prompt on stdin; one JSON object ``{type: "result", subtype, is_error, result, session_id,
  total_cost_usd, usage {input_tokens, output_tokens, ...}, modelUsage {<model>: {...}}}``
  (docs.anthropic.com/en/docs/claude-code/cli-reference and the headless-mode page).
- Codex: ``codex exec --json --ephemeral --skip-git-repo-check --sandbox read-only -`` (``-``: the
  prompt on stdin; ``--ephemeral``: no rollout written); JSONL events ``thread.started``,
  ``turn.started``, ``item.completed {item: {type: "agent_message", text}}``, ``turn.completed
  {usage {input_tokens, cached_input_tokens, output_tokens}}``, ``turn.failed {error {message}}``,
  ``error {message}`` (openai/codex ``codex-rs/exec/src/exec_events.rs`` @
  1ebb1bc717037f8a8b4b46bfd60b1572e39ffb97).
- Gemini CLI: ``gemini --output-format json --prompt <instruction>`` with the request on stdin
  (``-p`` is "appended to input on stdin"); one JSON object ``{session_id, response, stats
  {models {<model>: {tokens {prompt, candidates, total, ...}}}}, error {type, message, code}}``;
  exit 41 is an authentication failure (google-gemini/gemini-cli @ 5411f113cafae26161b4969b0237b8e1e024e2c2:
  ``packages/core/src/output/types.ts``, ``packages/core/src/utils/errors.ts``,
  ``packages/cli/src/config/config.ts``).
Each ``--version`` prints the version (first line). Errors are sorted by their text: signed out
(login, auth, 401, API key), rate-limited (429, rate limit, quota, usage limit, overloaded), or
another failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..llm import LLMError, LLMStopped


class CliMissing(LLMStopped):
    """The agent's CLI is not installed (not on PATH)."""


class SignedOut(LLMStopped):
    """The CLI is installed but not signed in (or its key is refused)."""


class RateLimited(LLMStopped):
    """The CLI's provider refuses more calls for now (rate or usage limit)."""


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


_SIGNED_OUT = re.compile(
    r"(?i)(not logged in|log ?in|/login|sign(ed)? ?in|unauthori[sz]ed|\b401\b|api key|authenticat|credentials)"
)
_LIMITED = re.compile(r"(?i)(\b429\b|rate.?limit|quota|usage limit|resource.?exhausted|overloaded|too many requests)")


def failure(agent: str, message: str, exit_code: int | None = None) -> LLMError:
    """The error a failed call raises, by what it says."""
    text = " ".join(message.split())[:300] or f"exit status {exit_code}"
    if _LIMITED.search(text):
        return RateLimited(f"{agent} is over its limit: {text}")
    if _SIGNED_OUT.search(text) or (agent == "gemini" and exit_code == 41):
        return SignedOut(f"{agent} is not signed in: {text} (run `{agent}` once to sign in)")
    return LLMError(f"{agent} failed: {text}")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    start = text.find("{")
    if start < 0:
        return None
    try:
        value = json.loads(text[start:])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_claude(stdout: str, stderr: str, code: int) -> Answer:
    data = _json_object(stdout)
    if data is None:
        raise failure("claude", stderr or stdout, code)
    if data.get("is_error") or code != 0 or data.get("subtype") not in (None, "success"):
        raise failure("claude", str(data.get("result") or data.get("subtype") or stderr), code)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    models = data.get("modelUsage") if isinstance(data.get("modelUsage"), dict) else {}
    prompt = (
        _int(usage.get("input_tokens"))
        + _int(usage.get("cache_read_input_tokens"))
        + _int(usage.get("cache_creation_input_tokens"))
    )
    return Answer(str(data.get("result") or ""), prompt, _int(usage.get("output_tokens")), next(iter(models), ""))


def parse_codex(stdout: str, stderr: str, code: int) -> Answer:
    texts: list[str] = []
    usage: dict[str, Any] = {}
    problem = ""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        if kind == "item.completed" and item.get("type") == "agent_message":
            texts.append(str(item.get("text") or ""))
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
        elif kind == "turn.failed":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            problem = str(error.get("message") or "turn failed")
        elif kind == "error":
            problem = str(event.get("message") or "error")
    if problem or code != 0 or not texts:
        raise failure("codex", problem or stderr or "no agent message in its output", code)
    return Answer(texts[-1], _int(usage.get("input_tokens")), _int(usage.get("output_tokens")), "")


def parse_gemini(stdout: str, stderr: str, code: int) -> Answer:
    data = _json_object(stdout) or _json_object(stderr)
    error = data.get("error") if data is not None and isinstance(data.get("error"), dict) else None
    if data is None or error is not None or code != 0:
        message = str(error.get("message")) if error else (stderr or stdout)
        raise failure("gemini", message, code)
    stats = data.get("stats") if isinstance(data.get("stats"), dict) else {}
    models = stats.get("models") if isinstance(stats.get("models"), dict) else {}
    prompt = completion = 0
    for entry in models.values():
        tokens = entry.get("tokens") if isinstance(entry, dict) and isinstance(entry.get("tokens"), dict) else {}
        prompt += _int(tokens.get("prompt"))
        completion += _int(tokens.get("candidates"))
    return Answer(str(data.get("response") or ""), prompt, completion, next(iter(models), ""))


@dataclass(frozen=True, slots=True)
class Cli:
    name: str
    argv: Callable[[str], list[str]]  # model ("" = the CLI's default) -> the arguments after the program
    parse: Callable[[str, str, int], Answer]


def _claude_argv(model: str) -> list[str]:
    args = ["-p", "--output-format", "json", "--no-session-persistence", "--max-turns", "1"]
    return [*args, "--model", model] if model else args


def _codex_argv(model: str) -> list[str]:
    args = ["exec", "--json", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only"]
    return [*args, "--model", model, "-"] if model else [*args, "-"]


def _gemini_argv(model: str) -> list[str]:
    args = ["--output-format", "json", "--prompt", "Answer the request above with the JSON it asks for."]
    return [*args, "--model", model] if model else args


CLIS: dict[str, Cli] = {
    "claude": Cli("claude", _claude_argv, parse_claude),
    "codex": Cli("codex", _codex_argv, parse_codex),
    "gemini": Cli("gemini", _gemini_argv, parse_gemini),
}
