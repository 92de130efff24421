"""A store folder removed while a SessionStore still uses it (`opmem demo`'s temporary store) is
not made again: not by a read, not by a write, not by the store's flush when it is collected."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest

from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.store.sessions import SessionStore

from .conftest import add_turn


def test_a_removed_store_folder_is_not_made_again(tmp_path: Path) -> None:
    root = tmp_path / "demo" / "sessions"
    store = SessionStore(root)
    add_turn(store, "s1", "q", "a")
    store.append_message("s1", "user", "open turn")  # the index is behind: a flush would write
    store.get_turns("s1")
    shutil.rmtree(tmp_path / "demo")
    with pytest.raises(OpmemError):
        store.get_turns("s1")
    with pytest.raises(OpmemError, match="removed while opmem was using it"):
        store.append_message("s1", "user", "into the void")
    store.flush()
    del store
    gc.collect()
    assert not (tmp_path / "demo").exists()


def test_a_new_store_is_still_made_on_its_first_write(tmp_path: Path) -> None:
    root = tmp_path / "fresh" / "sessions"
    store = SessionStore(root)
    add_turn(store, "s1", "q", "a")
    assert (root / ".locks").is_dir() and store.get_meta("s1").turn_count == 1
