"""Snippets: the window over the most query terms, and the node file read behind a turn hit."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from backend.home import Home
from backend.memory.snippets import Snippets, _find, _stem
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


@given(_TEXT, st.text(_ALPHABET, max_size=8))
def test_find_is_the_regex_word_boundary_search(text: str, term: str) -> None:
    lower = text.casefold()
    assert _find(lower, term) == _find_by_regex(lower, term)


@given(_TEXT)
def test_plain_skips_no_escape_or_control(text: str) -> None:
    assert plain(text) == _plain_in_full(text)


def _distinct(text: str, terms: list[str]) -> int:
    """How many distinct stems of `terms` show in `text` at the start of a word."""
    lower = text.casefold()
    return len({_stem(t) for t in terms if _find(lower, t) >= 0})


def _most_in_reach(flat: str, terms: list[str], reach: int) -> int:
    """Brute force: the most distinct stems that start within `reach` characters of each other."""
    lower = flat.casefold()
    spots = [(at, _stem(t)) for t in terms for at in range(len(lower)) if _find(lower[at:], t) == 0]
    spots = [(at, stem) for at, stem in spots if at == 0 or _find(lower[at - 1 :], stem) == 1]
    return max((len({s for a, s in spots if at <= a <= at + reach}) for at, _s in spots), default=0)


@given(st.lists(_TEXT, max_size=8).map("".join), st.lists(st.text("abx1 ", min_size=1, max_size=4), max_size=3))
def test_the_window_holds_the_most_query_terms_a_window_can(text: str, terms: list[str]) -> None:
    snippets = Snippets(None, width=30)  # type: ignore[arg-type]  # around() reads no store
    flat = " ".join(plain(text).split())
    out = snippets.around(text, terms)
    if len(flat) <= 30:
        assert out == flat
        return
    assert len(out.strip("…")) <= 30 and out.strip("…") in flat
    assert _distinct(out.strip("…"), terms) >= _most_in_reach(flat, terms, 20)


def test_a_long_answer_shows_the_sentence_that_matches_not_its_opening() -> None:
    text = (
        "I looked at the project and here is what I found about the tests. "
        + "Some filler that says nothing in particular about anything at all. " * 6
        + "Run the end-to-end tests with pytest tests/integration/test_e2e.py -n 6 from the root. "
        + "More filler follows here, and it goes on for a while longer. " * 4
    )
    out = Snippets(None).around(text, ["run", "end", "tests"])  # type: ignore[arg-type]
    assert out.startswith("…Run the end-to-end tests with pytest tests/integration/test_e2e.py -n 6")
    assert len(out) <= 200 + 2


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


def test_a_bare_reply_is_short_and_holds_no_query_term() -> None:
    snippets = Snippets(None)  # type: ignore[arg-type]  # reads no store
    assert snippets.is_bare_reply("Yes, do it", ["redis", "data"])
    assert not snippets.is_bare_reply("Yes, keep the data there", ["redis", "data"])
    assert not snippets.is_bare_reply("x" * 150, ["redis"])  # long enough to say something itself
    assert not snippets.is_bare_reply("", ["redis"])  # its node is gone: nothing to answer
    earlier = "word " * 100 + "the redis data lives in ./data" + " word" * 100
    width = snippets.earlier_width("Yes")
    shown = snippets.answering("Yes", snippets.around(earlier, ["redis", "data"], width), ["redis", "data"])
    assert shown.endswith(" → Yes") and "redis data" in shown and len(shown) <= snippets.width + 2
    assert snippets.answering("Yes", "Shall I go on?", ["redis"]) == "Yes"  # found through an earlier one
    assert not snippets.is_bare_reply("Added test_login_no_loop", ["login"])  # the index's words
