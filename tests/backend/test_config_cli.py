"""A config.toml that does not parse, or holds a refused value, stops no command: the CLI uses the
defaults for what it cannot read, says what and where on stderr, and leaves every file as it was."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.home import Home

from .store.test_data_safety import opmem


def _home_with_a_session(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    sessions = Home(path).sessions
    sessions.append_message("s1", "user", "keep me")
    sessions.append_message("s1", "assistant", "kept")
    sessions.commit_turn("s1")
    sessions.flush()
    return path


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_config_toml_that_does_not_parse_stops_no_command(tmp_path: Path) -> None:
    home = _home_with_a_session(tmp_path)
    config = home / "config.toml"
    config.write_text('[store]\npack_after_turns = 9\n[ui\ntheme = "x"\n')
    before = _files(home)
    listed = opmem(home, "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    assert "s1" in listed.stdout
    assert "Traceback" not in listed.stderr
    assert f"{config}: invalid TOML at line 3, column" in listed.stderr
    shown = opmem(home, "sessions", "show", "s1")
    assert shown.returncode == 0 and "keep me" in shown.stdout
    assert _files(home) == before  # config.toml and the stored sessions untouched


def test_a_refused_value_names_its_key_and_the_default_is_used(tmp_path: Path) -> None:
    home = _home_with_a_session(tmp_path)
    config = home / "config.toml"
    config.write_text("[store]\npack_after_turns = 0\n[llm]\ntimeout_s = -1\n")
    listed = opmem(home, "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    assert "s1" in listed.stdout
    assert f"{config}: store.pack_after_turns must be an integer >= 2, got 0; using the default 50" in listed.stderr
    assert f"{config}: llm.timeout_s must be a number > 0, got -1; using the default 60.0" in listed.stderr
    assert config.read_text() == "[store]\npack_after_turns = 0\n[llm]\ntimeout_s = -1\n"
