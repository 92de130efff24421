"""Node files are encoded by orjson where it writes json's bytes: dump_json_line == dump_compact_json."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import json
import math
import random
import re
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from opmem_tui.backend.importers import run_import
from opmem_tui.backend.model import Node
from opmem_tui.backend.store.files import _short_exponent, _utf8, dump_compact_json, dump_json, dump_json_line
from opmem_tui.backend.store.sessions import SessionStore

from ...conftest import FIXTURES as SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "transcripts" / "claude-code"  # ../shared beside the checkout


class Plain(enum.Enum):
    A = "a"


class Number(enum.IntEnum):
    B = 2


class Sub(dict):
    def items(self):  # json reads a subclass's items(); orjson reads the dict itself
        return [("z", 0)]


@dataclasses.dataclass
class Thing:
    x: int = 1


def _moved() -> collections.OrderedDict[str, int]:
    od = collections.OrderedDict([("a", 1), ("b", 2)])
    od.move_to_end("a")  # iteration order differs from the dict's storage order
    return od


ODD: list[Any] = [
    1e-05,
    -2.5e-05,
    9.999999999999999e-05,
    1e-07,
    1.5e-09,
    -3e-10,
    5e-324,
    1e-4,
    1e16,
    1.2345678901234568e17,
    -0.0,
    float("nan"),
    float("inf"),
    -float("inf"),
    2**64,
    -(2**63) - 1,
    2**63,
    Plain.A,
    Number.B,
    Sub(a=1),
    _moved(),
    Thing(),
    datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
    datetime.date(2025, 1, 1),
    uuid.UUID(int=5),
    {1: 2},
    {None: 1, True: 2},
    "\ud800 lone",
    '\x00\x1f\x7f\u2028 \\ " control',
    (1, "x"),
    {1, 2},
    b"raw",
    "e-5 0.00001 1e-7 as text",
    [[[[[[[[[[1.5e-300]]]]]]]]]],
]


@pytest.mark.parametrize("value", ODD, ids=lambda v: repr(v)[:30])
def test_the_values_orjson_writes_otherwise_come_out_as_json_writes_them(value: Any) -> None:
    for data in (value, [value], {"metadata": {"k": value}, "created_at": 1756712612.053}):
        assert dump_json_line(data) == dump_compact_json(data)


def test_floats_of_every_magnitude_and_random_bits() -> None:
    rng = random.Random(24)
    values = [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(20_000)]
    values += [m * 10.0**e for e in range(-330, 300) for m in (1, -1.5, 9.99, 123.456)]
    for value in values:
        data = {"x": value, "l": [value, "e-"]}
        assert dump_json_line(data) == dump_compact_json(data), value


def test_plain_data_is_kept_as_orjson_writes_it_and_that_is_json() -> None:
    """`plain`: floats 0 or from 1e-4 up (random bits, every magnitude, the edges), exact
    containers and scalars; text that looks like a tiny float; refused values still go to json."""
    rng = random.Random(25)
    values = [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(50_000)]
    values += [rng.uniform(-10, 10) * 10.0 ** rng.randint(-4, 20) for _ in range(20_000)]
    values += [m * 10.0**e for e in range(-4, 309) for m in (1, -1.5, 9.99, 123.456, 0.1000001)]
    values += [0.0, -0.0, 1e-4, -1e-4, math.nextafter(1e-4, 1), 1e16, math.nextafter(1e16, 0), 1.7976931348623157e308]
    floats = [v for v in values if v == 0 or 1e-4 <= abs(v) < math.inf]
    assert len(floats) > 40_000
    for value in floats:
        data = {"x": value, "l": [value, "e-", None, True, 3], "p": {"t": -value}}
        assert dump_json_line(data, plain=True) == dump_compact_json(data), value
    for data in ({"s": "e-5 0.00001 1e-7 as text", "n": 2**63}, {"big": 2**64}, {"s": "\ud800 lone"}):
        assert dump_json_line(data, plain=True) == dump_compact_json(data)


def test_deep_nesting_past_orjson_limit() -> None:
    data: Any = 1
    for _ in range(400):
        data = [data]
    assert dump_json_line(data) == dump_compact_json(data)


def test_node_files_of_an_import_hold_json_bytes(tmp_path: Path) -> None:
    """Golden: every node file the importer writes is json's encoding of the node (base's bytes)."""
    if not FIXTURES.is_dir():
        pytest.skip("the shared Claude fixtures are absent")
    from opmem_tui.backend.home import Home

    home = Home(tmp_path / "home")
    report = run_import(home, "claude", [FIXTURES], defer_mirror=True)
    assert report.nodes > 20
    files = sorted((tmp_path / "home" / "sessions").glob("*/history/*.json"))
    assert len(files) == report.nodes
    for path in files:
        raw = path.read_bytes()
        node = Node.from_json(json.loads(raw), path)
        assert raw == dump_compact_json(node.to_json()), path


def test_a_node_with_values_orjson_writes_otherwise_is_stored_as_json_writes_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    metadata = {"tiny": 1e-07, "nan": float("nan"), "big": 2**70, "when": datetime.date(2025, 1, 2), "kind": Plain.A}
    node = store.append_message("s1", "user", "hi", metadata=metadata, input={"x": [2.5e-05, -float("inf")]})
    (path,) = (tmp_path / "sessions" / "s1" / "history").glob("*.json")
    assert path.read_bytes() == dump_compact_json(node.to_json())
    assert b'"tiny":1e-07' in path.read_bytes() and b"NaN" in path.read_bytes()


def test_short_exponent_finds_a_digit_e_minus_one_digit_and_nothing_else() -> None:
    rng = random.Random(7)
    spec = re.compile(rb"[0-9]e-[0-9](?![0-9])")
    samples = [b"1e-7", b"[1e-7]", b"1.5e-7,", b"1e-07", b"e-7", b"x1e-7", b"1e-77", b'"ae-1"', b"12e-3", b"9e-9e-99"]
    samples += [bytes(rng.choice(b"09e-.x") for _ in range(rng.randrange(12))) for _ in range(20_000)]
    for sample in samples:
        assert _short_exponent(sample) == (spec.search(sample) is not None), sample


def _indented(data: Any) -> bytes:
    """What dump_json wrote before orjson (a lone surrogate escaped, as _utf8 does)."""
    return _utf8(json.dumps(data, ensure_ascii=False, indent=1, default=str))


@pytest.mark.parametrize("value", ODD, ids=lambda v: repr(v)[:30])
def test_meta_json_is_written_as_json_indents_it(value: Any) -> None:
    """dump_json (meta.json, once a turn commit) is json.dumps(indent=1)'s bytes, by orjson where it can."""
    for data in (value, [value, {}, []], {"title": "a\n  b", "extra": {"k": [value, {"n": {}}]}, "at": 1.5}):
        assert dump_json(data) == _indented(data)


def test_meta_json_random_documents() -> None:
    rng = random.Random(26)

    def value(depth: int) -> Any:
        kind = rng.randrange(8 if depth < 4 else 5)
        if kind == 0:
            return rng.randrange(-(10**20), 10**20)
        if kind == 1:
            return rng.choice([rng.random() * 10 ** rng.randrange(-30, 30), 1e-5, 2.5e-7, 1e16, -0.0])
        if kind == 2:
            return "".join(chr(rng.choice([rng.randrange(200), 0x2028, 0x1F600, 10, 34, 92])) for _ in range(6))
        if kind == 3:
            return rng.choice([True, False, None, "  \n  x"])
        if kind == 4:
            return rng.randrange(100)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        if kind == 6:
            return {f"k{i}": value(depth + 1) for i in range(rng.randrange(4))}
        return (value(depth + 1), value(depth + 1))

    for _ in range(5_000):
        data = {"id": "s", "x": value(0)}
        assert dump_json(data) == _indented(data), data
