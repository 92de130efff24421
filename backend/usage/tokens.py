"""Token counts of one reply, as the agent recorded them, in one shape for every agent.

Importers keep each agent's own usage record in the node's metadata (``usage``, ``token_usage``,
``tokens``; see docs/usage.md for which agent writes what). `node_counts` maps those shapes onto
`TokenCounts`: this is the one place that knows them, so a new importer that stores its agent's
record under ``tokens`` is counted without a change here when its fields follow one of the known
families, and otherwise adds one small mapper. Nothing is estimated: a reply whose agent recorded
no counts has none (None), never zeros posing as a count.

The convention, whichever agent: `input` is the input not read from or written to a cache,
`cache_write`/`cache_read` the cached parts (`cache_write_1h` is the share of `cache_write`
kept an hour, which Anthropic prices higher), `output` everything generated, reasoning included,
and `reasoning` the share of `output` the agent reports as reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import Node


@dataclass(frozen=True, slots=True)
class TokenCounts:
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    reasoning: int = 0  # part of output
    cache_write_1h: int = 0  # part of cache_write

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read

    @property
    def empty(self) -> bool:
        return self.total == 0

    def __add__(self, other: TokenCounts) -> TokenCounts:
        return TokenCounts(
            self.input + other.input,
            self.output + other.output,
            self.cache_write + other.cache_write,
            self.cache_read + other.cache_read,
            self.reasoning + other.reasoning,
            self.cache_write_1h + other.cache_write_1h,
        )


def count(value: Any) -> int:
    """A recorded count, or 0 for anything that is not a non-negative integer (or a whole float)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value.is_integer():
        return max(int(value), 0)
    return 0


def _claude(u: Mapping[str, Any]) -> TokenCounts:
    """Claude Code ``message.usage``; Amp/Cursor/Copilot camelCase of the same fields."""
    split = u.get("cache_creation")
    hour = count(split.get("ephemeral_1h_input_tokens")) if isinstance(split, Mapping) else 0
    return TokenCounts(
        input=count(u.get("input_tokens", u.get("inputTokens"))),
        output=count(u.get("output_tokens", u.get("outputTokens"))),
        cache_write=count(
            u.get("cache_creation_input_tokens", u.get("cacheCreationInputTokens", u.get("cacheCreationTokens")))
        ),
        cache_read=count(u.get("cache_read_input_tokens", u.get("cacheReadInputTokens", u.get("cacheReadTokens")))),
        cache_write_1h=hour,
    )


def _openai(u: Mapping[str, Any]) -> TokenCounts:
    """Codex ``last_token_usage`` (input includes the cached part, output includes reasoning)."""
    cached = count(u.get("cached_input_tokens"))
    return TokenCounts(
        input=max(count(u.get("input_tokens")) - cached, 0),
        output=count(u.get("output_tokens")),
        cache_read=cached,
        reasoning=count(u.get("reasoning_output_tokens")),
    )


def _gemini_cli(u: Mapping[str, Any]) -> TokenCounts:
    """Gemini CLI ``tokens``: input includes `cached`; `thoughts` and `tool` come on top."""
    cached, thoughts = count(u.get("cached")), count(u.get("thoughts"))
    return TokenCounts(
        input=max(count(u.get("input")) - cached, 0) + count(u.get("tool")),
        output=count(u.get("output")) + thoughts,
        cache_read=cached,
        reasoning=thoughts,
    )


def _gemini_api(u: Mapping[str, Any]) -> TokenCounts:
    """Qwen Code ``usageMetadata`` (the Gemini API's names)."""
    cached, thoughts = count(u.get("cachedContentTokenCount")), count(u.get("thoughtsTokenCount"))
    return TokenCounts(
        input=max(count(u.get("promptTokenCount")) - cached, 0) + count(u.get("toolUsePromptTokenCount")),
        output=count(u.get("candidatesTokenCount")) + thoughts,
        cache_read=cached,
        reasoning=thoughts,
    )


def _opencode(u: Mapping[str, Any]) -> TokenCounts:
    """OpenCode ``tokens``: input excludes the cache; reasoning is counted beside output."""
    cache = u.get("cache") if isinstance(u.get("cache"), Mapping) else {}
    reasoning = count(u.get("reasoning"))
    return TokenCounts(
        input=count(u.get("input")),
        output=count(u.get("output")) + reasoning,
        cache_write=count(cache.get("write")),
        cache_read=count(cache.get("read")),
        reasoning=reasoning,
    )


