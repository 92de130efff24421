"""Dates the recall tools accept: an out-of-range date is a bad_argument naming the field, never an internal error."""

from __future__ import annotations

import pytest

from opmem_tui.backend.recall.dates import parse_when
from opmem_tui.backend.recall.errors import RecallError

from .conftest import ask


@pytest.mark.parametrize("text", ["0001-01-01", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00"])
def test_a_date_at_the_ends_of_the_calendar_is_a_clear_error_or_a_time(text: str) -> None:
    try:
        value = parse_when(text, "until")
    except RecallError as exc:
        assert "until" in str(exc) and text in str(exc)
    else:
        assert isinstance(value, float)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("memory_search", {"query": "pytest", "until": "0001-01-01"}),
        ("memory_timeline", {"since": "0001-01-01"}),
        ("memory_graph_neighbors", {"entity": "worker", "as_of": "0001-01-01"}),
    ],
)
def test_year_one_is_a_bad_argument_not_an_internal_error(recall, tool: str, args: dict) -> None:
    reply = ask(recall, tool, **args)
    if "error" in reply:  # the date itself may be readable; what it must not be is a crash
        assert reply["error"]["code"] == "bad_argument", reply
        assert "0001-01-01" in reply["error"]["message"]


def test_search_with_since_after_until_is_a_bad_argument(recall) -> None:
    reply = ask(recall, "memory_search", query="pytest", since="2025-06-02", until="2025-06-01")
    assert reply["error"]["code"] == "bad_argument"
    assert "since is after until" in reply["error"]["message"]
