"""A found secret replaced by `[secret:<kind>#<fingerprint>]`, in text and through JSON-like values."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import replace
from itertools import islice
from types import MappingProxyType
from typing import Any

from ..model import Node
from .detect import find_secrets

# A marker already in the text (redacted once before) is never a secret again.
MARKER = re.compile(r"\[secret:[a-z0-9-]+#[0-9a-f]{4}\]")


# Short strings already found clean: the keys and values of node metadata and tool input repeat
# from node to node (claude_type, tool_use_id, a cwd, a model name): of a Claude Code import's
# 19,000 such strings 3,400 differ. Only clean strings are kept (never one holding a secret).
_CLEAN_LENGTH = 256
_CLEAN_MAX = 50_000
_clean: set[str] = set()


def forget_clean() -> None:
    """Empty the set of strings known clean (a benchmark's cold start)."""
    _clean.clear()


def fingerprint(value: str) -> str:
    """Four hex digits of the value's SHA-256: the same secret is recognisable, its value is not."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:4]


def marker_for(kind: str, value: str) -> str:
    return f"[secret:{kind}#{fingerprint(value)}]"


def redact_text(text: str) -> str:
    """`text` with every secret value replaced by its marker; the same object when it holds none.
    A marker already in the text stays as it is (find_secrets never reports one)."""
    if not text:
        return text
    short = len(text) <= _CLEAN_LENGTH
    if short and text in _clean:
        return text
    findings = find_secrets(text)
    if not findings:
        if short:
            if len(_clean) >= _CLEAN_MAX:
                _clean.clear()
            _clean.add(text)
        return text
    out: list[str] = []
    at = 0
    for f in findings:
        out.append(text[at : f.start])
        out.append(marker_for(f.kind, text[f.start : f.end]))
        at = f.end
    out.append(text[at:])
    return "".join(out)


# Tuples, not `dict | MappingProxyType`: isinstance with a union costs 8x more a call (3.11),
# and map_strings makes several for each value of every node.
_MAPPINGS = (dict, MappingProxyType)
_SEQUENCES = (list, tuple)
_CONTAINERS = (dict, MappingProxyType, list, tuple)


def map_strings(value: Any, fn: Callable[[str], str], *, keys: bool | Callable[[str], str] = True) -> Any:
    """`value` with `fn` applied to every string in it (dict keys too unless `keys` is false;
    `keys` may instead be the function for keys), through dicts, lists, tuples and mapping
    proxies; the same object when nothing changes. A container is copied only from its first
    changed item on (most values change nothing)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, _MAPPINGS):
        key_fn = keys if callable(keys) else fn if keys else None
        pairs: dict[Any, Any] | None = None
        for i, (k, v) in enumerate(value.items()):
            new_k = key_fn(k) if key_fn is not None and isinstance(k, str) else k
            if isinstance(v, str):
                new_v = fn(v)
            elif isinstance(v, _CONTAINERS):
                new_v = map_strings(v, fn, keys=keys)
            else:
                new_v = v  # a number, a bool, None
            if pairs is None:
                if new_k is k and new_v is v:
                    continue
                pairs = dict(islice(value.items(), i))
            pairs[new_k] = new_v
        if pairs is None:
            return value
        return MappingProxyType(pairs) if isinstance(value, MappingProxyType) else pairs
    if isinstance(value, _SEQUENCES):
        items: list[Any] | None = None
        for i, v in enumerate(value):
            if isinstance(v, str):
                new = fn(v)
            elif isinstance(v, _CONTAINERS):
                new = map_strings(v, fn, keys=keys)
            else:
                new = v
            if items is None:
                if new is v:
                    continue
                items = list(value[:i])
            items.append(new)
        return value if items is None else type(value)(items)
    return value


def redact_value(value: Any) -> Any:
    """`value` with redact_text applied to every string in it (dict keys included); the same object
    when nothing changes."""
    return map_strings(value, redact_text)


def redact_node(node: Node) -> Node:
    """The node with secrets out of its content, name, input, reads and metadata. A long text the
    node holds twice (a tool's output as content and again in its metadata, an edit's strings in
    its input and its result) is scanned once."""
    seen: dict[str, str | None] = {}  # long text -> its redaction, None when clean
    clean = _clean

    def once(text: str) -> str:
        if len(text) <= _CLEAN_LENGTH:
            return text if text in clean else redact_text(text)
        if text in seen:
            done = seen[text]
            return text if done is None else done
        out = redact_text(text)
        seen[text] = None if out is text else out
        return out

    content = once(node.content)
    name = redact_text(node.name) if node.name else node.name
    tool_input = map_strings(node.input, once)
    metadata = map_strings(node.metadata, once)
    reads = map_strings(node.reads, once)
    return with_fields(node, content, name, tool_input, metadata, reads)


def with_fields(node: Node, content: str, name: str | None, tool_input: Any, metadata: Any, reads: Any) -> Node:
    """`node` with these text fields (each redacted or shown some way); the same node when every
    one is the object it had."""
    if (
        content is node.content
        and name is node.name
        and tool_input is node.input
        and metadata is node.metadata
        and reads is node.reads
    ):
        return node
    return replace(node, content=content, name=name, input=tool_input, metadata=metadata, reads=reads)
