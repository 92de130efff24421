"""Entity views and slugs: safe one-to-one file names, inert Markdown, the sections a page holds."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.memory.records import Entity
from opmem_tui.backend.memory.slugs import safe_name
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.memory.views import VIEWS_DIR, render_entity_view, view_path, write_views

from .sample import DAY, T0, edge, entity, event, prov

RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
HOSTILE = [
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "a/b",
    "a-b",
    "a\\b",
    "a\x00b",
    "a",
    "A",
    "CON",
    "con",
    "Con.txt",
    "nul.md",
    "LPT1",
    "com1.py",
    ".",
    "..",
    "...",
    ".hidden",
    "",
    " ",
    "x" * 1000,
    "x" * 1001,
    "Zoë",
    "zoe",
    "日本",
    "\ud800",
    "file.backend-x-1234abcd",
    "a_0123456789abcdef",
]


def check_slug(slug: str) -> None:
    assert re.fullmatch(r"[a-z0-9][a-z0-9._-]*", slug), slug
    assert "/" not in slug and "\\" not in slug and "\x00" not in slug and ".." not in slug
    assert not slug.endswith(".") and len(slug) <= 120
    assert slug.split(".", 1)[0] not in RESERVED


def test_hostile_names_give_safe_distinct_slugs():
    slugs = [safe_name(n) for n in HOSTILE]
    for slug in slugs:
        check_slug(slug)
    assert len({s.casefold() for s in slugs}) == len(HOSTILE)  # distinct even case-insensitively
    assert safe_name("file.backend-x-1234abcd") == "file.backend-x-1234abcd"  # plain ids stay readable
    assert safe_name("CON").startswith("con_") and safe_name("a").casefold() != safe_name("A").casefold()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(st.characters(codec=None), max_size=120), min_size=2, max_size=30, unique=True))
def test_slugs_are_safe_and_one_to_one(names):
    slugs = [safe_name(n) for n in names]
    for slug in slugs:
        check_slug(slug)
    assert len({s.casefold() for s in slugs}) == len(names)


def hostile_entity(name: str, kind: str = "concept") -> Entity:
    """An entity whose id is as hostile as its name (ids come from logs too)."""
    return Entity(name, kind, name, (), {}, "global", prov(T0))


def test_views_of_hostile_entities_stay_in_their_folder(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    names = [n for n in HOSTILE if n.strip() and "\ud800" not in n]
    store.append([hostile_entity(n) for n in names])
    result = write_views(store)
    folder = (store.root / VIEWS_DIR).resolve()
    files = sorted(p.name for p in folder.iterdir())
    assert result.written == len(names) == len(files) == len({f.casefold() for f in files})
    assert all(p.resolve().parent == folder for p in store.root.rglob("*.md") if "views" in p.parts)
    assert not (tmp_path / "x.md").exists() and not (tmp_path / "etc").exists()
    assert write_views(store).unchanged == len(names)  # unchanged pages are not rewritten
    for name in names:
        assert view_path(store.root, name).resolve().parent == folder


def test_untrusted_text_is_inert_markdown(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    evil = entity("concept", "\x1b[31m[click](http://evil)\x1b[0m <script>x</script> *bold* `code`\nnext line")
    other = entity("concept", "plain")
    store.append([evil, other, edge(evil, "links-to", other, T0)])
    store.append([event("said **loudly** \x1b]0;title\x07 [x](y)", T0, entities=(evil,))])
    page = render_entity_view(store, evil.id)
    assert "\x1b" not in page and "\x07" not in page
    assert "[click](http" not in page and "\\[click\\]" in page
    assert "<script>" not in page and "\\<script\\>" in page and "\\*bold\\*" in page
    title = page.splitlines()[0]
    assert title.startswith("# ") and "next line" in title  # the newline did not start a new block
    assert "\\*\\*loudly\\*\\*" in page


def test_a_page_holds_aliases_relations_history_mentions_and_sources(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    worker = entity("service", "worker", aliases=("the worker",), lang="python")
    alias = entity("service", "wrk")
    old_port, new_port = entity("port", ":8080"), entity("port", ":9090")
    old = edge(worker, "listens-on", old_port, T0)
    new = edge(alias, "listens-on", new_port, T0 + 10 * DAY)
    store.append([worker, alias, old_port, new_port, old, new])
    store.supersede(old.id, new.id, "listens-on is single-valued", at=T0 + 10 * DAY)
    merge = store.merge(worker.id, alias.id, "acronym of worker", 0.91, at=T0 + 11 * DAY)
    store.append([event("Moved the worker to :9090", T0 + 10 * DAY, entities=(alias,), session="s2")])
    page = render_entity_view(store, worker.id)
    assert page.startswith("# worker\n")
    assert "- Type: service" in page and "lang: python" in page
    assert "- wrk: merged 2026-06-08, acronym of worker (score 0.91)" in page
    assert "- the worker: also written this way" in page
    current = page.split("## Current relations")[1].split("##")[0]
    assert "──listens-on──► [:9090](port.9090-" in current and ":8080" not in current
    history = page.split("## History (superseded)")[1].split("##")[0]
    assert ":8080" in history and "2026-05-28 → 2026-06-07, superseded: listens-on is single-valued" in history
    assert "2026-06-07 Moved the worker to :9090 ↪ session:s2" in page
    assert "↪ session:s1" in page.split("## Sources")[1]
    assert render_entity_view(store, alias.id).startswith("# wrk\n\nMerged into [worker](")
    store.unmerge(merge.id, "not the same service", at=T0 + 12 * DAY)
    page = render_entity_view(store, worker.id)
    assert "; undone 2026-06-09: not the same service" in page
    assert "Merged into" not in render_entity_view(store, alias.id)
