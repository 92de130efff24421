"""Costs checked by hand against the providers' published prices, at two dates; unknown models."""

from __future__ import annotations

import socket

import pytest

from opmem_tui.backend.usage.prices import PriceTable
from opmem_tui.backend.usage.tokens import TokenCounts

from .helpers import at


@pytest.fixture(scope="module")
def prices() -> PriceTable:
    return PriceTable()


def test_claude_sonnet_4_5(prices: PriceTable) -> None:
    # Anthropic, https://docs.claude.com/en/docs/about-claude/pricing (Claude Sonnet 4.5, prompts
    # <= 200k tokens): input $3 / MTok, 5-minute cache write $3.75, cache read $0.30, output $15.
    counts = TokenCounts(input=1_000, output=2_000, cache_write=10_000, cache_read=100_000)
    expected = (1_000 * 3 + 2_000 * 15 + 10_000 * 3.75 + 100_000 * 0.30) / 1e6  # $0.1005
    assert prices.cost("claude-sonnet-4-5-20250929", counts, at("2025-10-01 12:00")) == pytest.approx(expected)


def test_claude_sonnet_4_5_one_hour_cache_costs_twice_the_input(prices: PriceTable) -> None:
    # Same page: a 1-hour cache write is 2x the base input price ($6 / MTok).
    counts = TokenCounts(input=0, output=0, cache_write=10_000, cache_write_1h=10_000)
    assert prices.cost("claude-sonnet-4-5", counts, at("2025-10-01 12:00")) == pytest.approx(10_000 * 6 / 1e6)


def test_claude_opus_4_6_long_prompt_before_and_after_the_price_change(prices: PriceTable) -> None:
    # Anthropic, https://platform.claude.com/docs/en/build-with-claude/context-windows: Opus 4.6
    # charged prompts over 200k tokens $10 in / $37.50 out per MTok until the 1M context window
    # became generally available (2026-03-13); since then $5 / $25 at any length.
    counts = TokenCounts(input=300_000, output=1_000)
    before = prices.cost("claude-opus-4-6", counts, at("2026-02-20 10:00"))
    after = prices.cost("claude-opus-4-6", counts, at("2026-04-01 10:00"))
    assert before == pytest.approx((300_000 * 10 + 1_000 * 37.5) / 1e6)  # $3.0375
    assert after == pytest.approx((300_000 * 5 + 1_000 * 25) / 1e6)  # $1.525


def test_gpt_5_cached_input(prices: PriceTable) -> None:
    # OpenAI, https://openai.com/api/pricing (GPT-5): input $1.25 / MTok, cached input $0.125, output $10.
    counts = TokenCounts(input=8_000, output=500, cache_read=2_000, reasoning=300)
    expected = (8_000 * 1.25 + 2_000 * 0.125 + 500 * 10) / 1e6  # $0.01525; reasoning is part of output
    assert prices.cost("gpt-5", counts, at("2025-09-01 09:00")) == pytest.approx(expected)
    assert prices.cost("openai/gpt-5", counts, at("2025-09-01 09:00")) == pytest.approx(expected)


def test_a_model_the_table_lacks_is_unknown_not_free(prices: PriceTable) -> None:
    counts = TokenCounts(input=100, output=100)
    assert prices.cost("synthetic-glued-model", counts, at("2026-01-01 00:00")) is None
    assert prices.cost("", counts, at("2026-01-01 00:00")) is None
    assert not prices.known("synthetic-glued-model")


def test_prices_are_computed_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the price table went to the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    table = PriceTable()  # a fresh table: its snapshot is built here, with the network refused
    assert table.cost("claude-opus-4-6", TokenCounts(input=1_000_000), at("2026-05-01 00:00")) == pytest.approx(5.0)
