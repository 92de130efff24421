"""MemoryReader answers what MemoryStore answers, from a private copy, whatever the disk cache is."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.memory.records import GLOBAL, Entity, Event, entity_id
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.model import OpmemError, Provenance
from opmem_tui.backend.recall.memory_access import MemoryReader

T0 = 1_750_000_000.0


def records(n: int, start: int = 0) -> list:
    out: list = []
    for i in range(start, start + n):
        p = Provenance("", "s1", (f"n{i}",), None, T0 + i, T0 + i, 1)
        thing = Entity(entity_id("file", f"f{i}.py"), "file", f"f{i}.py", (), {}, GLOBAL, p)
        out += [
            thing,
            Event(Event.make_id(f"edited f{i}.py", "work", p), f"edited f{i}.py", "work", 0.5, p, (thing.id,)),
        ]
    return out


def summaries(memory: MemoryStore) -> list[str]:
    return [e.summary for e in memory.timeline(limit=None).events]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = MemoryStore(tmp_path / "memory", durable=False)
    store.append(records(50))
    store.close()
    return tmp_path / "memory"


def test_a_current_disk_cache_is_copied(root: Path) -> None:
    expected = summaries(MemoryStore(root, durable=False))
    assert len(expected) == 50
    assert summaries(MemoryReader(root)) == expected


def test_a_stale_disk_cache_is_caught_up_from_the_logs(root: Path) -> None:
    old = (root / ".cache.sqlite").read_bytes()
    store = MemoryStore(root, durable=False)
    store.append(records(10, start=50))
    store.close()
    (root / ".cache.sqlite").write_bytes(old)  # the cache lags behind the logs
    for suffix in ("-wal", "-shm"):
        (root / f".cache.sqlite{suffix}").unlink(missing_ok=True)
    found = summaries(MemoryReader(root))
    assert len(found) == 60 and "edited f59.py" in found


def test_writes_still_in_the_wal_are_read_from_the_logs(root: Path) -> None:
    writer = MemoryStore(root, durable=False)
    writer.append(records(5, start=50))  # the writer stays open: its cache changes sit in -wal
    try:
        found = summaries(MemoryReader(root))
        assert len(found) == 55
    finally:
        writer.close()


@pytest.mark.parametrize("damage", [b"", b"garbage" * 100, "truncate"])
def test_an_unreadable_disk_cache_is_folded_again(root: Path, damage) -> None:
    path = root / ".cache.sqlite"
    path.write_bytes(path.read_bytes()[:4096] if damage == "truncate" else damage)
    damaged = path.read_bytes()
    assert len(summaries(MemoryReader(root))) == 50
    assert path.read_bytes() == damaged  # left as it was: the memory store mends its own cache


def test_a_reader_refuses_writes_and_sees_later_appends(root: Path) -> None:
    reader = MemoryReader(root)
    assert len(summaries(reader)) == 50
    with pytest.raises(OpmemError, match="read the memory only"):
        reader.append(records(1, start=99))
    store = MemoryStore(root, durable=False)
    store.append(records(3, start=50))
    store.close()
    reader.refresh()  # queries alone look again within a second; refresh looks now
    assert len(summaries(reader)) == 53
