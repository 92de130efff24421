"""Stage 5 skips what did not change: an entity view whose inputs are the same is neither
rendered nor rewritten (same inode and mtime), a changed one is, and a lost or edited state
never leaves a stale page."""

from __future__ import annotations

from opmem_tui.backend.distill.pipeline import run
from opmem_tui.backend.distill.project import project_all, views_stamp
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.records import Edge, Entity, entity_id
from opmem_tui.backend.memory.views import VIEWS_STATE, render_entity_view, view_path, write_views
from opmem_tui.backend.model import Provenance

from .conftest import Chat


def _distilled(home: Home) -> None:
    chat = Chat(home, "s1")
    chat.user("the worker should listen on port 18109 from now on")
    chat.reply("Done.")
    chat.tool("Edit", {"file_path": "/work/proj/worker.py", "old_string": "4000", "new_string": "18109"})
    chat.tool("Bash", {"command": "pytest -q tests"}, "==== 3 passed in 0.1s ====")
    chat.commit()
    run(home)


def _marks(home: Home) -> dict[str, tuple[int, int]]:
    folder = home.memory_dir / "graph" / "views" / "entity"
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.md")}


def _entity_named(home: Home, name: str) -> str:
    [found] = [e for e in home.memory.entity_records() if e.name == name]
    return found.id


def _new_edge(home: Home, src: str, name: str) -> None:
    prov = Provenance("", "s1", (), None, 1_700_000_000.0, 1_700_000_001.0, 1)
    target = Entity(id=entity_id("concept", name), type="concept", name=name, provenance=prov)
    edge = Edge(id=Edge.make_id(src, "uses", target.id, prov), from_id=src, to_id=target.id, relation="uses",
                provenance=prov)  # fmt: skip
    home.memory.append([target, edge])


def test_a_sleep_with_nothing_new_renders_no_view_and_rewrites_none(home: Home):
    _distilled(home)
    before = _marks(home)
    assert len(before) >= 3
    stamp = views_stamp(home)
    assert stamp and stamp == views_stamp(home)
    result = write_views(home.memory, None, stamp)
    assert (result.written, result.rendered, result.unchanged) == (0, 0, len(before))
    project_all(home, None)
    assert _marks(home) == before


def test_only_the_view_whose_inputs_changed_is_rewritten(home: Home):
    _distilled(home)
    before = _marks(home)
    worker = _entity_named(home, "worker.py")
    _new_edge(home, worker, "a new helper")
    project_all(home, None)
    after = _marks(home)
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {view_path(home.memory_dir, worker).name}
    assert "a new helper" in view_path(home.memory_dir, worker).read_text(encoding="utf-8")
    assert view_path(home.memory_dir, entity_id("concept", "a new helper")).name in after


def test_without_a_stamp_the_inputs_hash_still_spares_rendering(home: Home):
    _distilled(home)
    first = write_views(home.memory, None)
    again = write_views(home.memory, None)
    assert again.rendered == 0 and again.written == 0 and again.unchanged == first.written + first.unchanged


def test_a_page_edited_or_deleted_outside_is_rendered_again(home: Home):
    _distilled(home)
    stamp = views_stamp(home)
    worker = _entity_named(home, "worker.py")
    page = view_path(home.memory_dir, worker)
    good = page.read_text(encoding="utf-8")
    page.write_text("tampered\n", encoding="utf-8")
    assert write_views(home.memory, None, stamp).written == 1
    assert page.read_text(encoding="utf-8") == good
    page.unlink()
    assert write_views(home.memory, None, stamp).written == 1
    assert page.read_text(encoding="utf-8") == render_entity_view(home.memory, worker)


def test_a_lost_or_corrupt_state_file_only_costs_a_render(home: Home):
    _distilled(home)
    before = _marks(home)
    state = home.memory_dir / VIEWS_STATE
    for damage in (b"{not json", b""):
        state.write_bytes(damage)
        result = write_views(home.memory, None, views_stamp(home))
        assert result.written == 0 and result.rendered == len(before)
    state.unlink()
    worker = _entity_named(home, "worker.py")
    _new_edge(home, worker, "another helper")  # changed while the state was gone
    project_all(home, None)
    assert "another helper" in view_path(home.memory_dir, worker).read_text(encoding="utf-8")
    assert _marks(home)[view_path(home.memory_dir, worker).name] != before[view_path(home.memory_dir, worker).name]


def test_a_new_or_deleted_session_changes_the_stamp(home: Home):
    _distilled(home)
    stamp = views_stamp(home)
    chat = Chat(home, "s2")
    chat.user("hello there")
    chat.commit()
    assert views_stamp(home) != stamp
    second = views_stamp(home)
    home.sessions.delete_session("s2")
    assert views_stamp(home) not in (stamp, second)
