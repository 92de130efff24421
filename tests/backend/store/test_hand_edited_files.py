"""Hand-edited store files: JSON nested deeper than Python's recursion limit, and a path that
cannot be encoded, are errors naming the file (they raised RecursionError / UnicodeEncodeError)."""

from __future__ import annotations

import pytest

from opmem_tui.backend.distill.state import load_state
from opmem_tui.backend.home import Home
from opmem_tui.backend.model import CorruptFile

DEEP = b'{"a":' * 100_000 + b"1" + b"}" * 100_000


@pytest.fixture
def home(tmp_path) -> Home:
    home = Home(tmp_path / "home")
    for sid in ("alpha", "beta"):
        home.sessions.append_message(sid, "user", f"hello {sid}")
        home.sessions.commit_turn(sid)
    return Home(home.path)


def test_deep_meta_json_is_a_listing_problem(home: Home) -> None:
    (home.sessions.path_for("alpha") / "meta.json").write_bytes(DEEP)
    listing = home.sessions.list_sessions(rescan=True)
    assert [m.id for m in listing.sessions] == ["beta"]
    assert "alpha/meta.json: JSON nested too deeply" in listing.problems[0]
    with pytest.raises(CorruptFile, match=r"meta\.json"):
        home.sessions.get_turns("alpha")


def test_deep_node_file_is_a_session_problem(home: Home) -> None:
    node = next((home.sessions.path_for("alpha") / "history").glob("*.json"))
    node.write_bytes(DEEP)
    home.sessions.get_turns("alpha")
    assert any(node.name in p and "nested too deeply" in p for p in home.sessions.problems("alpha"))


def test_deep_or_unencodable_locations_json(home: Home) -> None:
    home.sessions.locations_path.write_bytes(DEEP)
    listing = home.sessions.list_sessions(rescan=True)
    assert {m.id for m in listing.sessions} == {"alpha", "beta"}
    assert any("locations.json" in p for p in listing.problems)
    home.sessions.locations_path.write_text('{"gamma": "/tmp/\\ud800/gamma"}')
    listing = Home(home.path).sessions.list_sessions(rescan=True)
    assert {m.id for m in listing.sessions} == {"alpha", "beta"}


def test_deep_projects_json_and_distill_state(home: Home) -> None:
    home.projects_dir.mkdir(parents=True, exist_ok=True)
    (home.projects_dir / "projects.json").write_bytes(DEEP)
    with pytest.raises(CorruptFile, match=r"projects\.json: JSON nested too deeply"):
        home.projects.list_projects()
    home.memory_dir.mkdir(parents=True, exist_ok=True)
    (home.memory_dir / "state.json").write_bytes(DEEP)
    with pytest.raises(CorruptFile, match=r"state\.json: JSON nested too deeply"):
        load_state(home.memory_dir)
