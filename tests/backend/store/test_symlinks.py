"""A session folder or a node file that is a symbolic link is not followed (it may lead out of the
store): the session is refused with an error naming the link, the node file is a problem."""

from __future__ import annotations

import json
import os

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.model import OpmemError


def test_a_linked_session_folder_is_neither_read_nor_written(tmp_path) -> None:
    other = Home(tmp_path / "other")
    other.sessions.append_message("evil", "user", "outside")
    home = Home(tmp_path / "home")
    home.sessions.append_message("good", "user", "hi")
    os.symlink(other.sessions.path_for("evil"), home.sessions_dir / "evil")
    files = sorted(os.listdir(other.sessions.path_for("evil") / "history"))
    with pytest.raises(OpmemError, match="evil: a symbolic link"):
        Home(home.path).sessions.get_nodes("evil")
    with pytest.raises(OpmemError, match="evil: a symbolic link"):
        Home(home.path).sessions.append_message("evil", "user", "through the link")
    assert sorted(os.listdir(other.sessions.path_for("evil") / "history")) == files


def test_a_linked_node_file_is_not_read(tmp_path) -> None:
    home = Home(tmp_path / "home")
    home.sessions.append_message("good", "user", "hi")
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"id": "zz", "seq": 9, "role": "user", "content": "SECRET", "created_at": 1.0}))
    os.symlink(secret, home.sessions.path_for("good") / "history" / "000009-u-zz.json")
    again = Home(home.path)
    assert [n.content for n in again.sessions.get_nodes("good")] == ["hi"]
    assert any("000009-u-zz.json: a symbolic link" in p for p in again.sessions.problems("good"))
