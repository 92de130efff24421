"""opmem's block in a Markdown instruction file (AGENTS.md, GEMINI.md, CLAUDE.md, ...), between
marker comments, so it can be brought up to date and removed without touching the user's text.

    <!-- opmem:begin · written by `opmem connect codex`; `opmem disconnect codex` removes it -->
    ...
    <!-- opmem:end -->

The block goes at the end of the file after a separator (nothing for an empty file, a blank
line otherwise); `remove` takes the block and that separator out again, so the file reads
byte for byte as before.
"""

from __future__ import annotations

import re

BEGIN = "<!-- opmem:begin"
END = "<!-- opmem:end -->"
_BLOCK = re.compile(r"^<!-- opmem:begin[^\n]*-->\n.*?^<!-- opmem:end -->\n?", re.S | re.M)


def block(body: str, agent: str) -> str:
    head = f"{BEGIN} · written by `opmem connect {agent}`; `opmem disconnect {agent}` removes it -->"
    return f"{head}\n{body.rstrip()}\n{END}\n"


def find(text: str) -> re.Match[str] | None:
    return _BLOCK.search(text)


def separator_for(text: str) -> str:
    if not text:
        return ""
    return "\n" if text.endswith("\n") else "\n\n"


def upsert(text: str, new_block: str) -> tuple[str, str | None]:
    """(text with the block in place, the separator added when it was appended, else None)."""
    found = find(text)
    if found is not None:
        return text[: found.start()] + new_block + text[found.end() :], None
    sep = separator_for(text)
    return text + sep + new_block, sep


def remove(text: str, sep: str | None) -> str:
    """`text` without the block and the separator `upsert` put before it (one newline when unknown)."""
    found = find(text)
    if found is None:
        return text
    before, after = text[: found.start()], text[found.end() :]
    if sep is None:
        sep = "\n" if before.endswith("\n\n") else ""
    if sep and before.endswith(sep) and not after:
        before = before[: -len(sep)]
    elif sep and before.endswith("\n\n") and after:
        before = before[:-1]
    return before + after
