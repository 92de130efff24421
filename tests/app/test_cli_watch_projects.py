"""`opmem watch` options that reach the projects layer, and how auto-commit events are printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.importers.watch import Watcher
from opmem_tui.backend.projects.autocommit import AutoCommitEvent
from opmem_tui.cli import main
from opmem_tui.cli_import import print_commit_event


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Watcher]:
    """Watchers the command built; their loop returns at once (the loop has its own tests)."""
    seen: list[Watcher] = []
    monkeypatch.setattr(Watcher, "run", lambda self, stop=None, *, ready=None: seen.append(self))
    return seen


@pytest.mark.parametrize(
    ("args", "committer", "binds"),
    [
        ([], True, True),
        (["--no-autocommit"], False, True),
        (["--no-bind"], True, False),
        (["--no-autocommit", "--no-bind"], False, False),
    ],
)
def test_watch_options(tmp_path: Path, started: list[Watcher], args: list[str], committer: bool, binds: bool) -> None:
    (tmp_path / "cc").mkdir()
    result = CliRunner().invoke(
        main, ["--home", str(tmp_path / "h"), "watch", "claude", "--path", str(tmp_path / "cc"), *args]
    )
    assert result.exit_code == 0, result.output
    [watcher] = started
    assert (watcher.committer is not None) == committer
    assert (watcher.on_project is watcher.binder) == binds and (watcher.on_project is None) == (not binds)


def test_config_turns_autocommit_off_and_the_flag_on_again(tmp_path: Path, started: list[Watcher]) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text("[projects]\nautocommit = false\n")
    (tmp_path / "cc").mkdir()
    base = ["--home", str(home), "watch", "claude", "--path", str(tmp_path / "cc")]
    assert CliRunner().invoke(main, base).exit_code == 0
    assert CliRunner().invoke(main, [*base, "--autocommit"]).exit_code == 0
    assert [w.committer is not None for w in started] == [False, True]


def test_a_bad_autocommit_value_is_reported_and_its_default_used(tmp_path: Path, started: list[Watcher]) -> None:
    """A bad config value does not stop the command (issue 14): its error names the key, the
    default (auto-commit on) applies."""
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text('[projects]\nautocommit = "yes"\n')
    (tmp_path / "cc").mkdir()
    result = CliRunner().invoke(main, ["--home", str(home), "watch", "claude", "--path", str(tmp_path / "cc")])
    assert result.exit_code == 0, result.output
    assert "projects.autocommit must be true or false" in result.output
    [watcher] = started
    assert watcher.committer is not None
    assert (home / "config.toml").read_text() == '[projects]\nautocommit = "yes"\n'  # never saved over


def test_commit_events_are_printed_as_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    print_commit_event(AutoCommitEvent("cc-1", "proj-1", 3, "0123456789abcdef", ("a.py", "b/c.py")))
    print_commit_event(AutoCommitEvent("cc-1", "proj-1", 4, warning="turn 4 wrote \x1b[31mred\x1b[0m [bold]x[/bold]"))
    out = capsys.readouterr()
    assert "committed turn 3 of cc-1 in proj-1: 0123456 (a.py, b/c.py)" in out.out
    assert "\x1b[31m" not in out.err and "[bold]x[/bold]" in out.err and "warning: turn 4" in out.err
