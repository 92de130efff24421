from __future__ import annotations

import os
from pathlib import Path

import pytest

from opmem_tui.backend.config import Config, ConfigError
from opmem_tui.backend.home import Home, default_home_path


def test_home_from_env_else_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPMEM_HOME", str(tmp_path / "h"))
    assert default_home_path() == tmp_path / "h"
    monkeypatch.delenv("OPMEM_HOME")
    # conftest points XDG_DATA_HOME into a temporary folder; platformdirs follows it on Linux.
    assert default_home_path() == Path(os.environ["XDG_DATA_HOME"]) / "opmem"


def test_defaults_without_file(tmp_path: Path) -> None:
    config = Config(tmp_path / "config.toml")
    assert config.get("store.session_cache_cap") == 256
    assert config.get("ui.theme") == "opmem-dark"
    assert config.get("nope.nothing", 5) == 5


def test_comments_survive_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# my note\n[ui]\ntheme = "opmem-light" # keep me\n')
    config = Config(path)
    config.set("store.session_cache_cap", 12)
    config.save()
    text = path.read_text()
    assert "# my note" in text and "# keep me" in text and "session_cache_cap = 12" in text
    assert Config(path).get("ui.theme") == "opmem-light"


def test_broken_config_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[ui]\ntheme = \n")
    with pytest.raises(ConfigError) as err:
        Config(path)
    message = str(err.value)
    assert str(path) in message and "line 2" in message and "column" in message


def test_wrong_type_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[store]\nsession_cache_cap = "many"\n')
    with pytest.raises(ConfigError, match="session_cache_cap must be an integer"):
        _ = Home(tmp_path).sessions


def test_ensure_writes_commented_default(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    home.ensure()
    assert "# opmem configuration" in (tmp_path / "h" / "config.toml").read_text()
