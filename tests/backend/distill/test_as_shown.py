"""collect.as_shown: what the distillation reads of a node is plain and redacted exactly as the full
path (plain(), then redact_text, on every string) makes it, whatever strings it already showed:
the strings it keeps as unchanged are only ever ones that path leaves alone.

The tokens below are written by hand (random-looking, never real)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.distill import collect
from opmem_tui.backend.distill.collect import _shown, _Unchanged, as_shown
from opmem_tui.backend.model import Node
from opmem_tui.backend.privacy import map_strings, redact_text, redact_value
from opmem_tui.backend.safe_text import plain

GITHUB = "ghp_R8kq2ZxV7mW3nB5tY9pL4sD6fG1hJ0cQ2eAu"
AWS = "AKIAQ7XK2M9PLR4TZW8N"
PROSE = "the handler reads the config and returns the session line by line. " * 5  # > 256 characters
# Pieces that make secrets, make them only once terminal escapes are gone, or look like them.
_PIECES = [
    GITHUB,
    AWS,
    "ghp_R8kq2ZxV7mW3\x1b[0mnB5tY9pL4sD6fG1hJ0cQ2eAu",  # a token split by an escape: one once plain
    "ghp_R8kq2ZxV7mW3\x07nB5tY9pL4sD6fG1hJ0cQ2eAu",
    "password=",
    "hunter2Xk7",
    "Authorization: Bearer ",
    "x7Fq9LmZ2vR8pK3wT6yB",
    "postgres://u:",
    "p4ssw0rdXyz@db/app",
    "export GITHUB_TOKEN=",
    "sk-ant-",
    "api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0",
    "[secret:github-token#1a2b]",
    "\x1b]0;title\x07",
    "\x1b[31m",
    "\r\n",
    "\x00",
    "\x9b",
    " ",
    "\n",
    ":",
    "=",
    "line 12 of code",
    "src/core/models.py",
    "0123456789abcdef-",
    "é",
    "\u4e00",
    PROSE,
]
_TEXT = st.lists(st.sampled_from(_PIECES) | st.text(max_size=12), max_size=8).map("".join)


def _full(text: str) -> str:
    return redact_text(plain(text))


def _reference(node: Node) -> Node:
    """as_shown as it was written before it kept anything: every string through the full path."""
    from dataclasses import replace

    return replace(
        node,
        content=_full(node.content),
        name=_full(node.name) if node.name else node.name,
        input=map_strings(node.input, _full, keys=redact_text),
        metadata=map_strings(node.metadata, _full, keys=redact_text),
        reads=redact_value(node.reads),
    )


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collect, "_unchanged", _Unchanged(strings=50, chars=40_000))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, max_size=12))
def test_a_string_is_shown_as_the_full_path_shows_it_and_only_unchanged_ones_are_kept(texts: list[str]) -> None:
    for text in [*texts, *texts]:  # the second time, what was kept answers
        assert _shown(text) == _full(text)
    for kept in collect._unchanged.seen:
        assert _full(kept) == kept


_VALUES = st.recursive(
    _TEXT | st.none() | st.integers() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.none() | _TEXT, _VALUES, st.dictionaries(_TEXT, _VALUES, max_size=3), st.lists(_TEXT, max_size=2))
def test_a_node_is_shown_as_the_full_path_shows_it(
    content: str, name: str | None, tool_input: Any, metadata: dict[str, Any], reads: list[str]
) -> None:
    node = Node("n1", 1, "tool", content, "a1", "a1", name, tool_input, tuple(reads), 1.0, MappingProxyType(metadata))
    for _ in range(2):
        assert as_shown(node) == _reference(node)


def test_a_secret_is_masked_every_time_it_is_shown() -> None:
    text = f"export GITHUB_TOKEN={GITHUB}"
    for _ in range(3):
        assert GITHUB not in _shown(text)
    assert text not in collect._unchanged.seen


def test_a_token_that_an_escape_split_is_masked_once_plain() -> None:
    split = GITHUB[:16] + "\x1b[0m" + GITHUB[16:]
    assert _shown(split) == _full(split) and GITHUB not in _shown(split)
    assert split not in collect._unchanged.seen


def test_a_long_output_held_twice_is_masked_in_both_places_and_a_clean_one_kept() -> None:
    output = PROSE + f"\naws_access_key_id = {AWS}\n" + PROSE
    node = Node(
        "t1",
        3,
        "tool",
        output,
        "a1",
        "a1",
        "Bash",
        {"command": "cat ~/.aws/credentials"},
        metadata=MappingProxyType({"tool_use_result": {"stdout": output, "stderr": ""}}),
    )
    shown = as_shown(node)
    assert AWS not in shown.content and shown.metadata["tool_use_result"]["stdout"] == shown.content
    assert shown == _reference(node)
    clean = Node("t2", 4, "tool", PROSE + "ok", "a1", "a1", "Bash", {"command": "ls"})
    assert as_shown(clean) is clean and PROSE + "ok" in collect._unchanged.seen


def test_what_is_kept_stays_within_its_bounds() -> None:
    kept = collect._unchanged
    huge = "x" * (kept.max_chars // 16 + 1)
    assert _shown(huge) == huge and huge not in kept.seen  # too big to keep
    for i in range(120):
        _shown(f"plain text number {i}")
        assert len(kept.seen) <= kept.max_strings and kept.size <= kept.max_chars


def test_empty_fields_come_back_as_they_are() -> None:
    node = Node("u1", 0, "user", "hello", input=None, reads=(), metadata=MappingProxyType({}))
    assert as_shown(node) is node
    node = Node("u2", 1, "user", "hello", input={}, metadata=MappingProxyType({}))
    assert as_shown(node) is node
