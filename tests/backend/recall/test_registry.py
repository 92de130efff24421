from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from opmem_tui.backend.recall.context import Recall
from opmem_tui.backend.recall.registry import TOOLS, call
from opmem_tui.backend.recall.reply import cut_text, encode, page_bounds

from .conftest import ask


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_schema_is_valid_json_schema_and_examples_pass(name: str) -> None:
    tool = TOOLS[name]
    Draft202012Validator.check_schema(tool.input_schema)
    assert tool.input_schema["type"] == "object"
    assert tool.examples, f"{name} documents no example"
    validator = Draft202012Validator(tool.input_schema)
    for example in tool.examples:
        assert not list(validator.iter_errors(example)), example
    assert tool.description and tool.name == tool.fn.__name__


def test_unknown_tool_and_bad_arguments(recall: Recall) -> None:
    reply = call(recall, "memory_git_logg", {})
    assert reply["error"]["code"] == "unknown_tool" and reply["error"]["did_you_mean"][0] == "memory_git_log"
    wrong_type = ask(recall, "memory_open_session", session_id="x", turn="three")
    assert wrong_type["error"]["code"] == "bad_argument" and "turn" in wrong_type["error"]["message"]
    extra = ask(recall, "memory_git_log", colour="red")
    assert extra["error"]["code"] == "bad_argument" and "colour" in extra["error"]["message"]
    missing = ask(recall, "memory_git_show")
    assert missing["error"]["code"] == "bad_argument" and "commit" in missing["error"]["message"]


def test_cut_text_marks_what_is_left() -> None:
    text = "".join(f"{i}\n" for i in range(100))
    cut = cut_text(text, max_lines=10, max_chars=10_000)
    assert cut.text.splitlines()[:10] == [str(i) for i in range(10)]
    assert cut.text.endswith("... (+90 more lines)") and cut.more_lines == 90
    assert text[len(text) - cut.more_chars :] == "".join(f"{i}\n" for i in range(10, 100))
    one_line = cut_text("x" * 5000, max_lines=10, max_chars=100)
    assert one_line.text == "x" * 100 + "\n... (+1 more line, 4900 characters)"
    assert cut_text("short", max_lines=1, max_chars=10).complete


def test_page_bounds_cover_every_item_once() -> None:
    sizes = [10, 50, 5, 200, 1, 1, 90]
    bounds = page_bounds(sizes, 100)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    for start, end in bounds:
        assert end > start
        assert end - start == 1 or sum(sizes[start:end]) + (end - start - 1) <= 100


# Long strings built by repetition: hypothesis draws long texts slowly.
long_text = st.builds(lambda piece, times: piece * times, st.text(max_size=20), st.integers(0, 400))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | long_text,
    lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=10), inner, max_size=10),
    max_leaves=20,
)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=8), st.integers(1024, 8192))
def test_encode_never_exceeds_the_budget(reply: dict, max_bytes: int) -> None:
    text = encode(reply, max_bytes)
    assert len(text.encode("utf-8")) <= max_bytes
    json.loads(text)
