"""redact_node and map_strings: every string of a node is redacted wherever it sits, a long text
the node holds twice is redacted in both places, and a value with nothing to change comes back
as the same object (the callers test `is` to skip rewriting a node). The detector's cheap gates
(`=`/`:` before any name, a 16-character token run before any provider pass) let through what
they must.

The tokens below are written by hand (random-looking, never real)."""

from __future__ import annotations

from types import MappingProxyType

from opmem_tui.backend.model import Node
from opmem_tui.backend.privacy import find_secrets, map_strings, redact_node, redact_text

GITHUB = "ghp_R8kq2ZxV7mW3nB5tY9pL4sD6fG1hJ0cQ2eAu"
PROSE = "the handler reads the config and returns the session line by line. " * 8  # > 256 characters


def _tool(content: str, metadata: dict, tool_input: object = None) -> Node:
    return Node(
        id="t1",
        seq=3,
        role="tool",
        content=content,
        called_by="a1",
        name="Bash",
        input=tool_input,
        metadata=MappingProxyType(metadata),
    )


def test_a_long_output_held_twice_is_redacted_in_both_places() -> None:
    output = PROSE + f"\nexport GITHUB_TOKEN={GITHUB}\n" + PROSE
    node = _tool(output, {"tool_use_result": {"stdout": output, "stderr": ""}}, {"command": "env"})
    shown = redact_node(node)
    assert GITHUB not in shown.content
    stdout = shown.metadata["tool_use_result"]["stdout"]
    assert GITHUB not in stdout and stdout == shown.content
    assert isinstance(shown.metadata, MappingProxyType)
    assert node.metadata["tool_use_result"]["stdout"] == output  # the node itself is left alone


def test_a_clean_node_with_a_repeated_long_text_is_the_same_object() -> None:
    output = PROSE + "\n" + PROSE
    node = _tool(output, {"tool_use_result": {"stdout": "".join([PROSE, "\n", PROSE])}}, {"command": "ls"})
    assert node.metadata["tool_use_result"]["stdout"] is not node.content  # equal, not the same str
    assert redact_node(node) is node


def test_a_secret_in_a_metadata_key_or_a_read_path_is_redacted() -> None:
    node = Node(
        id="n1",
        seq=1,
        role="user",
        content="hi",
        reads=(f"/tmp/pasted {GITHUB}.txt",),
        metadata=MappingProxyType({f"pushed with {GITHUB}": 1, "usage": {"input_tokens": 3}}),
    )
    shown = redact_node(node)
    assert all(GITHUB not in key for key in shown.metadata)
    assert GITHUB not in shown.reads[0] and isinstance(shown.reads, tuple)
    assert shown.metadata["usage"] is node.metadata["usage"]  # untouched parts are kept, not copied


def test_map_strings_copies_only_what_changed_and_keeps_container_types() -> None:
    untouched = {"a": [1, "x", ("y", None)], "b": MappingProxyType({"c": "z"})}
    assert map_strings(untouched, lambda s: s) is untouched
    value = {"keep": ["x", "y"], "swap": ("x", "secret", 2), "proxy": MappingProxyType({"k": "secret"})}
    out = map_strings(value, lambda s: "***" if s == "secret" else s)
    assert out == {"keep": ["x", "y"], "swap": ("x", "***", 2), "proxy": MappingProxyType({"k": "***"})}
    assert out["keep"] is value["keep"]
    assert type(out["swap"]) is tuple and type(out["proxy"]) is MappingProxyType
    assert list(out) == ["keep", "swap", "proxy"]  # key order kept
    keyed = map_strings({"secret": "secret"}, lambda s: "***" if s == "secret" else s, keys=False)
    assert keyed == {"secret": "***"}


def test_the_cheap_gates_let_through_what_they_must() -> None:
    # a name far into a long text with no other candidate: the `=`/`:` gate must not stop it
    assert [f.kind for f in find_secrets(PROSE + "\nDB_PASSWORD=Hunter2x9!\n")] == ["password"]
    # a token run at the very end, and one right after a non-ASCII character (Latin-1 view)
    assert [f.kind for f in find_secrets(PROSE + GITHUB)] == ["github-token"]
    text = "café→" + GITHUB
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end] == GITHUB
    # fifteen token characters are no run; sixteen are
    assert find_secrets("ghp_" + "a" * 11 + " x") == []
    assert redact_text(PROSE) is PROSE


def _needs_outside(items, chars: str) -> bool:
    """Whether a parsed regex sequence cannot match without a character outside `chars`."""
    from re import _constants as c

    def class_outside(members) -> bool:
        for op, av in members:
            if op is c.NEGATE:
                return False
            if op is c.LITERAL and chr(av) in chars:
                return False
            if op is c.RANGE and any(av[0] <= ord(ch) <= av[1] for ch in chars):
                return False
            if op is c.CATEGORY and av is not c.CATEGORY_SPACE:
                return False
        return True

    for op, av in items:
        if op is c.LITERAL and chr(av) not in chars:
            return True
        if op is c.IN and class_outside(av):
            return True
        if op is c.SUBPATTERN and _needs_outside(av[-1], chars):
            return True
        if op is c.BRANCH and all(_needs_outside(alt, chars) for alt in av[1]):
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1 and _needs_outside(av[2], chars):
            return True
    return False


def test_no_rule_can_match_a_text_of_hex_digits_and_dashes() -> None:
    """find_secrets returns at once for a text made of _HEX_ID only (UUIDs, git hashes): that
    holds while every rule needs some character outside it; a new rule that does not fails here."""
    from re import _parser

    from opmem_tui.backend.privacy import detect, secret_rules

    chars = detect._HEX_ID
    patterns = [rule[1] for rule in secret_rules.PROVIDER_RULES]
    patterns += [secret_rules.URL_PASSWORD.pattern] + [rx.pattern for _needle, rx in secret_rules.CLI_PASSWORDS]
    for pattern in patterns:
        assert _needs_outside(_parser.parse(pattern), chars), pattern
    assert all(set(kw) - set(chars) for kw in secret_rules.KEYWORDS)  # and a name needs `=` or `:`
    assert not _needs_outside(_parser.parse(r"[0-9a-f]{32}-?"), chars)  # the check itself can say no
    uuid = "4b350919-aaf1-453b-b1b2-3b40bc78e2a9"
    assert find_secrets(uuid) == [] and find_secrets("a" * 40) == []
    assert [f.kind for f in find_secrets(f"{uuid} GITHUB_TOKEN={GITHUB}")] == ["github-token"]
