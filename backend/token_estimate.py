"""The one token estimate opmem uses where no tokenizer is at hand (handoff budgets, LLM limits).

One token per 3 bytes of UTF-8, rounded up. BPE tokenizers of current models give about 4
characters a token for English prose and 3 for code; a non-Latin character is 2-3 bytes and about
one token. Counting bytes / 3 therefore errs on the side of more tokens: text that fits by this
count fits the model's.
"""

from __future__ import annotations

BYTES_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)
