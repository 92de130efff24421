"""The reports over the usage index and their JSON (ccusage's shape, docs/usage.md)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.backend.usage.blocks import block_json, blocks
from opmem_tui.backend.usage.reports import Filters, query, report_json

from .helpers import add_reply, at, claude_usage, utc_index

TOKEN_FIELDS = [
    "inputTokens",
    "outputTokens",
    "cacheCreationTokens",
    "cacheReadTokens",
    "reasoningTokens",
    "totalTokens",
]


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    add_reply(home, "s1", "2025-10-01 10:00", "claude-sonnet-4-5", claude_usage(1_000, 2_000, 10_000, 100_000))
    add_reply(home, "s1", "2025-10-01 11:00", "claude-sonnet-4-5", claude_usage(1_000, 0))
    add_reply(home, "s2", "2025-10-02 09:00", "synthetic-glued-model", claude_usage(500, 50), source="qwen")
    return home


def test_daily_sums_and_prices_each_day(home: Home) -> None:
    index = utc_index(home)
    with index.connect() as conn:
        result = query(conn, "daily")
    assert [r.key for r in result.rows] == ["2025-10-01", "2025-10-02"]
    first, second = result.rows
    assert (first.usage.input, first.usage.output, first.usage.cache_write, first.usage.cache_read) == (
        2_000,
        2_000,
        10_000,
        100_000,
    )
    assert first.usage.cost == pytest.approx(0.1005 + 1_000 * 3 / 1e6)
    assert second.usage.cost is None and second.usage.total == 550  # unknown: tokens counted, no cost
    assert result.total.cost == pytest.approx(first.usage.cost) and not result.total.cost_complete


def test_daily_json_follows_ccusage(home: Home) -> None:
    with utc_index(home).connect() as conn:
        data = report_json(query(conn, "daily"))
    assert list(data) == ["daily", "totals"]
    day = data["daily"][0]
    assert list(day)[:1] == ["date"] and all(
        k in day for k in [*TOKEN_FIELDS, "totalCost", "modelsUsed", "modelBreakdowns"]
    )
    assert day["modelsUsed"] == ["claude-sonnet-4-5"]
    assert day["modelBreakdowns"][0]["modelName"] == "claude-sonnet-4-5"
    unknown = data["daily"][1]
    assert unknown["totalCost"] is None and unknown["unpricedModels"] == ["synthetic-glued-model"]
    assert unknown["modelBreakdowns"][0]["cost"] is None
    assert data["totals"]["totalTokens"] == sum(d["totalTokens"] for d in data["daily"])
    assert data["totals"]["costComplete"] is False
    json.dumps(data)  # plain JSON


@pytest.mark.parametrize(
    ("kind", "list_key", "row_key", "keys"),
    [
        ("weekly", "weekly", "week", ["2025-09-29"]),
        ("monthly", "monthly", "month", ["2025-10"]),
        ("agent", "agents", "agent", ["claude-code", "qwen"]),
        ("model", "models", "model", ["claude-sonnet-4-5", "synthetic-glued-model"]),
        ("session", "sessions", "sessionId", ["s1", "s2"]),
    ],
)
def test_each_report_groups_by_its_key(home: Home, kind: str, list_key: str, row_key: str, keys: list[str]) -> None:
    with utc_index(home).connect() as conn:
        data = report_json(query(conn, kind))
    assert [row[row_key] for row in data[list_key]] == keys
    assert data["totals"]["totalTokens"] == 2_000 + 2_000 + 10_000 + 100_000 + 550


def test_filters(home: Home) -> None:
    with utc_index(home).connect() as conn:
        assert [r.key for r in query(conn, "daily", Filters(since="2025-10-02")).rows] == ["2025-10-02"]
        assert [r.key for r in query(conn, "daily", Filters(until="2025-10-01")).rows] == ["2025-10-01"]
        assert [r.key for r in query(conn, "agent", Filters(agent="qwen")).rows] == ["qwen"]


def test_blocks_and_the_active_burn_rate(home: Home) -> None:
    index = utc_index(home)
    found = blocks(index, now=at("2025-10-01 12:00"))
    assert len(found) == 1 and found[0].active
    out = block_json(found[0], at("2025-10-01 12:00"))
    assert out["startTime"] == "2025-10-01T10:00:00Z" and out["endTime"] == "2025-10-01T15:00:00Z"
    assert out["entries"] == 2 and out["totalTokens"] == 114_000
    # 114,000 tokens from 10:00:01 to 11:00:01: 60 minutes
    assert out["burnRate"]["tokensPerMinute"] == pytest.approx(114_000 / 60, rel=1e-3)
    assert out["projection"]["remainingMinutes"] == 180


def test_a_gap_of_more_than_five_hours_starts_a_new_block(home: Home) -> None:
    add_reply(home, "s3", "2025-10-01 20:00", "claude-sonnet-4-5", claude_usage(10, 10))
    found = blocks(utc_index(home), now=at("2025-10-03 00:00"))
    assert [(b.gap, b.active) for b in found] == [(False, False), (True, False), (False, False)]


@pytest.fixture
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone is UTC for the test (the CLI reports in local days)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("utc_zone")
def test_cli_json_and_piped_lines(home: Home) -> None:
    from opmem_tui.cli import main

    runner = CliRunner()
    out = runner.invoke(main, ["--home", str(home.path), "usage", "daily", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [d["date"] for d in data["daily"]] == ["2025-10-01", "2025-10-02"]
    piped = runner.invoke(main, ["--home", str(home.path), "usage", "model"])
    lines = piped.stdout.splitlines()
    assert lines[0].split("\t")[:2] == ["Model", "Models"]
    assert any(line.startswith("synthetic-glued-model\t") and line.endswith("\tunknown") for line in lines)
    claude = runner.invoke(main, ["--home", str(home.path), "usage", "agent", "--agent", "claude", "--json"])
    assert [a["agent"] for a in json.loads(claude.stdout)["agents"]] == ["claude-code"]  # the importer's name works
    bad = runner.invoke(main, ["--home", str(home.path), "usage", "--since", "yesterday"])
    assert bad.exit_code != 0 and "YYYY-MM-DD" in bad.output


def test_session_report_hides_a_private_session_title(home: Home) -> None:
    from opmem_tui.backend.usage.labels import labels

    home.sessions.update_session("s2", title="client acme pricing", private=True)
    home.sessions.update_session("s1", title="open work")
    with utc_index(home).connect() as conn:
        result = query(conn, "session")
    names = labels(home, result)
    assert names["s1"]["title"] == "open work"
    assert names["s2"]["title"] == "(private session)"
    assert result.total.total == 114_550  # still counted on this machine


def test_the_index_follows_new_replies_a_binding_and_a_deleted_session(home: Home) -> None:
    index = utc_index(home)
    with index.connect() as conn:
        assert [r.key for r in query(conn, "project").rows] == [""]
    add_reply(home, "s1", "2025-10-03 10:00", "claude-sonnet-4-5", claude_usage(7, 7))
    home.sessions.update_session("s1", project_id="shop")
    index.update(["s1"])
    with index.connect() as conn:
        projects = {r.key: r.usage.total for r in query(conn, "project").rows}
        days = [r.key for r in query(conn, "daily").rows]
    assert projects == {"shop": 114_014, "": 550}
    assert days == ["2025-10-01", "2025-10-02", "2025-10-03"]
    home.sessions.delete_session("s2")
    index.update()
    with index.connect() as conn:
        assert [r.key for r in query(conn, "agent").rows] == ["claude-code"]
        assert conn.execute("SELECT count(*) FROM daily WHERE session_id = 's2'").fetchone()[0] == 0


@pytest.mark.usefixtures("utc_zone")
def test_cli_builds_a_missing_index_with_progress(home: Home) -> None:
    from opmem_tui.cli import main

    home.usage.path.unlink(missing_ok=True)
    out = CliRunner().invoke(main, ["--home", str(home.path), "usage", "agent"])
    assert out.exit_code == 0, out.output
    assert "usage index: 2 sessions read" in out.stderr
    assert home.usage.path.exists() and "claude-code\t" in out.stdout
    again = CliRunner().invoke(main, ["--home", str(home.path), "usage", "--rebuild", "--json"])
    assert again.exit_code == 0 and "usage index: 2 sessions read" in again.stderr
    assert json.loads(again.stdout)["totals"]["totalTokens"] == 114_550


@pytest.mark.usefixtures("utc_zone")
def test_cli_forgets_a_deleted_session(home: Home) -> None:
    from opmem_tui.cli import main

    runner = CliRunner()
    assert runner.invoke(main, ["--home", str(home.path), "usage", "--json"]).exit_code == 0
    home.sessions.delete_session("s2")
    out = runner.invoke(main, ["--home", str(home.path), "usage", "agent", "--json"])
    assert [a["agent"] for a in json.loads(out.stdout)["agents"]] == ["claude-code"]


def test_a_deleted_index_file_is_rebuilt_by_the_next_update(home: Home) -> None:
    from opmem_tui.backend.memory.sqlite_files import remove_database

    index = utc_index(home)
    index.update()
    with index.read() as conn:
        before = query(conn, "daily").total
    remove_database(index.path)  # the user deletes the derived file while the app runs
    report = index.update(["s1"])
    assert report.rebuilt
    with index.read() as conn:
        assert query(conn, "daily").total == before
