"""Palette import commands: one per importer, run as a cancellable job with progress."""

from __future__ import annotations

import json
from pathlib import Path

from textual.worker import get_current_worker

from opmem_tui.backend import importers
from opmem_tui.jobs import Jobs
from opmem_tui.screens.search import SearchScreen
from opmem_tui.widgets.job_bar import JobBar
from opmem_tui.widgets.session_list import SessionList

from .conftest import press, settle, wait_until
from .test_palette import palette_hits, run_command


def claude_session(folder: Path, index: int, question: str = "") -> None:
    """A minimal Claude Code transcript: one prompt, one reply."""
    session = f"00000000-0000-4000-8000-{index:012d}"
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/tmp/x",
        "sessionId": session,
        "version": "2.1.40",
        "gitBranch": "main",
    }
    records = [
        {
            **base,
            "parentUuid": None,
            "type": "user",
            "uuid": f"u-{index}",
            "timestamp": "2025-12-30T10:00:00.000Z",
            "message": {"role": "user", "content": question or f"imported question {index}"},
        },
        {
            **base,
            "parentUuid": f"u-{index}",
            "type": "assistant",
            "uuid": f"a-{index}",
            "timestamp": "2025-12-30T10:00:05.000Z",
            "requestId": "req_1",
            "message": {
                "model": "claude-test-1",
                "id": f"msg_{index}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": f"imported answer {index}"}],
                "stop_reason": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
    ]
    path = folder / "projects" / "-tmp-x" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


async def test_palette_offers_one_import_per_source(app):
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.screen.palette_commands()]
        assert "Import sessions: Claude Code" in titles
        imports = [t for t in titles if t.startswith("Import sessions: ")]
        assert len(imports) == len(list(importers.SOURCES)) >= 2


async def test_import_claude_sessions_from_the_palette(app, tmp_path, monkeypatch):
    claude_home = tmp_path / "claude"
    for index in range(3):
        claude_session(claude_home, index)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_home))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "import sessions: claude")
        for _ in range(100):
            await settle(pilot, 1)
            if not app.screen.query_one(JobBar).has_class("-running"):
                break
        table = app.screen.query_one(SessionList).table
        assert len(table.rows) == 8
        assert any("3 new sessions" in n.message for n in app.notes if n.title == "Import")


async def test_a_running_import_can_be_cancelled(app, tmp_path, monkeypatch):
    claude_home = tmp_path / "claude"
    for index in range(150):
        claude_session(claude_home, index)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_home))
    # 150 files import in a blink now: hold the job after its first file until ctrl+x, so the
    # cancel reaches a job that is still running (the importer's own loop then stops).
    report_progress = Jobs.report_progress

    def held(self, done, total, label=""):
        report_progress(self, done, total, label)
        if done == 1:
            get_current_worker().cancelled_event.wait(60)  # a hang guard only: the test presses ctrl+x

    monkeypatch.setattr(Jobs, "report_progress", held)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"import sessions: claude")
        await palette_hits(pilot, "import sessions: claude")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.query_one(JobBar).has_class("-running"), "the import job running")
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: not app.screen.query_one(JobBar).has_class("-running"), "the job ended")
        await settle(pilot)
        messages = [n.message for n in app.notes if n.title == "Import"]
        assert messages and "cancelled" in messages[-1]
        assert len(app.screen.query_one(SessionList).table.rows) < 5 + 150
        assert len(app.screen.query_one(SessionList).table.rows) <= 5 + 2


async def test_sessions_imported_from_the_palette_are_found_by_search_everywhere(app, tmp_path, monkeypatch):
    """The palette's import runs the same ingest hooks as `opmem import`: the search index takes
    the new session in at once (no `opmem index rebuild`)."""
    claude_home = tmp_path / "claude"
    claude_session(claude_home, 7, question="How do I ship the marmalade exporter?")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_home))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        assert app.data.memory.search("marmalade").hits == ()  # the index now exists, without it
        await run_command(pilot, "import sessions: claude")
        await wait_until(pilot, lambda: any(n.title == "Import" for n in app.notes), "the import's report")
        await settle(pilot)
        await press(pilot, "ctrl+f")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        screen.input.cursor_blink = False
        await pilot.press(*"marmalade")
        await wait_until(
            pilot, lambda: screen.results is not None and screen.results.query == "marmalade", "search results"
        )
        hits = screen.results.hits
        assert [h.session_id for h in hits if h.kind == "turn"] == ["cc-00000000-0000-4000-8000-000000000007"]


async def test_palette_import_writes_the_git_mirror_in_the_background(app, tmp_path, monkeypatch):
    """Browsable once the job ends; the mirror follows on the app's mirror thread, one commit per turn."""
    claude_home = tmp_path / "claude"
    for index in range(2):
        claude_session(claude_home, index)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_home))
    store = app.home.sessions
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await run_command(pilot, "import sessions: claude")
        await wait_until(pilot, lambda: any(n.title == "Import" for n in app.notes), "the import's report")
        imported = [m.id for m in store.list_sessions().sessions if m.id.startswith("cc-00000000")]
        assert len(imported) == 2
        # idle, not only no markers left: a marker goes inside the run, its report once the run ends
        await wait_until(
            pilot, lambda: not store.pending_mirrors() and app.data.mirrors.wait(0), "the background mirror written"
        )
        assert app.data.mirrors.report.commits == 2  # written by the mirror thread, not by the import
        assert all(store.get_turns(sid)[0].commit for sid in imported)


async def test_the_app_writes_a_mirror_an_interrupted_import_left(app, tmp_path):
    import subprocess
    import sys

    from opmem_tui.backend.store.writers import process_start

    store = app.home.sessions
    with store.batch("left-behind", defer_mirror=True) as batch:
        user = batch.append("user", "a question left uncommitted", node_id="u1")
        batch.append("assistant", "its answer", parent_id=user.id, node_id="a1")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (store.locks_dir / "left-behind.mirror").write_text(json.dumps({"pid": dead.pid, "start": process_start(dead.pid)}))
    assert store.mirror_pending("left-behind") == "orphan"
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: not store.pending_mirrors(), "the orphaned mirror written")
    assert [c.turn for c in store.session_commits("left-behind")] == [1]
