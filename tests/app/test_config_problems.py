"""A config.toml the app cannot read (or a refused value) is a notification; the app runs on the
defaults and the file is left as the user wrote it."""

from __future__ import annotations

from .conftest import make_app, settle
from .sample_store import fresh_home


async def test_a_broken_config_toml_is_a_notification_and_the_app_runs(sample_path):
    home = fresh_home(sample_path)
    text = "[ui]\ntheme = \n"
    home.config.path.write_text(text)
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        assert app.theme == "opmem-dark"
        assert any(
            note.title == "config.toml" and "invalid TOML at line 2, column" in note.message for note in app.notes
        )
        assert app.screen.query("SessionList")  # the sessions are shown all the same
    assert home.config.path.read_text() == text


async def test_a_refused_value_is_a_notification_naming_the_key(sample_path):
    home = fresh_home(sample_path)
    home.config.path.write_text("[distill]\nidle_minutes = 0\n")
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        assert any("distill.idle_minutes must be an integer >= 1, got 0" in note.message for note in app.notes)
