"""`opmem secrets scan|purge` through click's runner (and a real terminal for the question),
against a home in tmp_path. No value ever reaches the output."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main
from tests.backend.privacy.secret_store import FRAGMENTS, VALUES, build, tree_hashes


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    build(Home(path, durable=False))
    return path


def run(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), "secrets", *args])


def no_value_in(text: str) -> bool:
    return not [v for v in (*VALUES, *FRAGMENTS) if v in text]


def test_scan_prints_a_table_and_a_count_per_kind(home: Path) -> None:
    result = run(home, "scan")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["SESSION", "TURN", "NODE", "FIELD", "KIND", "FINGERPRINT"]
    assert any(line.split()[:5] == ["leaky", "1", "t1", "input", "openai-key"] for line in lines)
    assert any(line.split()[:4] == ["other", "meta.json", "title", "github-token"] for line in lines)
    assert "10 finding(s) in 2 session(s): github-token 4, aws-access-key 2, openai-key 2, url-password 2" in lines
    assert no_value_in(result.output)


def test_scan_json(home: Path) -> None:
    result = run(home, "scan", "--json", "--session", "leaky")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["findings"]
    assert len(data["findings"]) == 7
    assert data["findings"][0] == {
        "session": "leaky",
        "turn": 1,
        "node": "u1",
        "field": "content",
        "kind": "github-token",
        "fingerprint": data["findings"][0]["fingerprint"],
    }
    assert no_value_in(result.output)


def test_scan_of_a_missing_session_or_home_is_a_clear_error(home: Path, tmp_path: Path) -> None:
    result = run(home, "scan", "--session", "nope")
    assert result.exit_code == 1 and "no session 'nope'" in result.output
    result = run(tmp_path / "nowhere", "scan")
    assert result.exit_code == 1 and "no opmem home at" in result.output
    assert "Traceback" not in result.output


def test_purge_without_yes_and_without_a_terminal_refuses(home: Path) -> None:
    before = tree_hashes(home / "sessions")
    result = run(home, "purge")
    assert result.exit_code == 1
    assert "purge will redact 10 finding(s) in 7 node file(s) of 2 session(s): leaky, other" in result.output
    assert "not purging without confirmation: stdin is not a terminal (give --yes)" in result.output
    assert tree_hashes(home / "sessions") == before


def test_purge_yes_then_scan_finds_nothing(home: Path) -> None:
    clean = tree_hashes(home / "sessions" / "clean")
    result = run(home, "purge", "--yes", "--session", "leaky")
    assert result.exit_code == 0, result.output
    assert "purged: 7 finding(s) in 6 node file(s) of 1 session(s); 3 commit(s) rewritten, 2 branch(es) moved" in (
        result.output
    )
    assert no_value_in(result.output)
    assert run(home, "scan", "--session", "leaky").output == "no secrets found\n"
    assert len(json.loads(run(home, "scan", "--json").output)["findings"]) == 3  # other's, untouched
    assert tree_hashes(home / "sessions" / "clean") == clean
    verify = CliRunner().invoke(main, ["--home", str(home), "verify", "--no-repair"])
    assert verify.exit_code == 0, verify.output
    again = run(home, "purge", "--session", "leaky")
    assert again.exit_code == 0 and again.output == "no secrets found: nothing to purge\n"


def ask_in_a_terminal(home: Path, answer: str) -> str:
    """`opmem secrets purge` with its stdin on a pseudo-terminal, answering the question."""
    master, slave = pty.openpty()
    env = {**os.environ, "OPMEM_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from opmem_tui.cli import main; main()", "secrets", "purge"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    os.close(slave)
    os.write(master, answer.encode() + b"\n")
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    return out.decode()


def test_purge_asks_at_a_terminal(home: Path) -> None:
    before = tree_hashes(home / "sessions")
    out = ask_in_a_terminal(home, "n")
    assert "Purge? [y/N]" in out and "nothing changed" in out
    assert tree_hashes(home / "sessions") == before
    out = ask_in_a_terminal(home, "y")
    assert "purged: 10 finding(s) in 7 node file(s) of 2 session(s)" in out
    assert run(home, "scan").output == "no secrets found\n"
