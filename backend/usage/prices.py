"""Cost of a reply from the price table that ships with `genai-prices`, read offline.

genai-prices bundles its table in the package (genai_prices/data.py) and only goes to the network
when a program starts its `UpdatePrices` thread; opmem never does, and builds its own snapshot of
the bundled table so that nothing another library sets (`set_custom_snapshot`) changes the figures.
The price in force on the reply's date is used (genai-prices keeps dated prices, tiers by prompt
size and the Anthropic cache tiers). A model the table lacks costs None ("unknown"), never $0.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from .tokens import TokenCounts

UNKNOWN = None


def table_version() -> str:
    """Changes when the bundled table may have changed: the costs stored in the index are then recomputed."""
    from importlib.metadata import version

    return f"genai-prices {version('genai-prices')}"


class PriceTable:
    """`cost(model, counts, when)` in US dollars, or None when the table has no price for the model."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._missing: set[str] = set()
        self._found: dict[str, Any] = {}

    @cached_property
    def _snapshot(self) -> Any:
        from genai_prices.data import providers
        from genai_prices.data_snapshot import DataSnapshot

        return DataSnapshot(providers=providers, from_auto_update=False)

    @cached_property
    def version(self) -> str:
        return table_version()

    def _model(self, model: str) -> Any:
        """(provider, model info) for a model name, or None; looked up once per name."""
        with self._lock:
            if model in self._found:
                return self._found[model]
            if model in self._missing:
                return None
        try:
            found = self._snapshot.find_provider_model(_ref(model), None, None, None)
        except LookupError:
            found = None
        with self._lock:
            if found is None:
                self._missing.add(model)
            else:
                self._found[model] = found
        return found

    def known(self, model: str) -> bool:
        return bool(model) and self._model(model) is not None

    def cost(self, model: str, counts: TokenCounts, when: float) -> float | None:
        if not model:
            return UNKNOWN
        found = self._model(model)
        if found is None:
            return UNKNOWN
        from genai_prices.types import Usage

        provider, info = found
        usage = Usage(
            input_tokens=counts.input + counts.cache_write + counts.cache_read,
            output_tokens=counts.output,
            cache_write_tokens=counts.cache_write,
            cache_write_1h_tokens=counts.cache_write_1h,
            cache_read_tokens=counts.cache_read,
        )
        stamp = datetime.fromtimestamp(when, UTC) if when > 0 else datetime.now(UTC)
        try:
            price = info.calc_price(usage, provider, genai_request_timestamp=stamp, auto_update_timestamp=None)
        except (LookupError, ValueError, ArithmeticError):
            return UNKNOWN
        return float(price.total_price)


def _ref(model: str) -> str:
    """Model names as agents write them: "anthropic/claude-…", "moonshot-ai/kimi-k2" → the model part."""
    return model.rsplit("/", 1)[-1].strip().lower()
