"""core_files: which core.md files exist, reading them within bounds, and a line's pointer back
to the turn of the record it was written from."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

from opmem_tui.backend.memory.core import core_path, write_cores
from opmem_tui.backend.memory.core_files import (
    MAX_CORE_READ,
    CoreFile,
    core_files,
    line_pointer,
    line_target,
    read_core,
)
from opmem_tui.backend.memory.records import Edge, Event
from opmem_tui.backend.memory.store import MemoryStore

from .sample import DAY, T0, entity, prov

CONSOLIDATED = date(2026, 6, 30)


def with_turn(record, turn: int):
    p = replace(record.provenance, turn=turn, node_ids=(f"node-{turn}",))
    if isinstance(record, Edge):
        return replace(record, id=Edge.make_id(record.from_id, record.relation, record.to_id, p), provenance=p)
    return replace(record, id=Event.make_id(record.summary, record.kind, p), provenance=p)


def build(store: MemoryStore) -> tuple[Event, Edge]:
    worker, port = entity("service", "worker"), entity("port", ":9090")
    p = prov(T0 + DAY, session="s1")
    fact = with_turn(Edge(Edge.make_id(worker.id, "listens-on", port.id, p), worker.id, port.id, "listens-on", p), 4)
    ev = with_turn(Event(Event.make_id("Moved the worker", "work", p), "Moved the worker", "work", 0.9, p), 3)
    store.append([worker, port, fact, ev])
    return ev, fact


def test_files_global_first_then_projects_present(tmp_path: Path):
    root = tmp_path / "memory"
    store = MemoryStore(root)
    build(store)
    write_cores(store, CONSOLIDATED, {})
    core_path(root, "p").parent.mkdir(parents=True)
    core_path(root, "p").write_text("· x\n", encoding="utf-8")
    files = core_files(root, {"p": "Proj P", "absent": "Not written"})
    assert [(f.project_id, f.label) for f in files] == [("", "global"), ("p", "Proj P")]
    text = read_core(files[0])
    assert text.exists and text.size == core_path(root).stat().st_size and "worker" in text.text


def test_missing_and_oversized_files(tmp_path: Path):
    missing = read_core(CoreFile("", "global", tmp_path / "core.md"))
    assert not missing.exists and missing.text == "" and missing.size == 0
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * (MAX_CORE_READ * 2))
    text = read_core(CoreFile("", "global", big))
    assert len(text.text) == MAX_CORE_READ and text.size == MAX_CORE_READ * 2


def test_line_pointer_needs_a_session_id():
    assert line_pointer("· 2026-05-29 Moved  ↪ session:s1") == ("· 2026-05-29 Moved", "s1")
    assert line_pointer("# a heading") is None
    assert line_pointer("· text  ↪ session:../../etc") is None


def test_a_core_line_leads_to_its_records_turn(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    build(store)
    write_cores(store, CONSOLIDATED, {})
    lines = core_path(store.root).read_text(encoding="utf-8").splitlines()
    event_line = next(line for line in lines if "Moved the worker" in line)
    fact_line = next(line for line in lines if "listens-on" in line)
    event_target = line_target(store, event_line)
    fact_target = line_target(store, fact_line)
    assert event_target is not None and (event_target.session_id, event_target.turn) == ("s1", 3)
    assert event_target.node_ids == ("node-3",)
    assert fact_target is not None and (fact_target.session_id, fact_target.turn) == ("s1", 4)
    # edited by hand: the session is still named, the turn is unknown
    edited = line_target(store, event_line.replace("Moved the worker", "Moved it elsewhere"))
    assert edited is not None and (edited.session_id, edited.turn) == ("s1", None)
    assert line_target(store, "[Timeline · recent]") is None
