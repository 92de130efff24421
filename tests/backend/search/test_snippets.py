"""Snippets: the window around the first query term, and the node file read behind a turn hit."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from backend.home import Home
from backend.memory.snippets import Snippets, _find
from backend.safe_text import _CONTROLS, _ESCAPES, plain

# Letters, digits, "_", combining marks, punctuation, spaces of several kinds, controls, ESC.
_ALPHABET = st.sampled_from(list("ab_1 .-éß²\u0301\u4e00\u00a0\u2003\t\n\r\x0b\x1c\x1b[m\x9b\x07\x00\x7f"))
_TEXT = st.text(_ALPHABET, max_size=40)


def _find_by_regex(lower: str, term: str) -> int:
    """What snippets used to run: the stem after a regex word boundary."""
    stem = term if len(term) <= 4 else term[: max(4, len(term) - 2)]
    match = re.search(r"\b" + re.escape(stem), lower)
    return match.start() if match else -1


def _plain_in_full(text: str) -> str:
    if not text:
        return ""
    return _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))


def _around_by_regex(snippets: Snippets, text: str, terms: list[str]) -> str:
    flat = re.sub(r"\s+", " ", _plain_in_full(text)).strip()
    if len(flat) <= snippets.width:
        return flat
    lower = flat.casefold()
    first = min((i for i in (_find_by_regex(lower, t) for t in terms) if i >= 0), default=0)
    start = max(0, min(first - snippets.width // 3, len(flat) - snippets.width))
    if start > 0:
        space = flat.find(" ", start, start + 20)
        start = space + 1 if space >= 0 else start
    piece = flat[start : start + snippets.width].rstrip()
    return ("…" if start > 0 else "") + piece + ("…" if start + snippets.width < len(flat) else "")


@given(_TEXT, st.text(_ALPHABET, max_size=8))
def test_find_is_the_regex_word_boundary_search(text: str, term: str) -> None:
    lower = text.casefold()
    assert _find(lower, term) == _find_by_regex(lower, term)


@given(_TEXT)
def test_plain_skips_no_escape_or_control(text: str) -> None:
    assert plain(text) == _plain_in_full(text)


@given(st.lists(_TEXT, max_size=6).map("".join), st.lists(st.text(_ALPHABET, min_size=1, max_size=6), max_size=3))
def test_the_window_is_the_one_the_regex_version_cut(text: str, terms: list[str]) -> None:
    snippets = Snippets(None, width=30)  # type: ignore[arg-type]  # around() reads no store
    assert snippets.around(text, terms) == _around_by_regex(snippets, text, terms)


def test_a_turn_snippet_comes_from_its_node_file_and_a_broken_file_falls_back(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    store = home.sessions
    node = store.append_message("s1", "user", "the worker listens on port 18109 \x1b[31mnow\x1b[0m", created_at=1e9)
    snippets = Snippets(store)
    assert snippets.turn("s1", node.id, node.seq, "user", 0, ["port"]) == "the worker listens on port 18109 now"
    read = snippets.node_file("s1", node.id, node.seq, "user")
    assert read is not None and read.content == node.content
    path = store.path_for("s1") / "history" / f"{node.seq:06d}-u-{node.id}.json"
    path.write_text("{not json")
    assert snippets.node_file("s1", node.id, node.seq, "user") is None
    assert snippets.node_file("s1", "no-such-node", 7, "user") is None
    assert snippets.node_file("../etc", node.id, node.seq, "user") is None  # an unsafe id builds no path
