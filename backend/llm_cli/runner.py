"""A chat through an agent CLI or Ollama, with the same `chat()` as the OpenAI-style ChatClient.

Every call: the messages are redacted (backend/privacy) before anything leaves, the run's call
limit and token budget are checked first (tokens estimated as UTF-8 bytes / 3, as the handoff
counts them, plus the reply's cap), the CLI runs with the prompt on stdin in its own folder
(``<opmem home>/llm-cli``, so whatever session it records is apart from the user's projects), and
its JSON output is read. A dry run records each request instead of sending it. Once the CLI is
missing, signed out or over its limit, `stopped` holds why and no further call is made.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import LlmSettings
from ..llm import ChatReply, LLMError, LLMStopped, Message, TokenBudget
from ..privacy import redact_value
from ..resume.gemini import existing_project_dirs, gemini_dir
from ..token_estimate import estimate_tokens
from .agents import CLIS, Answer, CliMissing, failure

VERSION_TIMEOUT_S = 10.0


class CallLimit(LLMStopped):
    """The run's call limit (`[llm] max_calls`) is reached."""


DRY_RUN_REPLY = '{"turns": []}'  # what a dry run answers: nothing added, every batch still asked


@dataclass(frozen=True, slots=True)
class Request:
    """What one call sends (recorded for dry runs and for the cost figures)."""

    via: str
    argv: tuple[str, ...]
    prompt: str
    estimated_tokens: int


def prompt_text(messages: Sequence[Message]) -> str:
    """The messages as one prompt, the system part first (a CLI takes one text)."""
    parts = []
    for m in messages:
        role = m.get("role", "user")
        parts.append(m.get("content", "") if role == "user" else f"[{role}]\n{m.get('content', '')}")
    return "\n\n".join(parts)


class _Limits:
    def __init__(self, max_calls: int) -> None:
        self.max_calls = max_calls
        self.calls = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.calls >= self.max_calls:
                raise CallLimit(f"LLM call limit reached: {self.calls} of {self.max_calls} calls ([llm] max_calls)")
            self.calls += 1


