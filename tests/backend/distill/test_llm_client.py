"""backend/llm.py against a real HTTP server on 127.0.0.1 speaking the chat-completions API."""

from __future__ import annotations

import json

import pytest

from opmem_tui.backend.config import LlmSettings
from opmem_tui.backend.llm import (
    BudgetExhausted,
    ChatClient,
    LLMError,
    TokenBudget,
    client_for,
    endpoint,
    parse_json_reply,
)

from .llm_server import ChatServer, Reply


@pytest.fixture
def server():
    with ChatServer() as srv:
        yield srv


def scripted_client(server: ChatServer, **overrides) -> tuple[ChatClient, list[float]]:
    waits: list[float] = []
    settings = LlmSettings(base_url=server.base_url, model="test-model", **overrides)
    return ChatClient(settings, api_key="sk-test", backoff_s=0.01, sleep=waits.append), waits


MESSAGES = [{"role": "user", "content": "hello"}]


def test_good_reply_sends_the_model_temperature_and_key(server: ChatServer):
    server.replies.append(Reply("Hi there", usage=(12, 3)))
    client, waits = scripted_client(server, temperature=0.2)
    reply = client.chat(MESSAGES, max_tokens=50)
    assert reply.text == "Hi there" and reply.total_tokens == 15 and not waits
    body = server.requests[0]
    assert body["model"] == "test-model" and body["temperature"] == 0.2 and body["max_tokens"] == 50
    assert body["messages"] == MESSAGES
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_429_and_5xx_are_retried_with_growing_backoff(server: ChatServer):
    server.replies.extend([Reply(status=429, body="{}"), Reply(status=503, body="{}"), Reply("ok")])
    client, waits = scripted_client(server)
    assert client.chat(MESSAGES).text == "ok"
    assert len(server.requests) == 3
    assert waits == [0.01, 0.02]


def test_retry_after_header_is_honoured(server: ChatServer):
    server.replies.extend([Reply(status=429, body="{}", headers={"Retry-After": "1.5"}), Reply("ok")])
    client, waits = scripted_client(server)
    assert client.chat(MESSAGES).text == "ok"
    assert waits == [1.5]


def test_retries_run_out_with_a_clear_error(server: ChatServer):
    server.default = Reply(status=500, body=json.dumps({"error": {"message": "model overloaded"}}))
    client, waits = scripted_client(server, max_retries=2)
    with pytest.raises(LLMError, match=r"after 3 attempts: HTTP 500: model overloaded"):
        client.chat(MESSAGES)
    assert len(server.requests) == 3 and len(waits) == 2


def test_a_client_error_is_not_retried(server: ChatServer):
    server.replies.append(Reply(status=401, body=json.dumps({"error": {"message": "bad key"}})))
    client, waits = scripted_client(server)
    with pytest.raises(LLMError, match=r"refused.*401.*bad key"):
        client.chat(MESSAGES)
    assert len(server.requests) == 1 and not waits


def test_timeout_is_retried_then_reported(server: ChatServer):
    server.default = Reply(hang=True)
    client, waits = scripted_client(server, timeout_s=0.3, max_retries=1)
    with pytest.raises(LLMError, match=r"timed out after 0\.3 s"):
        client.chat(MESSAGES)
    assert len(server.requests) == 2 and waits == [0.01]


def test_a_reply_that_is_not_a_completion_is_an_error(server: ChatServer):
    server.replies.append(Reply(body="<html>proxy error</html>"))
    client, _ = scripted_client(server)
    with pytest.raises(LLMError, match="not a chat completion"):
        client.chat(MESSAGES)


def test_budget_refuses_a_call_it_cannot_pay_and_charges_usage(server: ChatServer):
    server.default = Reply("ok", usage=(300, 100))
    client, _ = scripted_client(server)
    budget = TokenBudget(1000)
    client.chat(MESSAGES, max_tokens=100, budget=budget)
    client.chat(MESSAGES, max_tokens=100, budget=budget)
    assert budget.used == 800
    with pytest.raises(BudgetExhausted, match="800 of 1,000 used"):
        client.chat(MESSAGES, max_tokens=300, budget=budget)
    assert len(server.requests) == 2  # the refused call never went out


def test_json_replies_are_read_inside_fences_and_refused_when_broken():
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('Sure! {"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(LLMError, match="not valid JSON"):
        parse_json_reply('{"a": 1,,}')


def test_endpoint_is_built_from_the_base_url():
    assert endpoint(LlmSettings(base_url="http://x/v1/")) == "http://x/v1/chat/completions"
    assert endpoint(LlmSettings(base_url="http://x/v1/chat/completions")) == "http://x/v1/chat/completions"
    assert client_for(LlmSettings()) is None


def test_no_client_without_a_base_url():
    with pytest.raises(LLMError, match="no LLM configured"):
        ChatClient(LlmSettings())
