"""record_values.loads_exact (orjson where it reads as json.loads, json.loads elsewhere) and
claude_records.small: the same values, and the same errors, as the plain json code they replace."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from opmem_tui.backend.importers import claude_records, record_values
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.claude_code import ClaudeImporter
from opmem_tui.backend.importers.claude_records import TOOL_RESULT_META_LIMIT, claude_dumps, small
from opmem_tui.backend.importers.record_values import loads_exact

from .conftest import fixtures_dir


def outcome(fn: Any, line: str | bytes) -> tuple[str, Any]:
    """("ok", repr of the value with its key order) or ("error", its type and message)."""
    try:
        value = fn(line)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc).__name__, str(exc))
    return "ok", ordered(value)


def ordered(value: Any) -> Any:
    """The value with dict key order and float/int types made visible (nan compares by repr)."""
    if isinstance(value, dict):
        return ("dict", [(k, ordered(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [ordered(v) for v in value])
    return (type(value).__name__, repr(value))


EDGE_LINES = [
    b'{"a":1,"b":2,"a":3}',  # a repeated key: the last value, in the first key's place
    b'{"x":1e400}',
    b'{"x":-1e400}',
    b'{"x":1e-400}',
    b'{"x":NaN}',
    b'{"x":Infinity}',
    b'{"x":-Infinity}',
    b'{"x":123456789012345678901234567890}',  # orjson makes this a float
    b'{"x":18446744073709551615}',
    b'{"x":18446744073709551616}',
    b'{"x":-9223372036854775808}',
    b'{"x":-9223372036854775809}',
    b'{"x":9223372036854775807}',
    b'{"x":1234567890123456789.5}',
    b'{"x":"12345678901234567890"}',
    b'{"x":"\\ud800"}',  # a lone surrogate escape
    b'{"x":"\\udc00 and \\ud83d\\ude00"}',
    b'{"x":"\xed\xa0\x80"}',  # a UTF-8 encoded surrogate (json.loads of bytes reads it)
    b'{"x":"\xff"}',
    b'{"x":"\xc0\xaf"}',
    b'\xef\xbb\xbf{"x":1}',  # a BOM
    b'{"x":"\x00"}',
    b'{"x":"a\tb"}',
    b'{"x":"\x7f\xc3\xa9\xe2\x86\x92"}',
    b'  {"x":-0.0, "y":-0} \r\n',
    b'{"x":01}',
    b'{"x":1.}',
    b'{"x":.5}',
    b"{'x':1}",
    b'{"x":[1,]}',
    b'{"x":1} {}',
    b"[1,2]",
    b'"text"',
    b"",
    b"\x0c{}",
    b"[" * 5000 + b"]" * 5000,  # deeper than either parser goes
    b'{"x":' * 300 + b"1" + b"}" * 300,
    '{"x":"é → 😀"}'.encode("utf-16"),
    '{"x":"é"}'.encode("utf-32-le"),
]


@pytest.mark.parametrize("line", EDGE_LINES, ids=range(len(EDGE_LINES)))
def test_edge_lines_read_as_json_loads_reads_them(line: bytes) -> None:
    assert outcome(loads_exact, line) == outcome(json.loads, line)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert outcome(loads_exact, text) == outcome(json.loads, text)


def test_lone_surrogates_in_str_lines() -> None:
    line = '{"x":"\ud800 raw"}'
    assert outcome(loads_exact, line) == outcome(json.loads, line)


def test_random_numbers_read_as_json_loads_reads_them() -> None:
    rng = random.Random(24)
    for i in range(20_000):
        kind = i % 4
        if kind == 0:
            text = repr(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])
        elif kind == 1:
            text = f"{rng.randint(0, 10**9)}.{rng.randint(0, 10**18)}e{rng.randint(-330, 310)}"
        elif kind == 2:
            text = "-" * rng.randint(0, 1) + str(rng.getrandbits(rng.randint(1, 80)))
        else:
            text = "0." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
        line = f'{{"x":{text},"y":[{text}]}}'.encode()
        assert outcome(loads_exact, line) == outcome(json.loads, line), line


def test_without_orjson_it_is_json_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_values, "_orjson_loads", json.loads)
    for line in EDGE_LINES[:10]:
        assert outcome(loads_exact, line) == outcome(json.loads, line)


def claude_files() -> list[Path]:
    return sorted((fixtures_dir() / "transcripts").rglob("*.jsonl"))


def test_claude_fixtures_parse_to_the_same_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture transcript, parsed as Claude Code: the same sessions and warnings with
    orjson (bytes lines) as with json.loads alone (the str lines the importer fed before)."""
    files = claude_files()
    if not files:
        pytest.skip("real fixtures are absent")

    def parse_all() -> list[tuple[Any, ...]]:
        out = []
        for path in files:
            report = ImportReport()
            sessions = ClaudeImporter().parse_file(path, report, final=True)
            out.append((path.name, sessions, report.warnings))
        return out

    fast = parse_all()
    monkeypatch.setattr(record_values, "_orjson_loads", json.loads)
    monkeypatch.setattr(ClaudeImporter, "feeds_text", True)
    assert fast == parse_all()
    assert sum(len(s.nodes) for _, sessions, _ in fast for s in sessions) > 50


