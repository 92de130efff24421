"""`opmem demo`: where the store goes, how to reopen it, and that it never uses your own store.

The app itself is replaced by a function that looks at the store it was given (the app's own
loop needs a terminal); everything else is the real command.
"""

from __future__ import annotations

import gc
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

import opmem_tui.cli
from opmem_tui.backend.home import Home
from opmem_tui.cli import main

DEMO_SESSIONS = 13


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Stores the app was opened on; each is checked to be a full demo store while open."""
    seen: list[Path] = []

    def fake_app(home: Home, *, start_tab: str = "sessions") -> None:
        assert start_tab == "memory"  # the demo opens on what opmem is for
        assert len(Home(home.path).sessions.list_sessions().sessions) == DEMO_SESSIONS
        seen.append(home.path)

    monkeypatch.setattr(opmem_tui.cli, "run_app", fake_app)
    return seen


def test_temporary_demo_is_removed_when_the_app_quits(opened: list[Path]) -> None:
    out = CliRunner().invoke(main, ["demo"])
    assert out.exit_code == 0, out.output
    (store,) = opened
    assert f"demo store: {store} (temporary: removed when you quit" in out.output
    gc.collect()  # nothing the demo left in memory writes into its folder later (lock files...)
    assert not store.exists() and not store.parent.exists()


def test_temporary_demo_is_removed_when_the_app_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Path] = []

    def crashing_app(home: Home, **_options: object) -> None:
        seen.append(home.path)
        raise RuntimeError("the terminal went away")

    monkeypatch.setattr(opmem_tui.cli, "run_app", crashing_app)
    out = CliRunner().invoke(main, ["demo"])
    assert out.exit_code != 0 and seen
    assert not seen[0].parent.exists()


def test_a_given_folder_is_kept_and_the_output_says_how_to_reopen_it(tmp_path: Path, opened: list[Path]) -> None:
    folder = tmp_path / "my demo"
    out = CliRunner().invoke(main, ["demo", str(folder)])
    assert out.exit_code == 0, out.output
    assert opened == [folder / "home"] and (folder / "home").is_dir()
    assert f"open it again: opmem demo {shlex.quote(str(folder))}" in out.output
    reopen = next(line for line in out.output.splitlines() if "opmem --home" in line)
    args = shlex.split(reopen.split(":", 1)[1])[1:]  # what the line tells you to type, minus `opmem`
    listed = CliRunner().invoke(main, [*args, "sessions", "list"])
    assert listed.exit_code == 0 and listed.output.startswith(f"{DEMO_SESSIONS} sessions")
    again = CliRunner().invoke(main, ["demo", str(folder)])  # reopened, not rebuilt
    assert again.exit_code == 0 and "building" not in again.output and opened[-1] == folder / "home"


def test_your_own_store_is_never_used(tmp_path: Path, opened: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    own = Home(tmp_path / "mine", durable=False)
    own.sessions.append_message("my-session", "user", "my own work")
    own.sessions.commit_turn("my-session")
    before = sorted(p.relative_to(own.path) for p in own.path.rglob("*"))
    monkeypatch.setenv("OPMEM_HOME", str(own.path))
    out = CliRunner().invoke(main, ["demo"])
    assert out.exit_code == 0, out.output
    assert opened[0] != own.path and own.path not in opened[0].parents
    assert f"the demo does not use your store ({own.path})" in out.output
    refused = CliRunner().invoke(main, ["demo", str(own.path)])  # nor when named as the folder
    assert refused.exit_code == 1 and "not empty and not an opmem demo" in refused.output
    assert sorted(p.relative_to(own.path) for p in own.path.rglob("*")) == before
    assert [m.id for m in Home(own.path).sessions.list_sessions().sessions] == ["my-session"]


def test_no_app_needs_a_folder(opened: list[Path]) -> None:
    out = CliRunner().invoke(main, ["demo", "--no-app"])
    assert out.exit_code == 1 and "--no-app needs a folder" in out.output and not opened
