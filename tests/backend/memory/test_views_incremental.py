"""Incremental entity views: after records of every kind are appended, the pages written from the
records appended since the last call are byte for byte the pages a rebuild from scratch writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from opmem_tui.backend.memory.logs import EDGES_LOG
from opmem_tui.backend.memory.records import Edge, Entity, Patch, entity_id
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.memory.views import VIEWS_DIR, write_views
from opmem_tui.backend.memory.writer import _line

from .sample import DAY, T0, edge, entity, event, prov


def _pages(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / VIEWS_DIR).glob("*.md"))}


def _rebuilt(root: Path, tmp: Path, shown: dict[str, bool]) -> dict[str, bytes]:
    fresh = tmp / f"fresh-{len(list(tmp.iterdir()))}"
    fresh.mkdir()
    for name in ("timeline", "graph"):
        if (root / name).is_dir():
            shutil.copytree(root / name, fresh / name, ignore=shutil.ignore_patterns("views", "state.json"))
    store = MemoryStore(fresh, session_exists=lambda sid: shown.get(sid, True), durable=False)
    try:
        write_views(store)
    finally:
        store.close()
    return _pages(fresh)


@pytest.mark.parametrize("keyed", [False, True], ids=["asking-every-session", "keyed-sessions"])
def test_incremental_views_equal_a_rebuild_after_every_kind_of_record(tmp_path: Path, keyed: bool):
    root = tmp_path / "memory"
    shown: dict[str, bool] = {"s1": True, "s9": True}
    memory = MemoryStore(root, session_exists=lambda sid: shown.get(sid, True), durable=False)
    work = tmp_path / "rebuilds"
    work.mkdir()
    a, b, c, d, e, y, far = (entity("file", n) for n in ("a.py", "b.py", "c.py", "d.py", "e.py", "y.py", "far.py"))
    lone = Entity(entity_id("concept", "secret plan"), "concept", "secret plan", provenance=prov(T0, session="s9"))
    old_ab = edge(a, "uses", b, T0)
    memory.append([a, b, c, d, e, y, far, lone, old_ab, edge(d, "uses", far, T0), edge(far, "uses", c, T0)])
    memory.append([edge(y, "uses", e, T0)])
    assert memory.merge(d.id, e.id, "e is d") is not None
    memory.append([edge(a, "mentions", lone, T0, session="s9"), event("a.py changed", T0, entities=(a, b))])
    memory.append([event("far.py only", T0, entities=(far,))])
    write_views(memory)
    assert _pages(root) == _rebuilt(root, work, shown)

    def key(sid: str) -> str:  # a session's own part of its visibility (a meta.json's stat in a home)
        return repr(shown.get(sid, True))

    def check(*, at_most: int | None = None) -> None:
        result = write_views(memory, sessions_token="same", session_key=key) if keyed else write_views(memory)
        assert _pages(root) == _rebuilt(root, work, shown)
        if at_most is not None:
            assert result.rendered <= at_most, result

    new = entity("concept", "new helper")
    memory.append([new, edge(b, "uses", new, T0 + DAY)])  # an entity and an edge
    check(at_most=2)
    memory.append([event("c.py fixed", T0 + DAY, entities=(c,))])  # an event
    check(at_most=1)
    newer_ab = edge(a, "uses", b, T0 + 2 * DAY, session="s1b")
    memory.append([newer_ab])
    assert memory.supersede(old_ab.id, newer_ab.id, "moved on") is not None  # an edge superseded
    check()
    first = event("the port is 4000", T0, entities=(c,))
    second = event("the port is 18109", T0 + DAY, entities=(d,))
    memory.append([first, second])
    check()
    assert memory.supersede(first.id, second.id, "changed") is not None  # an event superseded (c and d)
    check(at_most=2)
    merge = memory.merge(c.id, d.id, "same file")  # an alias: far's page names c for d, y's for e
    assert merge is not None
    check()
    memory.append([event("d.py seen again", T0 + DAY, entities=(d,))])  # on a merged member: c's page
    check(at_most=4)
    assert memory.unmerge(merge.id, "not the same") is not None
    check()
    ghost = entity_id("file", "ghost.py")  # an edge to an entity whose record comes later
    memory.append([Edge(Edge.make_id(far.id, "uses", ghost, prov(T0)), far.id, ghost, "uses", prov(T0))])
    check()
    memory.append([Entity(ghost, "file", "ghost.py", provenance=prov(T0))])  # far's page now names it
    check()
    waiting = edge(b, "uses", new, T0 + 3 * DAY, session="s2")  # a patch written before its record
    retired = memory.current_edges(src=far.id, relation="uses")
    target = next(e for e in retired if e.to_id == c.id)
    with (root / EDGES_LOG).open("ab") as fh:
        fh.write(_line(Patch(target.id, waiting.id, T0 + 3 * DAY, "later")) + b"\n")
    memory.refresh()
    check()
    memory.append([waiting])
    check()
    shown["s9"] = False  # a session made private: its entity and edge leave the pages
    check()
    assert "secret" not in b"".join(_pages(root).values()).decode()
    shown["s9"] = True
    check()
    memory.close()


def test_a_subset_without_a_base_keeps_every_other_page_checked_later(tmp_path: Path):
    root = tmp_path / "memory"
    memory = MemoryStore(root, durable=False)
    a, b = entity("file", "a.py"), entity("file", "b.py")
    memory.append([a, b, edge(a, "uses", b, T0)])
    write_views(memory, [a.id])  # no base yet: only a's page, and no base is kept
    memory.append([event("b.py changed", T0, entities=(b,))])
    write_views(memory)
    assert _pages(root) == _rebuilt(root, tmp_path, {})
    memory.close()