def small_before(value: Any, limit: int = TOOL_RESULT_META_LIMIT) -> Any:
    """claude_records.small as it was: the JSON text built first, every time."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    text = claude_dumps(value)
    if len(text) <= limit:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(item, (int, float, bool)) or item is None or (isinstance(item, str) and len(item) <= 256):
                out[str(key)] = item
        out["truncated"] = True
        return out
    return {"truncated": True, "length": len(text)}


def test_small_is_what_it_was() -> None:
    rng = random.Random(8)

    def value(depth: int) -> Any:
        pick = rng.random()
        if depth > 4 or pick < 0.4:
            return rng.choice(
                [
                    "",
                    "x" * rng.choice([1, 200, 256, 257, 4000, 4094, 4096, 4097, 9000]),
                    '\x01\n"\\é\ud800' * rng.choice([1, 100, 170, 700, 1000]),
                    3,
                    -(10**18) + 1,
                    10**18,
                    2**70,
                    2.5,
                    -1.7976931348623157e308,
                    float("nan"),
                    None,
                    True,
                ]
            )
        if pick < 0.7:
            keys = [f"k{i}" if rng.random() < 0.9 else rng.choice([1, None, 2.5, "é" * 300]) for i in range(4)]
            return {keys[i]: value(depth + 1) for i in range(rng.randint(0, 4))}
        if pick < 0.8:
            return tuple(value(depth + 1) for _ in range(rng.randint(0, 4)))
        return [value(depth + 1) for _ in range(rng.randint(0, 4))]

    for _ in range(6000):
        item = value(0)
        for limit in (512, 1024, TOOL_RESULT_META_LIMIT):
            assert json.dumps(small(item, limit)) == json.dumps(small_before(item, limit))
    near = {"a": "x" * (TOOL_RESULT_META_LIMIT - 9)}  # 4096 chars of JSON text exactly: kept
    assert len(claude_dumps(near)) == TOOL_RESULT_META_LIMIT and small(near) is near
    over = {"a": "é" * (TOOL_RESULT_META_LIMIT - 7), "n": 1}
    assert small(over) == small_before(over) == {"n": 1, "truncated": True}


def test_small_keeps_a_small_value_without_building_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool result's metadata whose JSON text is surely within the limit is kept as it is, its
    text not built (a bound: 6 characters at most for each one of a string, 24 for a float)."""
    kept = {"stdout": "x\n" * 100, "stderr": "", "interrupted": False, "isImage": False, "n": [1, 2.5, None]}
    big = {"content": "y" * 1000}  # 6 x 1000 may be past 4096: its text is built, as before

    def built(value: Any) -> str:
        seen.append(value)
        return json.dumps(value, ensure_ascii=False)

    seen: list[Any] = []
    monkeypatch.setattr(claude_records, "claude_dumps", built)
    assert claude_records.small(kept) is kept and claude_records.small(big) is big
    assert seen == [big]
