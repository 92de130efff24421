"""EntityFinder: fuzzy names and aliases, merged names folding onto their entity, and a reload
when new entities are appended."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.memory.entity_finder import EntityFinder
from opmem_tui.backend.memory.store import MemoryStore

from .sample import entity


def test_fuzzy_names_aliases_and_merges(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    middleware = entity("file", "src/auth/middleware.py")
    dotted = entity("file", "./src/auth/middleware.py")
    pg = entity("tool", "PostgreSQL", aliases=("postgres",))
    store.append([middleware, dotted, pg, entity("person", "Ann")])
    store.merge(middleware.id, dotted.id, "same path", score=0.9)
    finder = EntityFinder(store)

    found = finder.find("middlewar")
    assert found[0].id == middleware.id and found[0].matched == ""
    assert [m.id for m in found].count(middleware.id) == 1  # the merged record folds onto it
    via_merge = finder.find("./src/auth/middleware.py")
    assert via_merge[0].id == middleware.id and via_merge[0].name == "src/auth/middleware.py"
    alias = finder.find("postgres")
    assert alias[0].id == pg.id and alias[0].matched == "postgres"
    assert finder.find("") == () and finder.find("zzzzqqq") == ()
    assert len(finder.find("a", limit=1)) <= 1

    store.append([entity("service", "billing-api")])
    assert finder.find("billing")[0].name == "billing-api"  # the log changed: reloaded


def test_empty_memory_finds_nothing(tmp_path: Path):
    assert EntityFinder(MemoryStore(tmp_path / "memory")).find("anything") == ()
