"""Which files a turn's tool calls wrote, and which texts record a `git commit`.

Plain functions over Nodes (backend/model.py) so the auto-commit and the commit linker can be
tested on hand-made turns. Paths come back as the tools gave them (absolute, or relative to the
tool's own working directory when it named one); ProjectGit maps them into a repository. What
each call did to its file is tool_writes.py's job; the paths here are the ones it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..model import Node
from .tool_writes import PATH_KEYS, WORKDIR_KEYS, arguments, is_writer_tool, node_paths, patch_paths, strings

__all__ = [
    "PATH_KEYS",
    "WORKDIR_KEYS",
    "git_commit_texts",
    "is_git_commit_call",
    "is_writer_tool",
    "patch_paths",
    "tool_written_paths",
]

_GIT_COMMIT = re.compile(r"\bgit\b(?:\s+(?:-[cC]\s+\S+|--?[\w.-]+(?:=\S+)?))*\s+commit\b")


def tool_written_paths(nodes: Iterable[Node]) -> tuple[str, ...]:
    """Paths the tool nodes among `nodes` wrote, in first-seen order, without duplicates."""
    seen: dict[str, None] = {}
    for node in nodes:
        for path in node_paths(node):
            seen.setdefault(path, None)
    return tuple(seen)


def is_git_commit_call(node: Node) -> bool:
    """A tool node whose arguments run `git commit` (also `git -C dir commit`, `git -c k=v commit`)."""
    if not node.is_tool:
        return False
    return any(_GIT_COMMIT.search(text) for text in strings(arguments(node)))


def git_commit_texts(nodes: Iterable[Node]) -> list[str]:
    """Arguments and results of the `git commit` tool calls among `nodes`."""
    texts: list[str] = []
    for node in nodes:
        if is_git_commit_call(node):
            texts.extend(strings(arguments(node)))
            if node.content:
                texts.append(node.content)
    return texts
