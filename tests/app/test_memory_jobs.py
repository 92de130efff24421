"""The palette's memory jobs on the job bar (distil now, deep sleep, rebuild the index, undo an
alias merge, install the hooks), ctrl+x cancelling a distillation at a batch edge, and the idle
distillation while the app runs."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from opmem_tui.screens.confirm import ConfirmScreen
from opmem_tui.screens.pick_merge import PickMergeScreen

from .conftest import make_app, press, settle, wait_until
from .memory_sample import MERGED_NAME, distil_sample
from .test_palette import run_command


def titles(app) -> list[str]:
    return [c.title for c in app.screen.palette_commands()]


async def test_distil_now_fills_the_memory_tab(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        assert "Distil now: this session (rules)" in titles(app)
        assert "Distil now: all sessions (LLM)" not in titles(app)  # no LLM configured: not offered
        await run_command(pilot, "Distil now: all sessions (rules)")
        await wait_until(pilot, lambda: any(n.title == "Distilling" for n in app.notes), "the run's report")
        note = next(n for n in app.notes if n.title == "Distilling")
        assert note.message.startswith("distilled ") and note.severity == "information"
        assert sample_home.memory.stats().events > 0
        await press(pilot, "3", "t")
        await settle(pilot)
        assert app.screen.query_one("TimelineView").events


async def test_ctrl_x_stops_a_distillation_at_a_batch_edge(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await cancel_a_held_distillation_with_ctrl_x(app, pilot, sample_home)


async def cancel_a_held_distillation_with_ctrl_x(app, pilot, home) -> None:
    """Starts a distillation that waits at its first step, presses ctrl+x wherever the focus is,
    and checks the run stopped at a batch edge."""
    reached, release = threading.Event(), threading.Event()

    def hold(status) -> None:  # the distiller thread waits at its first step until the test says
        if status.running and status.progress is not None and not reached.is_set():
            reached.set()
            release.wait(60)

    home.distiller.listeners.append(hold)
    app.screen.jobs.start_distil(None, False)
    await wait_until(pilot, reached.is_set, "the run under way")
    assert app.screen.jobs.running
    await pilot.press("ctrl+x")
    await wait_until(pilot, lambda: home.distiller._job.cancel.is_set(), "the cancel passed on")
    release.set()
    await wait_until(pilot, lambda: not app.screen.jobs.running, "the job over")
    note = next(n for n in app.notes if n.title == "Distilling")
    assert "Cancelled at a batch edge" in note.message


async def test_ctrl_x_cancels_from_a_text_box_too(sample_home):
    """The job bar says "ctrl+x cancels" wherever the focus is. In a text box (the entity finder,
    reached with `/`; the filters) ctrl+x cancels the job rather than cutting text; with no job
    running it is the box's own cut again."""
    from opmem_tui.widgets.graph_explorer import GraphExplorer

    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "3", "g", "slash")
        finder = app.screen.query_one(GraphExplorer).finder
        assert app.focused is finder
        await cancel_a_held_distillation_with_ctrl_x(app, pilot, sample_home)
        finder.value = "middleware"
        finder.select_all()
        await press(pilot, "ctrl+x")
        assert finder.value == ""  # no job: the text box cut its selection


async def test_a_distillation_the_disk_refuses_says_which_file_and_why(sample_home):
    """The disk refuses a file the run needs (a read-only file system, a folder in the way): the
    error names the file within the store and the reason, not a Python exception class."""
    (sample_home.memory_dir / ".distill.lock").mkdir(parents=True)  # the run's lock cannot be opened
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await run_command(pilot, "Distil now: all sessions (rules)")
        await wait_until(pilot, lambda: any(n.title == "Distilling" for n in app.notes), "the run's end")
        note = next(n for n in app.notes if n.title == "Distilling")
        assert note.severity == "error"
        assert note.message == "distillation failed: memory/.distill.lock: Is a directory"


async def test_the_first_distillation_takes_the_focus_from_the_empty_list_to_the_graph(sample_home):
    """An empty memory's graph view has the focus on its (empty) list of entities, never in the
    finder: c, t, +, ... act instead of typing into a box. Once ctrl+p → Distil now fills it,
    the focus is on the graph as when the tab opens on a memory."""
    from opmem_tui.widgets.graph_explorer import GraphExplorer

    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "3", "g")
        graph = app.screen.query_one(GraphExplorer)
        assert app.focused is graph.matches
        await run_command(pilot, "Distil now: all sessions (rules)")
        await wait_until(pilot, lambda: graph.center is not None and graph.tree.display, "the graph shown")
        await settle(pilot)
        assert app.focused is graph.tree
        await press(pilot, "c")
        assert app.screen.query_one("#memory-views").active == "memory-core"
        assert graph.finder.value == ""


async def test_deep_sleep_and_index_rebuild(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await run_command(pilot, "Rebuild the search index")
        await wait_until(pilot, lambda: any(n.title == "Search index" for n in app.notes), "rebuilt")
        assert "sessions" in next(n for n in app.notes if n.title == "Search index").message
        assert sample_home.search_index.path.exists()
        await run_command(pilot, "Deep sleep")
        await wait_until(pilot, lambda: any(n.title == "Deep sleep" for n in app.notes), "slept")
        assert next(n for n in app.notes if n.title == "Deep sleep").message.startswith("slept")


async def test_undo_an_alias_merge(sample_home):
    distil_sample(sample_home)
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await run_command(pilot, "Undo an alias merge")
        await wait_until(pilot, lambda: isinstance(app.screen, PickMergeScreen), "the merges listed")
        choice = next(c for c in app.screen.choices if c.merged.name == MERGED_NAME)
        app.screen.query_one("OptionList").highlighted = app.screen.choices.index(choice)
        await press(pilot, "enter")
        await settle(pilot)
        assert any("is its own entity again" in n.message for n in app.notes)
        infos = sample_home.memory.aliases(choice.into.id)
        assert not next(i for i in infos if i.merge.id == choice.merge_id).active


async def test_install_hooks_asks_then_writes_claude_settings(sample_home):
    app = make_app(sample_home)
    settings = Path.home() / ".claude" / "settings.json"
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await run_command(pilot, "Install agent hooks")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "n")
        assert not settings.exists()
        await run_command(pilot, "Install agent hooks")
        await press(pilot, "y")
        await settle(pilot)
        hooks = json.loads(settings.read_text())["hooks"]
        assert "PreCompact" in hooks and "SessionEnd" in hooks
        assert "flush --hook claude" in json.dumps(hooks)
        assert any(n.title == "Hooks" and "~/.claude/settings.json" in n.message for n in app.notes)


async def test_idle_sessions_are_distilled_while_the_app_runs(sample_home):
    app = make_app(sample_home, idle_distil=0.05)  # the sample's sessions are long idle
    async with app.run_test(size=(140, 36)) as pilot:
        # a store never slept gets the daily sleep first (it distils too), then idle runs
        distiller = sample_home.distiller
        await wait_until(pilot, lambda: distiller.last.kind in ("distil", "sleep", "tick"), "an idle run")
        await wait_until(pilot, lambda: not distiller.busy, "the run over")
        assert distiller.last.error == ""
        assert sample_home.memory.stats().events > 0
