"""feed_file as text (a file decoded once) feeds the parser what feeding its bytes line by line does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.importers.base import ImportReport, feed_file
from opmem_tui.backend.importers.claude_parser import ClaudeParser

GOOD = json.dumps(
    {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s",
        "message": {"role": "user", "content": "héllo \u2028 €"},
        "timestamp": "2025-01-01T00:00:00Z",
    },
    ensure_ascii=False,
).encode()
REPLY = json.dumps(
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "s",
        "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "ok"}]},
        "timestamp": "2025-01-01T00:00:01Z",
    }
).encode()

FILES = {
    # valid UTF-8: the text path; lines only str.isspace() calls blank, bad JSON, a non-object
    "text": GOOD + b"\n{bad json\n\x1c\n\xc2\xa0\n  \n[1]\n" + REPLY + b"\n",
    "bad utf-8": GOOD + b'\n{"type":"user","a":"\xff"}\n' + REPLY + b"\n",
    "bom": b"\xef\xbb\xbf" + GOOD + b"\n" + REPLY + b"\n",
    "bom inside": GOOD + b"\n\xef\xbb\xbf" + REPLY + b"\n",
    "nul": GOOD + b'\n\x00{"a":1}\n' + REPLY + b"\n",
    "encoded surrogate": GOOD + b'\n{"type":"user","a":"\xed\xa0\x80"}\n' + REPLY + b"\n",
    "partial last line": GOOD + b"\n" + REPLY[:20],
    "whole last line": GOOD + b"\n" + REPLY,
}


def fed(path: Path, as_text: bool) -> tuple[int, list[str], list[tuple[str, list[tuple[str, str]]]]]:
    report = ImportReport()
    parser = ClaudeParser(path, report)
    count = feed_file(parser, path, report, as_text=as_text)
    sessions = parser.take(final=True)
    return (
        count,
        [str(w) for w in report.warnings],
        [(s.native_id, [(n.id, repr(n.content)) for n in s.nodes]) for s in sessions],
    )


@pytest.mark.parametrize("name", sorted(FILES))
def test_text_feeds_what_bytes_feed(tmp_path: Path, name: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES[name])
    as_bytes = fed(path, as_text=False)
    assert fed(path, as_text=True) == as_bytes
    assert as_bytes[2], "the good records became nodes"


def test_bad_utf8_warning_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES["bad utf-8"])
    _, warnings, _ = fed(path, as_text=True)
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:2: invalid JSON")
