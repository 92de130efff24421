from __future__ import annotations

import dataclasses
import os
import re
from datetime import time
from pathlib import Path

import pytest
import tomlkit

from opmem_tui.backend.config import (
    DEFAULT_CONFIG,
    SECTIONS,
    Config,
    ConfigError,
    DistillSettings,
    LlmSettings,
    StoreSettings,
)
from opmem_tui.backend.home import Home, default_home_path


def test_home_from_env_else_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPMEM_HOME", str(tmp_path / "h"))
    assert default_home_path() == tmp_path / "h"
    monkeypatch.delenv("OPMEM_HOME")
    # conftest points XDG_DATA_HOME into a temporary folder; platformdirs follows it on Linux.
    assert default_home_path() == Path(os.environ["XDG_DATA_HOME"]) / "opmem"


def test_defaults_without_file(tmp_path: Path) -> None:
    config = Config(tmp_path / "config.toml")
    assert config.store == StoreSettings(session_cache_cap=256, pack_after_turns=50)
    assert config.ui.theme == "opmem-dark"
    assert config.projects.autocommit is True
    assert config.distill.sleep_time == time(3, 0)
    assert config.distill.extractor == "rules"
    assert "works-at" in config.distill.single_valued
    assert config.llm.base_url == "" and config.llm.api_key_env == "OPENAI_API_KEY"
    assert config.llm.timeout_s == 60.0 and config.llm.temperature == 0.0
    assert config.recall.max_reply_bytes == 16384
    assert config.search.dense == ""
    assert config.keys == {}


def test_default_file_shows_every_default_and_reads_back_the_same(tmp_path: Path) -> None:
    # The written file lists every key with its default (commented out); uncommenting them all
    # must give the same settings, so the comments cannot drift from the dataclass defaults.
    path = tmp_path / "config.toml"
    path.write_text(re.sub(r"^# ([a-z_]+ = )", r"\1", DEFAULT_CONFIG, flags=re.MULTILINE))
    uncommented = Config(path, environ={})
    assert len(tomlkit.parse(path.read_text())["distill"]) == len(dataclasses.fields(DistillSettings))
    assert uncommented.settings() == Config(tmp_path / "none.toml", environ={}).settings()
    for cls in SECTIONS:
        for f in dataclasses.fields(cls):
            assert f"# {f.name} = " in DEFAULT_CONFIG
            default = list(f.default) if isinstance(f.default, tuple) else f.default
            assert f.metadata["check"].convert(default) is not None, f"{cls.section}.{f.name}"


