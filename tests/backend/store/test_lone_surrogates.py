"""Text holding a lone surrogate (a `\\ud800` escape in a JSON transcript reads as one) is stored
as it was: node files, meta.json and commit messages are written, and read back the same."""

from __future__ import annotations

import json

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import

from .conftest import git


def test_node_and_meta_text_with_lone_surrogates_round_trip(tmp_path) -> None:
    home = Home(tmp_path / "home")
    user = home.sessions.append_message("s1", "user", "lone \ud800 here", session_meta={"title": "t \udfff"})
    reply = home.sessions.append_message("s1", "assistant", "ok \udc00")
    assert home.sessions.commit_turn("s1")
    home.sessions.rename_session("s1", "renamed \ud83d")
    again = Home(home.path)
    assert again.sessions.get_node("s1", user.id).content == "lone \ud800 here"
    assert again.sessions.get_node("s1", reply.id).content == "ok \udc00"
    assert again.sessions.get_meta("s1").title == "renamed \ud83d"
    path = again.sessions.path_for("s1")
    for file in (path / "history").glob("*.json"):
        json.loads(file.read_bytes().decode("utf-8"))  # valid UTF-8 JSON
    again.sessions.flush()
    git(path, "fsck", "--strict")  # raises on a problem


def test_a_native_session_id_with_a_lone_surrogate_is_imported_whole(tmp_path) -> None:
    """It used to fail at meta.json and leave a session folder without one (listed as broken)."""
    lines = [
        {"session": "\ud800 s1", "id": "m1", "role": "user", "content": "first"},
        {"session": "\ud800 s1", "id": "m2", "role": "assistant", "content": "second"},
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    home = Home(tmp_path / "home")
    report = run_import(home, "jsonl", [path], bind=False)
    assert report.warnings == []
    listing = home.sessions.list_sessions()
    assert listing.problems == ()
    (meta,) = listing.sessions
    assert [n.content for n in home.sessions.get_nodes(meta.id)] == ["first", "second"]
