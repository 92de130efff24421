"""The text-level JSON editor: an entry inserted then removed gives back the text byte for byte,
whatever the layout; JSONC comments survive; syntax errors name the file, line and column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.agents import jsonc

P = Path("/cfg/settings.json")
scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
objects = st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k != "opmem"), values, max_size=5)


@settings(max_examples=60, deadline=None)
@given(
    data=objects,
    indent=st.sampled_from([None, 2, 4, "\t"]),
    holder=st.sampled_from(["mcpServers", "mcp"]),
    trailing=st.booleans(),
)
def test_insert_then_remove_is_the_identity(data: dict, indent, holder: str, trailing: bool) -> None:
    data = {k: v for k, v in data.items() if k != holder}
    text = json.dumps(data, indent=indent) + ("\n" if trailing else "")
    root = jsonc.parse(text, P)
    assert root.data == data
    entry = {"command": "/usr/bin/opmem", "args": ["--home", "/h", "mcp"]}
    new, made = jsonc.set_path(text, root, (holder, "opmem"), entry, P)
    parsed = json.loads(new)
    assert parsed[holder]["opmem"] == entry and {k: v for k, v in parsed.items() if k != holder} == data
    root = jsonc.parse(new, P)
    holder_node = jsonc.at_path(root, (holder,))
    back = jsonc.remove_entry(new, holder_node, holder_node.index("opmem"))
    assert made == (holder,)
    root = jsonc.parse(back, P)
    back = jsonc.remove_entry(back, root, root.index(holder))
    assert back == text


def test_jsonc_comments_and_trailing_commas_survive_an_edit() -> None:
    text = '{\n  // servers\n  "mcp": {\n    "a": {"type": "local"}, /* keep */\n  },\n}\n'
    root = jsonc.parse(text, P, comments=True)
    new, _ = jsonc.set_path(text, root, ("mcp", "opmem"), {"type": "local"}, P)
    assert "// servers" in new and "/* keep */" in new
    node = jsonc.at_path(jsonc.parse(new, P, comments=True), ("mcp",))
    assert jsonc.remove_entry(new, node, node.index("opmem")) == text


@pytest.mark.parametrize(
    "text, comments, where",
    [
        ('{"a": 1,}', False, "line 1, column 9: trailing comma"),
        ('{\n  "a": // no\n}', False, "line 2, column 8: comments are not allowed"),
        ('{\n  "a": 1\n  "b": 2\n}', True, "line 3, column 3: expected ','"),
        ('{"a": "x', False, "line 1, column 7: Unterminated string"),
        ("{} {}", False, "unexpected text after the end"),
    ],
)
def test_syntax_errors_name_the_file_line_and_column(text: str, comments: bool, where: str) -> None:
    with pytest.raises(jsonc.JsonSyntaxError) as caught:
        jsonc.parse(text, P, comments=comments)
    assert str(caught.value).startswith(f"{P}: invalid JSON at ") and where in str(caught.value)


def test_a_deeply_nested_file_is_an_error_not_a_crash() -> None:
    with pytest.raises(jsonc.JsonSyntaxError, match="nested too deeply"):
        jsonc.parse("[" * 5000 + "]" * 5000, P)