def test_settings_are_frozen(tmp_path: Path) -> None:
    config = Config(tmp_path / "config.toml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.store.pack_after_turns = 3  # type: ignore[misc]


def test_comments_survive_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# my note\n[ui]\ntheme = "opmem-light" # keep me\n')
    config = Config(path)
    config.set("store.session_cache_cap", 12)
    assert config.store.session_cache_cap == 12  # set() is seen by the typed sections
    config.save()
    text = path.read_text()
    assert "# my note" in text and "# keep me" in text and "session_cache_cap = 12" in text
    assert Config(path).ui.theme == "opmem-light"
    assert Config(path).store.session_cache_cap == 12


def test_set_theme_in_default_file_keeps_comments(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    home.ensure()
    home.config.set("ui.theme", "opmem-light")
    home.config.save()
    text = home.config.path.read_text()
    assert "# opmem configuration" in text and "# pack_after_turns = 50" in text
    assert Config(home.config.path).ui.theme == "opmem-light"


def test_broken_config_names_file_line_and_column_and_keeps_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = "[store]\npack_after_turns = 9\n[ui]\ntheme = \n"
    path.write_text(text)
    config = Config(path)
    [message] = config.problems()
    assert message.startswith(f"{path}: invalid TOML at line 4, column ") and "keeps its default" in message
    assert config.settings() == Config(tmp_path / "none.toml", environ={}).settings()
    config.set("ui.theme", "opmem-light")
    with pytest.raises(ConfigError, match="not saved over it"):
        config.save()  # the user's text is never replaced by defaults
    assert path.read_text() == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[store]\nsession_cache_cap = "many"\n', "store.session_cache_cap must be an integer >= 1, got 'many'"),
        ("[store]\nsession_cache_cap = 0\n", "store.session_cache_cap must be an integer >= 1, got 0"),
        ("[store]\npack_after_turns = 0\n", "store.pack_after_turns must be an integer >= 2, got 0"),
        ("[store]\npack_after_turns = -3\n", "store.pack_after_turns must be an integer >= 2, got -3"),
        ("[store]\npack_after_turns = true\n", "store.pack_after_turns must be an integer >= 2, got True"),
        ("[store]\npack_after_turn = 10\n", "store.pack_after_turn is not a setting"),
        ("store = 5\n", "[store] must be a table, got 5"),
    ],
)
def test_store_values_are_range_checked(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    home = Home(tmp_path)
    assert home.sessions.pack_threshold == 50 and home.sessions.cache_cap == 256  # the defaults
    [problem] = home.config.problems()
    assert problem.startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("projects", "autocommit", '"yes"', "true or false"),
        ("ui", "theme", '""', "a theme name"),
        ("ui", "theme", "3", "a theme name"),
        ("distill", "idle_minutes", "0", "an integer >= 1"),
        ("distill", "sleep_at", '"25:00"', 'a 24-hour time "HH:MM"'),
        ("distill", "sleep_at", '"3:00"', 'a 24-hour time "HH:MM"'),
        ("distill", "extractor", '"magic"', 'one of "rules", "llm"'),
        ("distill", "single_valued", '"prefers"', "a list of relation names"),
        ("distill", "single_valued", '["prefers", 3]', "a list of relation names"),
        ("distill", "titles", "1", "true or false"),
        ("llm", "base_url", '"localhost:8080"', "an http:// or https:// URL, or empty"),
        ("llm", "model", "5", "a string"),
        ("llm", "api_key_env", '"MY KEY"', "an environment variable name"),
        ("llm", "timeout_s", "0", "a number > 0"),
        ("llm", "timeout_s", "nan", "a number > 0"),
        ("llm", "max_retries", "-1", "an integer >= 0"),
        ("llm", "batch_size", "0", "an integer >= 1"),
        ("llm", "token_budget", "-5", "an integer >= 0"),
        ("llm", "temperature", "2.5", "a number from 0 to 2"),
        ("llm", "temperature", "-0.1", "a number from 0 to 2"),
        ("recall", "max_reply_bytes", "1023", "an integer >= 1024"),
        ("search", "dense", "false", "a string"),
    ],
)
def test_every_value_is_checked_with_the_key_named(
    tmp_path: Path, section: str, key: str, value: str, expected: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[{section}]\n{key} = {value}\n")
    config = Config(path)
    default = getattr(Config(tmp_path / "none.toml"), section)
    assert getattr(config, section) == default
    [problem] = config.problems()
    assert problem.startswith(f"{path}: {section}.{key} must be {expected}, got ")
    assert "; using the default " in problem


def test_a_broken_section_does_not_block_the_others(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[llm]\ntimeout_s = -1\n[store]\npack_after_turns = 9\n")
    config = Config(path)
    assert config.store.pack_after_turns == 9
    assert config.llm.timeout_s == 60.0
    assert config.problems() == [f"{path}: llm.timeout_s must be a number > 0, got -1; using the default 60.0"]


def test_valid_values_are_typed(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\ntimeout_s = 5\ntemperature = 2\n'
        '[distill]\nsleep_at = "23:59"\nsingle_valued = ["prefers"]\nextractor = "llm"\n'
    )
    config = Config(path)
    assert config.llm == LlmSettings(base_url="http://127.0.0.1:9/v1", timeout_s=5.0, temperature=2.0)
    assert isinstance(config.llm.timeout_s, float)
    assert config.distill == DistillSettings(sleep_at="23:59", single_valued=("prefers",), extractor="llm")
    assert config.distill.sleep_time == time(23, 59)


def test_keys_table_is_passed_through_for_the_keymap(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[keys]\n"replay.next_turn" = "n"\n"x.y" = 5\n')
    assert Config(path).keys == {"replay.next_turn": "n", "x.y": 5}
    path.write_text("keys = 3\n")
    config = Config(path)
    assert config.keys == {}
    assert any("[keys] must be a table, got 3" in p for p in config.problems())


def test_cache_cap_env_overrides_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[store]\nsession_cache_cap = 7\n")
    assert Config(path).store.session_cache_cap == 7
    monkeypatch.setenv("OPENPROGRAM_SESSION_CACHE_CAP", "5")
    assert Config(path).store.session_cache_cap == 5
    monkeypatch.setenv("OPMEM_SESSION_CACHE_CAP", "3")  # the opmem name wins over the old one
    assert Config(path).store.session_cache_cap == 3
    assert Home(tmp_path).sessions.cache_cap == 3
    monkeypatch.setenv("OPMEM_SESSION_CACHE_CAP", "0")
    config = Config(path)
    assert config.store.session_cache_cap == 7  # a bad variable is ignored, and said
    assert config.problems() == ["OPMEM_SESSION_CACHE_CAP must be an integer >= 1, got '0'; ignored"]
    monkeypatch.setenv("OPMEM_SESSION_CACHE_CAP", "lots")
    assert any("OPMEM_SESSION_CACHE_CAP must be an integer >= 1" in p for p in Config(path).problems())


def test_home_passes_store_settings(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[store]\nsession_cache_cap = 4\npack_after_turns = 2\n")
    sessions = Home(tmp_path).sessions
    assert (sessions.cache_cap, sessions.pack_threshold) == (4, 2)


def test_ensure_writes_commented_default(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    home.ensure()
    text = (tmp_path / "h" / "config.toml").read_text()
    assert "# opmem configuration" in text
    assert tomlkit.parse(text)["store"] == {}  # defaults shown, not pinned