def _kimi(u: Mapping[str, Any]) -> TokenCounts:
    """Kimi CLI step ``usage``."""
    return TokenCounts(
        input=count(u.get("inputOther")),
        output=count(u.get("output")),
        cache_write=count(u.get("inputCacheCreation")),
        cache_read=count(u.get("inputCacheRead")),
    )


def _prompt_completion(u: Mapping[str, Any]) -> TokenCounts:
    """Continue ``usage`` / Cline ``metrics.tokens`` / Crush's columns: prompt and completion."""
    cached = count(u.get("cached", u.get("cachedTokens")))
    prompt = count(u.get("promptTokens", u.get("prompt_tokens", u.get("prompt"))))
    return TokenCounts(
        input=max(prompt - cached, 0),
        output=count(u.get("completionTokens", u.get("completion_tokens", u.get("completion")))),
        cache_read=cached,
    )


# The first family whose marker key a record holds maps it (order matters: most specific first).
FAMILIES: tuple[tuple[str, Callable[[Mapping[str, Any]], TokenCounts]], ...] = (
    (
        "last_token_usage",
        lambda u: _openai(u["last_token_usage"]) if isinstance(u["last_token_usage"], Mapping) else TokenCounts(),
    ),
    ("inputOther", _kimi),
    ("promptTokenCount", _gemini_api),
    ("cached", _gemini_cli),
    ("thoughts", _gemini_cli),
    ("cache", _opencode),
    ("input_tokens", _claude),
    ("inputTokens", _claude),
    ("outputTokens", _claude),
    ("promptTokens", _prompt_completion),
    ("prompt_tokens", _prompt_completion),
    ("prompt", _prompt_completion),
    ("input", _opencode),
    ("output", _opencode),
)

_AIDER = re.compile(r"([\d.,]+)\s*([km]?)\s+(sent|received)", re.IGNORECASE)


def _aider(text: str) -> TokenCounts:
    """aider's own line, e.g. "2.3k sent, 150 received." (aider rounds what it prints)."""
    sent = received = 0
    for number, suffix, kind in _AIDER.findall(text):
        try:
            value = int(float(number.replace(",", "")) * {"": 1, "k": 1_000, "m": 1_000_000}[suffix.lower()])
        except ValueError:
            continue
        if kind.lower() == "sent":
            sent += value
        else:
            received += value
    return TokenCounts(input=sent, output=received)


def record_counts(record: Any) -> TokenCounts | None:
    """One usage record in any known shape; None when it holds no count."""
    counts: TokenCounts | None = None
    if isinstance(record, Mapping):
        for marker, mapper in FAMILIES:
            if marker in record:
                counts = mapper(record)
                break
    elif isinstance(record, str):
        counts = _aider(record)
    elif isinstance(record, int) and not isinstance(record, bool):
        counts = TokenCounts(output=count(record))  # Copilot CLI records the output tokens only
    return counts if counts is not None and not counts.empty else None


USAGE_KEYS = ("usage", "token_usage", "tokens")  # node metadata keys importers keep usage under


def node_counts(node: Node) -> TokenCounts | None:
    """What the agent recorded for this reply (None: an agent or message that records nothing)."""
    meta = node.metadata
    if node.role != "assistant" or not meta:
        return None
    for key in USAGE_KEYS:
        if key in meta:
            found = record_counts(meta[key])
            if found is not None:
                return found
    return None


def node_model(node: Node, session_model: str = "") -> str:
    """The model that answered: the node's metadata, its name (importers put the model there), the session's."""
    model = node.metadata.get("model") if node.metadata else None
    if isinstance(model, str) and model:
        return model
    return node.name or session_model or ""


# Session-level totals, for agents that record no per-reply counts (Crush's sessions table,
# Factory Droid's settings file, Goose's sessions table): the importer's extras, under these keys.
SESSION_TOTAL_KEYS = ("token_usage",)


def session_counts(extra: Mapping[str, Any]) -> TokenCounts | None:
    """A session's recorded totals when its agent keeps no per-reply counts (see SESSION_TOTAL_KEYS)."""
    for key in SESSION_TOTAL_KEYS:
        found = record_counts(extra.get(key))
        if found is not None:
            return found
    if "prompt_tokens" in extra or "completion_tokens" in extra:
        return record_counts({k: extra.get(k) for k in ("prompt_tokens", "completion_tokens")})
    return None
