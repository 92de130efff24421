"""Shortcuts of the rules that must find exactly what the plain patterns find.

Each is checked against the pattern it stands for on text built from the words the patterns
look for, in upper and lower case, with the characters IGNORECASE folds to ASCII letters
(U+017F long s, U+212A Kelvin, dotless i) that str.lower() keeps as they are.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmem_tui.backend.distill.extract import caseless, cues, patterns, tools
from opmem_tui.backend.distill.extract import knowledge as kn
from opmem_tui.backend.distill.extract.caseless import Caseless
from opmem_tui.backend.distill.extract.knowledge import (
    commands,
    conventions,
    decisions,
    environment,
    instructed,
    stack,
    state,
    techs,
)

WORDS = [
    "use", "USE", "Using", "with", "We", "decided", "DECIDED", "to", "let's", "switch", "turns out", "TIL", "til",
    "the", "fix", "was", "always", "Never", "follow", "follows", "Google", "in", "every", "project", "everywhere",
    "want", "doesn't", "start", "crashes", "from", "replace", "instead", "of", "Python", "python", "3.11", "Node.js",
    "dropping", "Redux", "got rid of", "REMOVED", "jest", "no longer use", "phased out", "ditch", "we'd rather not use",
    "v20", ".NET", "8", "go", "1.22", "stack:", "a", "Django", "app", "user", "USER", "rejected", "by", "The",
    "CLAUDE.md", "create a", "Write the", "AGENTS.md", "GET", "/api/v1", "exposes", "env", "export", "backend",
    "lives", "under", "src/app", "The worker", "Hexagonal architecture", "we use", "our Celery workers", "format",
    "Lint", "black", "switching", "the migrations", "To", "goose", "or", "vs", "don't", "stop", "no", "without",
    "doesn't want to proceed", "cancelled", "the u\u017fer denied", " ", ",", ".", "\n", "\u017f", "u\u017fe", "\u212a", "\u0131", "é",
]  # fmt: skip
texts = st.lists(st.sampled_from(WORDS), max_size=16).map(" ".join)

CASELESS = {
    "CHOOSE": stack.CHOOSE,
    "_CONVENTION": conventions._CONVENTION,
    "_NOT_CONVENTION": conventions._NOT_CONVENTION,
    "_GLOBAL": conventions._GLOBAL,
    "_EVERYWHERE": conventions._EVERYWHERE,
    "_WANT": conventions._WANT,
    "PROBLEM_SAID": state.PROBLEM_SAID,
    "UNEXPECTED": state.UNEXPECTED,
    "_SWAP_WORDS": decisions._SWAP_WORDS,
    "_ASSISTANT_SWAP": decisions._ASSISTANT_SWAP,
    "_VERSIONED": techs._VERSIONED,
    "DECISION_STRONG": cues.DECISION_STRONG,
    "DECISION_USER": cues.DECISION_USER,
    "LEARNING": cues.LEARNING,
    "_ENV_WORD": environment._ENV_WORD,
    "WRITE_INSTRUCTIONS": instructed.WRITE_INSTRUCTIONS,
    "_NEGATED_IMPERATIVE": conventions._NEGATED_IMPERATIVE,
    "_NO_ELEMENT": conventions._NO_ELEMENT,
    "_DIRECT": stack._DIRECT,
    "_NEGATED": stack._NEGATED,
    "_OWNED": stack._OWNED,
    "_NOT_A_LIST": stack._NOT_A_LIST,
    "_NOT_THE_WAY": commands._NOT_THE_WAY,
    "_TOOL_FOR": stack._TOOL_FOR,
    "_ENDPOINT_WORD": environment._ENDPOINT_WORD,
    "_SWITCH_TO": decisions._SWITCH_TO,
    "_NOT_LAYOUT": state._NOT_LAYOUT,
    "_COMPONENT": state._COMPONENT,
    "_STYLE": state._STYLE,
    "_STATES": state._STATES,
}

# patterns written in lower case to be matched lowercased, beside the text they had (the same
# under IGNORECASE: the property test below holds them to it)
AS_WRITTEN = {
    "_VERSIONED": lambda p: p.replace("python|node", "Python|Node").replace("|go|golang|", "|Go|Golang|"),
    "LEARNING": lambda p: p.replace(r"\btil\b", r"\bTIL\b"),
    "_ENDPOINT_WORD": lambda p: p.replace("get|post|put|patch|delete", "GET|POST|PUT|PATCH|DELETE"),
    "_OWNED": lambda p: p.replace("[a-z@]", "[A-Za-z@]", 1),
    "_COMPONENT": lambda p: p.replace("(?:[a-z]", "(?:[A-Za-z]", 1),
    "WRITE_INSTRUCTIONS": lambda p: p.replace("claude\\.md", "CLAUDE\\.md").replace("agents\\.md", "AGENTS\\.md"),
}


def _same(a: re.Match[str] | None, b: re.Match[str] | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.span() == b.span() and a.groups() == b.groups() and a.re is b.re


@pytest.mark.parametrize("name", sorted(CASELESS))
def test_a_caseless_pattern_finds_what_the_case_blind_pattern_finds(name):
    fast = CASELESS[name]
    plain = fast.pattern

    @given(texts, st.integers(min_value=0, max_value=8))
    def check(text: str, pos: int) -> None:
        assert _same(fast.search(text), plain.search(text)), text
        assert fast.found(text) == (plain.search(text) is not None), text
        pos = min(pos, len(text))
        assert _same(fast.search(text, pos), plain.search(text, pos)), (text, pos)
        mine, theirs = list(fast.finditer(text, pos)), list(plain.finditer(text, pos))
        assert len(mine) == len(theirs) and all(_same(a, b) for a, b in zip(mine, theirs, strict=True)), text

    check()


def test_the_folding_characters_go_to_the_case_blind_pattern():
    rx = Caseless(re.compile(r"\bus(?:e|ing)\b", re.I))
    assert rx.search("we u\u017fe it").group() == "u\u017fe"  # IGNORECASE: long s is an s
    assert rx.found("USING it") and not rx.found("abuse")
    assert [m.group() for m in rx.finditer("Use it, using it")] == ["Use", "using"]


@pytest.mark.parametrize(
    "pattern",
    [
        re.compile(r"\bTIL\b", re.I),  # a capital: matches nothing in lower-case text
        re.compile(r"[A-Z]\w+", re.I),
        re.compile(r"follows (?-i:[A-Z])", re.I),  # inline flags
        re.compile(r"\x41", re.I),  # a code point that may be a capital
        re.compile(r"(a)\1", re.I),  # a group reference
        re.compile("\u017fome", re.I),  # long s: matches "some" when case-blind
        re.compile(r"\buse\b"),  # not case-blind at all
    ],
)
def test_a_pattern_that_cannot_be_matched_lowercased_is_refused(pattern):
    with pytest.raises(ValueError):
        Caseless(pattern)


def test_a_named_group_may_have_capitals():
    assert caseless._lowercase_only(r"(?P<Item>done|todo) (?P=Item)") is None


@given(texts)
def test_the_rejection_pre_check_never_skips_a_text_the_pattern_matches(text):
    assert (tools._says_rejected(text) is None) == (tools._REJECTED.search(text) is None), text


OUTPUTS = [
    "===== 3 passed, 1 failed in 0.52s =====", "Tests:       2 failed, 10 passed, 12 total",
    "test result: FAILED. 4 passed; 1 failed; 0 ignored", "5 tests, 1 failure", "3 doctests, 2 tests, 0 failures",
    "ok  \texample.com/pkg\t0.012s", "FAIL\texample.com/pkg [build failed]", "FAIL example.com/other 0.1s",
    "--- FAIL: TestX (0.00s)", "ok", "FAIL", " in ", "passed", "=", "\n", "random output line", "tests",
]  # fmt: skip


def _summary_without_pre_checks(text: str) -> str:
    """test_summary as it was before its literal pre-checks (the oracle)."""
    for rx in (patterns._PYTEST_LINE, patterns._JEST_LINE, patterns._CARGO_LINE, patterns._MIX_LINE):
        lines = rx.findall(text)
        if lines:
            return patterns._counts(lines[-1] if isinstance(lines[-1], str) else lines[-1][0])
    if re.search(r"^ok\s+\S+\s+[\d.]+s", text, re.MULTILINE) or re.search(r"^FAIL\s+\S+", text, re.MULTILINE):
        passed = len(re.findall(r"^ok\s+\S+", text, re.MULTILINE))
        failed = len(re.findall(r"^FAIL\s+\S+\s", text, re.MULTILINE))
        return patterns._join({"passed": passed, "failed": failed}, unit=" packages")
    return ""


@given(st.lists(st.sampled_from(OUTPUTS), max_size=8).map("\n".join))
def test_the_test_summary_pre_checks_change_nothing(text):
    assert patterns.test_summary(text) == _summary_without_pre_checks(text), text


def test_the_convention_split_keeps_the_named_style_alternative():
    assert kn.is_convention("We follow the Google style guide for Python.")
    assert kn.is_convention("The code follows PEP 8.")
    assert not kn.is_convention("It follows the rules of the game.")  # no name after it


@given(texts)
def test_the_convention_pattern_split_in_two_finds_what_the_whole_found(text):
    whole = re.compile(
        conventions._CONVENTION.pattern.pattern.replace(
            r"(?:we|i)\s+follow|", r"(?:we|i)\s+follow|follows?\s+(?:the\s+)?(?-i:[A-Z])\w*|", 1
        ),
        re.I,
    )
    assert whole.pattern != conventions._CONVENTION.pattern.pattern
    split = conventions._CONVENTION.found(text) or (
        "ollow" in text.lower() and conventions._FOLLOWS_NAME.search(text) is not None
    )
    assert split == (whole.search(text) is not None), text


@given(texts)
def test_the_drop_pre_check_never_skips_a_sentence_the_pattern_matches(text):
    if text.isascii() and decisions._DROP.search(text):
        assert decisions._DROP_HINT.search(text.lower()), text


@pytest.mark.parametrize("name", sorted(AS_WRITTEN))
def test_a_pattern_lowercased_finds_what_it_found_as_it_was_written(name):
    fast = CASELESS[name]
    written = AS_WRITTEN[name](fast.pattern.pattern)
    assert written != fast.pattern.pattern, "the test must put the capitals back"
    before = re.compile(written, fast.pattern.flags)

    @given(texts)
    def check(text: str) -> None:
        mine, theirs = list(fast.finditer(text)), list(before.finditer(text))
        assert [(m.span(), m.groups()) for m in mine] == [(m.span(), m.groups()) for m in theirs], text

    check()
