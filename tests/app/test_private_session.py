"""The palette's "Make this session private" / "Make this session public again" in the real app."""

from __future__ import annotations

from opmem_tui.backend.distill.pipeline import run
from opmem_tui.backend.privacy.exclusions import is_private
from opmem_tui.widgets.session_list import SessionList
from opmem_tui.widgets.session_table import PRIVATE_MARK

from .conftest import make_app, notes, settle, wait_until
from .sample_store import fresh_home
from .test_palette import run_command


def docs_records(home) -> tuple[int, bool]:
    """(events of the docs session in the current memory, whether core.md points at it)."""
    home = fresh_home(home.path)
    events = [e for e in home.memory.timeline(limit=None).events if e.provenance.session_id == "docs"]
    return len(events), "session:docs" in (home.memory_dir / "core.md").read_text(encoding="utf-8")


async def test_make_private_from_the_palette_and_public_again(memory_home):
    before = docs_records(memory_home)
    assert before[0] > 0 and before[1]  # the check can fail: the docs session is in the memory
    app = make_app(memory_home)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        assert table.current.id == "docs"
        assert not table.cell_text(table.current, "title", 0).startswith(PRIVATE_MARK)
        titles = [c.title for c in app.screen.palette_commands()]
        assert "Make this session private" in titles and "Make this session public again" not in titles

        await run_command(pilot, "make this session private")
        await wait_until(pilot, lambda: any(n.startswith("Private:") for n in notes(app)), "the private note")
        await settle(pilot)
        assert is_private(fresh_home(memory_home.path).sessions.get_meta("docs"))
        assert docs_records(memory_home) == (0, False)
        await wait_until(pilot, lambda: is_private(table.current), "the listing re-read")
        assert table.current.id == "docs"  # still listed, still open
        assert table.cell_text(table.current, "title", 0).startswith(PRIVATE_MARK)
        titles = [c.title for c in app.screen.palette_commands()]
        assert "Make this session public again" in titles and "Make this session private" not in titles

        await run_command(pilot, "make this session public again")
        await wait_until(pilot, lambda: any(n.startswith("Public again") for n in notes(app)), "the public note")
        await settle(pilot)
        assert not is_private(fresh_home(memory_home.path).sessions.get_meta("docs"))
        await wait_until(pilot, lambda: not is_private(table.current), "the listing re-read")
    run(fresh_home(memory_home.path))
    assert docs_records(memory_home) == before


async def test_sessions_of_an_excluded_project_are_marked_in_the_list(sample_path):
    (sample_path / "config.toml").write_text('[memory]\nexclude_projects = ["compiler"]\n', encoding="utf-8")
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        marked = {m.id for m in table.rows if table.cell_text(m, "title", 0).startswith(PRIVATE_MARK)}
        assert marked == {"parser-refactor"}  # excluded by the project's name; the others as they were
