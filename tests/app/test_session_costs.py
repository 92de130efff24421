"""A session's cost in the session list (a Cost column once the usage index has any) and in its
replay header; a model the price table lacks shows "?", never $0."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.widgets.replay_view import ReplayHeader, ReplayPane
from opmem_tui.widgets.session_table import SessionTable
from tests.backend.usage.helpers import add_reply, claude_usage

from .conftest import make_app, settle, wait_until


@pytest.fixture
def usage_home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    # Claude Sonnet 4.5: $3 in, $3.75 cache write, $0.30 cache read, $15 out per MTok -> $0.1005
    add_reply(home, "priced", "2025-12-30 10:00", "claude-sonnet-4-5", claude_usage(1_000, 2_000, 10_000, 100_000))
    add_reply(home, "unpriced", "2025-12-31 10:00", "synthetic-glued-model", claude_usage(500, 50), source="qwen")
    home.usage.update()
    return home


async def test_cost_column_and_header(usage_home: Home) -> None:
    app = make_app(usage_home)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await wait_until(pilot, lambda: bool(table.costs), "costs listed")
        assert "Cost" in table.header_text(120)
        rows = {meta.id: meta for meta in table.rows}
        assert table.cell_text(rows["priced"], "cost", 0) == "$0.10"
        assert table.cell_text(rows["unpriced"], "cost", 0) == "?"
        replay = app.screen.query_one(ReplayPane)
        await wait_until(pilot, lambda: replay.cost is not None, "the open session's cost")
        header = str(replay.query_one(ReplayHeader).render())
        opened = replay.session_id
        expected = "114k tokens $0.10" if opened == "priced" else "550 tokens ?"
        assert expected in header


async def test_no_index_no_cost_column(tmp_path: Path) -> None:
    home = Home(tmp_path / "plain", durable=False)
    home.ensure()
    add_reply(home, "s", "2025-12-30 10:00", "claude-sonnet-4-5", claude_usage(10, 10))
    home.usage.path.unlink(missing_ok=True)  # the listing never builds the index
    app = make_app(home)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionTable)
        await wait_until(pilot, lambda: bool(table.rows), "listed")
        assert not table.costs and "Cost" not in table.header_text(120)
        assert not home.usage.path.exists()
