"""An optional OpenAI-compatible chat-completions client (httpx), used only when `[llm]` is set.

Nothing in opmem needs it: the distillation's rules work offline, titles keep their excerpt.
The client retries 429 and 5xx replies, timeouts and dropped connections with exponential
backoff (a `Retry-After` header is honoured, capped), and charges every call to a TokenBudget
so one run never spends more than `[llm] token_budget` tokens.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import token_estimate
from .config import LlmSettings
from .model import OpmemError
from .privacy import redact_value

if TYPE_CHECKING:  # httpx loads in about 0.3 s: only a run that calls an LLM pays for it
    import httpx

Message = Mapping[str, str]


class LLMError(OpmemError):
    """A call that failed for good (after its retries); the caller keeps what it had."""


class LLMStopped(LLMError):
    """No further call of this run can be answered (its budget or call limit is spent, the CLI is
    missing or signed out, the provider's rate limit is hit): the run keeps the rules' result."""


class BudgetExhausted(LLMStopped):
    """The run's token budget cannot pay for the next call."""


def is_configured(settings: LlmSettings) -> bool:
    """An LLM is configured when `[llm] base_url` is set."""
    return bool(settings.base_url.strip())


def endpoint(settings: LlmSettings) -> str:
    base = settings.base_url.strip().rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


class TokenBudget:
    """Tokens one run may spend; thread-safe. A limit of 0 allows nothing."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, int(limit))
        self.used = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def reserve(self, estimate: int) -> None:
        """Refuse a call whose estimated cost does not fit what is left."""
        with self._lock:
            if estimate > self.limit - self.used:
                raise BudgetExhausted(
                    f"LLM token budget spent: {self.used:,} of {self.limit:,} used, the next call needs about {estimate:,}"
                )

    def charge(self, tokens: int) -> None:
        with self._lock:
            self.used += max(0, int(tokens))


def estimate_tokens(messages: Sequence[Message], max_tokens: int) -> int:
    """The messages by opmem's one estimate (token_estimate: bytes / 3, 2 tokens of framing a
    message), plus the reply's cap: the agent-CLI path reserves the same for the same prompt."""
    return sum(token_estimate.estimate_tokens(m.get("content", "")) + 2 for m in messages) + max_tokens


@dataclass(frozen=True, slots=True)
class ChatReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str = ""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_BACKOFF_S = 30.0


class ChatClient:
    """POST {base_url}/chat/completions with retries; one httpx.Client, reused."""

    def __init__(
        self,
        settings: LlmSettings,
        *,
        api_key: str | None = None,
        backoff_s: float = 0.5,
        sleep: Callable[[float], Any] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not is_configured(settings):
            raise LLMError("no LLM configured: set [llm] base_url and model in config.toml")
        self.settings = settings
        self._endpoint = endpoint(settings)
        key = api_key if api_key is not None else os.environ.get(settings.api_key_env, "")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        import httpx

        self.backoff_s = backoff_s
        self._sleep = sleep
        self._http = httpx.Client(timeout=settings.timeout_s, headers=headers, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int = 1024,
        budget: TokenBudget | None = None,
        json_mode: bool = False,
    ) -> ChatReply:
        """One completion. Raises BudgetExhausted before calling, LLMError after the retries."""
        estimate = estimate_tokens(messages, max_tokens)
        if budget is not None:
            budget.reserve(estimate)
        body: dict[str, Any] = {
            "model": self.settings.model,
            # the last gate before the network: no secret value leaves in a request, whoever built it
            "messages": [redact_value(dict(m)) for m in messages],
            "temperature": self.settings.temperature if temperature is None else temperature,
            "max_tokens": max_tokens,
        }
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        try:
            reply = self._post(body)
        except LLMError:
            if budget is not None:
                budget.charge(estimate - max_tokens)  # the prompt was probably read anyway
            raise
        if budget is not None:
            budget.charge(reply.total_tokens or estimate)
        return reply

    def _post(self, body: Mapping[str, Any]) -> ChatReply:
        import httpx

        attempts = self.settings.max_retries + 1
        problem = ""
        for attempt in range(attempts):
            wait: float | None = None
            try:
                response = self._http.post(self._endpoint, json=body)
            except httpx.TimeoutException:
                problem = f"timed out after {self.settings.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = f"cannot reach {self._endpoint}: {exc}"
            else:
                if response.status_code == 200:
                    return _parse_reply(response)
                problem = f"HTTP {response.status_code}: {_error_text(response)}"
                if response.status_code not in RETRY_STATUS:
                    raise LLMError(f"LLM call refused ({problem})")
                wait = _retry_after(response)
            if attempt + 1 < attempts:
                self._sleep(min(MAX_BACKOFF_S, wait if wait is not None else self.backoff_s * 2**attempt))
        raise LLMError(f"LLM call failed after {attempts} attempt{'s' if attempts != 1 else ''}: {problem}")


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return error["message"][:200]
        if isinstance(error, str):
            return error[:200]
    return response.text[:200]


def _parse_reply(response: httpx.Response) -> ChatReply:
    try:
        data = response.json()
        message = data["choices"][0]["message"]
        text = message.get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise LLMError(f"LLM reply is not a chat completion: {response.text[:200]!r}") from None
    if not isinstance(text, str):
        raise LLMError("LLM reply content is not text")
    usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
    return ChatReply(
        text=text,
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        model=str(data.get("model") or ""),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """The JSON value of a reply, tolerating a ``` fence around it. Raises LLMError."""
    match = _FENCE.match(text)
    body = match.group(1) if match else text
    body = body.strip()
    if not body.startswith(("{", "[")):
        start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
        body = body[start:] if start >= 0 else body
    try:
        return json.loads(body)
    except ValueError as exc:
        raise LLMError(f"LLM reply is not valid JSON ({exc.msg} at column {exc.colno})") from None


def client_for(settings: LlmSettings) -> ChatClient | None:
    """A client when `[llm] base_url` is set, else None."""
    return ChatClient(settings) if is_configured(settings) else None
