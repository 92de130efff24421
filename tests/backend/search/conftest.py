"""Stores for the search tests: real sessions (node files + git) and real memory logs in tmp_path."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from backend.home import Home
from backend.memory.records import Edge, Entity, Event, entity_id
from backend.model import Provenance

DAY = 86400.0
T0 = 1_700_000_000.0  # 2023-11-14


def add_chat(
    home: Home,
    session_id: str,
    exchanges: Sequence[tuple[str, str]],
    *,
    start: float = T0,
    speakers: tuple[str, str] | None = None,
    project_id: str = "",
) -> list[str]:
    """A session of (user, assistant) exchanges, one commit per turn; returns the node ids in order."""
    store = home.sessions
    ids: list[str] = []
    when = start
    for user_text, reply in exchanges:
        meta = {"project_id": project_id} if project_id else None
        u = store.append_message(
            session_id,
            "user",
            user_text,
            created_at=when,
            metadata={"speaker": speakers[0]} if speakers else None,
            session_meta=meta,
        )
        a = store.append_message(
            session_id,
            "assistant",
            reply,
            created_at=when + 1,
            metadata={"speaker": speakers[1]} if speakers else None,
        )
        store.commit_turn(session_id)
        ids += [u.id, a.id]
        when += 60
    return ids


def provenance(session_id: str, node_ids: Sequence[str], when: float, turn: int | None = 1) -> Provenance:
    return Provenance("", session_id, tuple(node_ids), None, when, when + 5, turn)


def write_log(path: Path, records: Sequence[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        for record in records:
            data = record.to_json() if hasattr(record, "to_json") else record
            out.write(json.dumps(data) + "\n")


def event(summary: str, session_id: str, node_ids: Sequence[str], when: float, **kw: object) -> Event:
    prov = provenance(session_id, node_ids, when)
    return Event(Event.make_id(summary, "event", prov), summary, "event", 0.5, prov, **kw)


def entity(kind: str, name: str, aliases: Sequence[str] = ()) -> Entity:
    return Entity(entity_id(kind, name), kind, name, tuple(aliases))


def edge(src: str, relation: str, dst: str, session_id: str, node_ids: Sequence[str], when: float) -> Edge:
    prov = provenance(session_id, node_ids, when)
    return Edge(Edge.make_id(src, relation, dst, prov), src, dst, relation, prov)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home", durable=False)
    h.ensure()
    yield h
    h.search_index.close()


@pytest.fixture
def coding_home(home: Home) -> Home:
    """Three sessions: two in project p1, one global; a tool call with a path and a command."""
    add_chat(
        home,
        "s-port",
        [
            ("the worker listens on which port?", "The worker listens on port 18109, set in config/worker.toml."),
            ("change it to 18110 please", "Done: config/worker.toml now says 18110."),
        ],
        project_id="p1",
    )
    store = home.sessions
    u = store.append_message("s-tests", "user", "run the failing tests", created_at=T0 + 10 * DAY)
    a = store.append_message("s-tests", "assistant", "", created_at=T0 + 10 * DAY + 1)
    store.append_message(
        "s-tests",
        "tool",
        "3 failed",
        called_by=a.id,
        name="Bash",
        input={"command": "pytest tests/backend/store -x", "description": "run tests"},
        created_at=T0 + 10 * DAY + 2,
    )
    store.append_message("s-tests", "assistant", "Three tests fail in the packwriter.", created_at=T0 + 10 * DAY + 3)
    store.commit_turn("s-tests")
    add_chat(
        home,
        "s-garden",
        [("what should I plant in spring?", "Tomatoes and basil do well after the last frost.")],
        start=T0 + 20 * DAY,
        project_id="p2",
    )
    assert u.id
    return home
