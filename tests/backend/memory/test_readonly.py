"""ReadOnlyMemoryStore answers what MemoryStore answers and writes nothing, whatever the disk holds."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.readonly import MemoryReadOnly, ReadOnlyMemoryStore
from opmem_tui.backend.memory.records import GLOBAL, Entity, Event, entity_id
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.model import Provenance

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


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (what a reader must leave as it found it)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = MemoryStore(tmp_path / "memory", durable=False)
    store.append(records(50))
    store.close()
    return tmp_path / "memory"


def test_a_current_disk_cache_is_read_in_place_and_nothing_is_written(root: Path) -> None:
    expected = summaries(MemoryStore(root, durable=False))
    before = snapshot(root)
    reader = ReadOnlyMemoryStore(root)
    assert len(expected) == 50
    assert summaries(reader) == expected
    assert reader.neighbors(entity_id("file", "f3.py")).center.name == "f3.py"
    assert reader.cache.on_disk  # no copy: the disk cache held what the logs hold
    reader.close()
    assert snapshot(root) == before


def test_no_memory_folder_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    reader = ReadOnlyMemoryStore(tmp_path / "memory")
    assert summaries(reader) == []
    assert not (tmp_path / "memory").exists()


def test_a_stale_disk_cache_is_caught_up_in_ram_then_left_for_the_disk_again(root: Path) -> None:
    old = (root / ".cache.sqlite").read_bytes()
    store = MemoryStore(root, durable=False)
    store.append(records(10, start=50))
    store.close()
    (root / ".cache.sqlite").write_bytes(old)  # the cache lags behind the logs
    before = snapshot(root)
    reader = ReadOnlyMemoryStore(root)
    found = summaries(reader)
    assert len(found) == 60 and "edited f59.py" in found
    assert not reader.cache.on_disk
    assert snapshot(root) == before
    MemoryStore(root, durable=False).stats()  # a writer's store catches the disk cache up
    reader.refresh()
    assert reader.cache.on_disk
    assert len(summaries(reader)) == 60


def test_a_writer_in_another_process_is_seen_and_nothing_is_left_behind(root: Path) -> None:
    writer = MemoryStore(root, durable=False)
    writer.append(records(5, start=50))  # the writer stays open while the reader reads
    reader = ReadOnlyMemoryStore(root)
    try:
        assert len(summaries(reader)) == 55
        script = (
            "import sys; sys.path[:0] = [sys.argv[2]]; from test_readonly import records; "
            "from opmem_tui.backend.memory.store import MemoryStore; "
            "MemoryStore(sys.argv[1], durable=False).append(records(3, start=70))"
        )
        subprocess.run([sys.executable, "-c", script, str(root), str(Path(__file__).parent)], check=True)
        assert len(summaries(reader)) == 58  # the other process committed: data_version moved
        assert reader.cache.on_disk
    finally:
        writer.close()
    names = {p.name for p in root.iterdir()}
    assert not {n for n in names if n.endswith(("-wal", "-shm", "-journal"))}


def test_a_cache_left_in_wal_mode_is_copied_not_opened(root: Path) -> None:
    db = sqlite3.connect(root / ".cache.sqlite")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    before = snapshot(root)
    reader = ReadOnlyMemoryStore(root)
    assert len(summaries(reader)) == 50
    assert not reader.cache.on_disk
    assert snapshot(root) == before  # no -wal, no -shm


@pytest.mark.parametrize("damage", [b"", b"garbage" * 100, "truncate"])
def test_an_unreadable_disk_cache_is_folded_again(root: Path, damage) -> None:
    path = root / ".cache.sqlite"
    path.write_bytes(path.read_bytes()[:4096] if damage == "truncate" else damage)
    before = snapshot(root)
    assert len(summaries(ReadOnlyMemoryStore(root))) == 50
    assert snapshot(root) == before  # left as it was: the memory store mends its own cache


def test_writes_are_refused_and_later_appends_are_seen(root: Path) -> None:
    reader = ReadOnlyMemoryStore(root)
    assert len(summaries(reader)) == 50
    with pytest.raises(MemoryReadOnly, match="read-only"):
        reader.append(records(1, start=99))
    with pytest.raises(MemoryReadOnly):
        reader.supersede("a", "b")
    store = MemoryStore(root, durable=False)
    store.append(records(3, start=50))
    store.close()
    reader.refresh()
    assert len(summaries(reader)) == 53


def test_home_gives_a_reader_that_leaves_the_state_folder_alone(tmp_path: Path) -> None:
    home = Home(tmp_path / "state")
    home.memory.append(records(4))
    before = snapshot(home.path)
    reader = home.memory_readonly()
    assert reader.stats().events == 4
    assert summaries(reader) == summaries(home.memory) == []  # session s1 is not in this home
    reader.close()
    assert snapshot(home.path) == before
