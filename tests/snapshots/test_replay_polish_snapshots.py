"""SVG snapshots of the replay's file-edit diff (the sample's `edit` call opened, the cursor moved
on so the diff shows its colours), dark and light."""

from __future__ import annotations

import pytest

from tests.app.conftest import _utc, make_app, sample_home, sample_path  # noqa: F401

from .test_snapshots import SIZE, THEMES, scenario


@pytest.mark.parametrize("theme", THEMES)
def test_replay_edit_diff(snap_compare, sample_home, theme):  # noqa: F811
    keys = ("down", "down", "down", "g", "right", "enter", "j", "j", "enter", "j")
    app = make_app(sample_home)
    app.theme = theme
    assert snap_compare(app, terminal_size=SIZE, run_before=scenario(*keys))
