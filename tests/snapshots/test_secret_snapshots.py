"""SVG snapshots of the replay over a session full of secrets (tests/app/secret_store.py): every
value drawn as its marker in the theme's warning colour, dark and light; and one message
revealed with `v` (only its values shown, the notification saying so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import _utc, make_app  # noqa: F401
from tests.app.sample_store import fresh_home
from tests.app.secret_store import build_secret_store

from .test_snapshots import SIZE, THEMES, scenario

# Turn 1, the cursor on its bash call, opened: arguments and output (and the title) hold secrets.
OPEN_THE_CALL = ("left", "enter", "j", "j", "enter")


@pytest.fixture
def secret_home():
    path = Path.home() / "store"  # under the test's own $HOME: no temp path reaches the picture
    build_secret_store(path)
    return fresh_home(path)


@pytest.mark.parametrize("theme", THEMES)
def test_replay_masks_secrets(snap_compare, secret_home, theme):
    app = make_app(secret_home)
    app.theme = theme
    assert snap_compare(app, terminal_size=SIZE, run_before=scenario(*OPEN_THE_CALL))


def test_replay_reveals_one_message(snap_compare, secret_home):
    app = make_app(secret_home)
    app.theme = THEMES[0]
    assert snap_compare(app, terminal_size=SIZE, run_before=scenario(*OPEN_THE_CALL, "v", clear_notes=False))