class AgentChat:
    """One run's LLM through an agent CLI (claude, codex, gemini) or Ollama's local API."""

    def __init__(self, settings: LlmSettings, workdir: Path, *, dry_run: bool = False) -> None:
        self.settings = settings
        self.via = settings.via
        self.workdir = workdir
        self.dry_run = dry_run
        self.limits = _Limits(settings.max_calls)
        self.requests: list[Request] = []
        self.stopped: LLMStopped | None = None
        self.version = ""
        self.model = settings.model
        self._program: str | None = None

    # -- what it is -------------------------------------------------------------------------

    def describe(self) -> str:
        """`claude 2.0.14, model claude-sonnet-4-5` (as far as known)."""
        bits = [self.via + (f" {self.version}" if self.version else "")]
        if self.model:
            bits.append(f"model {self.model}")
        return ", ".join(bits)

    def prepare(self) -> None:
        """Find the CLI and its version (no LLM call). Raises CliMissing."""
        if self.via not in CLIS and self.via != "ollama":
            return  # the HTTP endpoint: only a dry run comes here
        if self.via == "ollama" or self._program is not None:
            if self.via == "ollama" and not self.version:
                self.version = _ollama_version(self.settings)
            return
        program = shutil.which(self.via)
        if program is None:
            raise self._stop(CliMissing(f"{self.via} is not installed (not on PATH)"))
        self._program = program
        try:
            done = subprocess.run(
                [program, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, check=False
            )
            self.version = (done.stdout or done.stderr).strip().splitlines()[0][:60] if done.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired, IndexError):
            self.version = ""

    # -- a call -----------------------------------------------------------------------------

    def close(self) -> None:
        pass

    def __enter__(self) -> AgentChat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stop(self, exc: LLMStopped) -> LLMStopped:
        self.stopped = exc
        return exc

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int = 1024,
        budget: TokenBudget | None = None,
        json_mode: bool = False,
    ) -> ChatReply:
        if self.stopped is not None:
            raise self.stopped
        self.prepare()
        safe = [redact_value(dict(m)) for m in messages]  # the last gate before anything leaves
        prompt = prompt_text(safe)
        estimate = estimate_tokens(prompt) + max_tokens
        if budget is not None:
            try:
                budget.reserve(estimate)
            except LLMStopped as exc:
                raise self._stop(exc) from None
        try:
            self.limits.take()
        except CallLimit as exc:
            raise self._stop(exc) from None
        argv = self._argv(safe, max_tokens)
        self.requests.append(Request(self.via, tuple(argv), prompt, estimate))
        if self.dry_run:
            if budget is not None:
                budget.charge(estimate)
            return ChatReply(DRY_RUN_REPLY, 0, 0, "dry-run")
        try:
            answer = self._send(argv, prompt, safe, max_tokens)
        except LLMStopped as exc:
            raise self._stop(exc) from None
        except LLMError:
            if budget is not None:
                budget.charge(estimate - max_tokens)
            raise
        if answer.model:
            self.model = answer.model
        reply = ChatReply(answer.text, answer.prompt_tokens, answer.completion_tokens, answer.model or self.model)
        if budget is not None:
            budget.charge(reply.total_tokens or estimate)
        return reply

    def _argv(self, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> list[str]:
        if self.via == "ollama":
            return ["POST", self.settings.ollama_url.rstrip("/") + "/api/chat"]
        if self.via not in CLIS:
            from ..llm import endpoint

            return ["POST", endpoint(self.settings)]
        return [self._program or self.via, *CLIS[self.via].argv(self.settings.model)]

    def _send(self, argv: list[str], prompt: str, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> Answer:
        if self.via == "ollama":
            return _ollama_chat(self.settings, messages, max_tokens)
        if self.via not in CLIS:
            raise LLMError(f"{self.via or 'openai'}: AgentChat sends through agent CLIs only (ChatClient speaks HTTP)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        before = _gemini_chats(self.workdir) if self.via == "gemini" else set()
        try:
            done = subprocess.run(
                argv,
                input=prompt,
                capture_output=True,
                text=True,
                timeout=self.settings.timeout_s,
                cwd=self.workdir,
                check=False,
            )
        except FileNotFoundError:
            raise CliMissing(f"{self.via} is not installed (not on PATH)") from None
        except subprocess.TimeoutExpired:
            raise LLMError(f"{self.via} gave no answer within {self.settings.timeout_s:g} s") from None
        except OSError as exc:
            raise LLMError(f"{self.via} could not be run: {exc}") from None
        finally:
            if self.via == "gemini":
                _remove_new_chats(self.workdir, before)
        return CLIS[self.via].parse(done.stdout, done.stderr, done.returncode)


def _gemini_chats(workdir: Path) -> set[Path]:
    """The chat files Gemini CLI keeps for opmem's own working folder (it records `-p` runs too,
    and has no flag against it), so that a distillation leaves nothing in Gemini's store for its
    importer to bring back as a session."""
    base = gemini_dir(os.environ)
    return {f for folder in existing_project_dirs(base, str(workdir)) for f in (folder / "chats").glob("session-*")}


def _remove_new_chats(workdir: Path, before: set[Path]) -> None:
    for chat in _gemini_chats(workdir) - before:
        try:
            chat.unlink()
        except OSError:
            pass  # left for the next call's tidy; never fatal to a distillation


def _ollama_version(settings: LlmSettings, timeout: float = 5.0) -> str:
    import httpx

    try:
        reply = httpx.get(settings.ollama_url.rstrip("/") + "/api/version", timeout=timeout)
        return str(reply.json().get("version") or "") if reply.status_code == 200 else ""
    except (httpx.HTTPError, ValueError, AttributeError):
        return ""


def _ollama_chat(settings: LlmSettings, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> Answer:
    """POST /api/chat (stream false, format json): Ollama's documented local API."""
    import httpx

    body = {
        "model": settings.model or "llama3.2",
        "messages": list(messages),
        "stream": False,
        "format": "json",
        "options": {"temperature": settings.temperature, "num_predict": max_tokens},
    }
    try:
        reply = httpx.post(settings.ollama_url.rstrip("/") + "/api/chat", json=body, timeout=settings.timeout_s)
    except httpx.TransportError as exc:
        raise CliMissing(f"ollama is not running at {settings.ollama_url} ({exc})") from None
    if reply.status_code != 200:
        raise failure("ollama", f"HTTP {reply.status_code}: {reply.text[:200]}", None)
    try:
        data = reply.json()
        text = data["message"]["content"]
    except (ValueError, KeyError, TypeError):
        raise LLMError(f"ollama reply is not a chat answer: {reply.text[:200]!r}") from None
    count = lambda key: data.get(key) if isinstance(data.get(key), int) else 0  # noqa: E731
    return Answer(str(text), count("prompt_eval_count"), count("eval_count"), str(data.get("model") or ""))


def request_bytes(requests: Sequence[Request]) -> int:
    return sum(len(r.prompt.encode("utf-8")) for r in requests)


def dumps_request(request: Request) -> str:
    return json.dumps({"via": request.via, "argv": list(request.argv), "prompt": request.prompt}, ensure_ascii=False)
