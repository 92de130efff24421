"""memory_usage: "what did this project cost this week?" over the usage index."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.registry import call
from tests.backend.usage.helpers import add_reply, at, claude_usage


@pytest.fixture(autouse=True)
def utc_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    work = tmp_path / "shop"
    work.mkdir()
    project = home.projects.resolve_project(work, "shop")
    add_reply(home, "s-shop", "2025-10-06 10:00", "claude-sonnet-4-5", claude_usage(1_000, 2_000, 10_000, 100_000))
    add_reply(home, "s-old", "2025-09-01 10:00", "claude-sonnet-4-5", claude_usage(5, 5))
    add_reply(home, "s-secret", "2025-10-07 10:00", "gpt-5", claude_usage(8_000, 500))
    for sid in ("s-shop", "s-old", "s-secret"):
        home.sessions.update_session(sid, project_id=project.id)
    home.sessions.update_session("s-secret", title="acme contract", private=True)
    add_reply(home, "s-elsewhere", "2025-10-07 12:00", "gpt-5", claude_usage(100, 100))
    home.usage.update()
    return home


def test_this_project_this_week(home: Home) -> None:
    recall = recall_for(home, project="shop", now=at("2025-10-08 12:00"))
    reply = call(recall, "memory_usage", {"since": "2025-10-06"})
    assert reply["project"] != "all"
    assert [d["date"] for d in reply["daily"]] == ["2025-10-06", "2025-10-07"]
    # Sonnet 4.5 ($3 in, $3.75 cache write, $0.30 cache read, $15 out) + GPT-5 ($1.25 in, $10 out) per MTok
    expected = (1_000 * 3 + 2_000 * 15 + 10_000 * 3.75 + 100_000 * 0.3 + 8_000 * 1.25 + 500 * 10) / 1e6
    assert reply["totals"]["totalCost"] == pytest.approx(expected)
    assert reply["totals"]["totalTokens"] == 113_000 + 8_500  # the private session counts here


def test_all_projects_and_sessions_never_name_a_private_one(home: Home) -> None:
    recall = recall_for(home, project="shop", now=at("2025-10-08 12:00"))
    reply = call(recall, "memory_usage", {"report": "session", "project_id": "all"})
    ids = {row["sessionId"] for row in reply["sessions"]}
    assert ids == {"s-shop", "s-old", "(private)", "s-elsewhere"}
    assert "acme" not in str(reply) and "s-secret" not in str(reply)


def test_bad_arguments_and_a_missing_index(home: Home, tmp_path: Path) -> None:
    recall = recall_for(home, project="shop")
    assert call(recall, "memory_usage", {"report": "yearly"})["error"]["code"] == "bad_argument"
    assert (
        call(recall, "memory_usage", {"since": "2025-10-08", "until": "2025-10-01"})["error"]["code"] == "bad_argument"
    )
    empty = Home(tmp_path / "empty", durable=False)
    empty.ensure()
    reply = call(recall_for(empty, cwd=tmp_path), "memory_usage", {})
    assert reply["daily"] == [] and "opmem usage" in reply["note"]
    assert not empty.usage.path.exists()  # the tool built nothing
