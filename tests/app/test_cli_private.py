"""`opmem sessions private ID [--off]` and the list's marker, through the real CLI and a real distillation."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.distill.state import load_state
from opmem_tui.backend.home import Home
from opmem_tui.cli import main
from tests.backend.privacy.test_exclusions import (
    PRIVATE_WORD,
    PUBLIC_WORD,
    START,
    all_cores,
    files_holding,
    write_session,
)


def cli(home: Home, *args: str):
    result = CliRunner().invoke(main, ["--home", str(home.path), *args])
    return result.exit_code, result.output


def core(home: Home) -> str:
    return all_cores(home)


def test_private_from_the_shell_withdraws_marks_and_off_brings_back(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    home = Home(tmp_path / "h")
    write_session(home, "pub-session", PUBLIC_WORD)
    write_session(home, "secret-session", PRIVATE_WORD, at=START + 100)
    assert cli(home, "distill")[0] == 0
    assert PRIVATE_WORD in core(home)

    code, out = cli(home, "sessions", "private", "secret")  # a unique prefix will do
    assert code == 0 and out.startswith("made secret-session private"), out
    assert PRIVATE_WORD not in core(Home(home.path)) and PUBLIC_WORD in core(Home(home.path))
    code, out = cli(home, "sessions", "private", "secret-session")
    assert code == 0 and out.startswith("secret-session was already private")

    code, out = cli(home, "sessions", "list")
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "[private] please fix the" in rows["secret-session"]
    assert "[private]" not in rows["pub-session"]
    code, out = cli(home, "sessions", "list", "--json")
    listed = {s["id"]: s for s in json.loads(out)["sessions"]}
    assert listed["secret-session"]["private"] is True and listed["secret-session"]["excluded"] == "private session"
    assert listed["pub-session"]["private"] is False and listed["pub-session"]["excluded"] is None
    code, out = cli(home, "sessions", "show", "secret-session")  # still replayable
    assert code == 0 and f"please fix the {PRIVATE_WORD} parser" in out

    code, out = cli(home, "search", PRIVATE_WORD, "--json")
    assert code == 0 and json.loads(out)["hits"] == [], out
    code, out = cli(home, "search", PUBLIC_WORD, "--json")
    assert code == 0 and json.loads(out)["hits"], out
    assert cli(home, "distill")[0] == 0
    assert PRIVATE_WORD not in core(Home(home.path))
    assert "secret-session" in load_state(home.memory_dir).withheld

    code, out = cli(home, "sessions", "private", "secret-session", "--off")
    assert code == 0 and out.startswith("made secret-session public"), out
    assert "next distillation" in out
    assert "secret-session" not in load_state(home.memory_dir).sessions
    assert cli(home, "distill")[0] == 0
    assert PRIVATE_WORD in core(Home(home.path))
    assert "timeline/" in " ".join(files_holding(home, PRIVATE_WORD))
    code, out = cli(home, "sessions", "private", "secret-session", "--off")
    assert code == 0 and out.strip() == "secret-session was already public", out
    assert "secret-session" in load_state(home.memory_dir).sessions  # nothing to redo


def test_private_names_a_missing_session_without_a_traceback(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    write_session(home, "only", PUBLIC_WORD)
    code, out = cli(home, "sessions", "private", "nothing-like-it")
    assert code == 1 and "no session 'nothing-like-it'" in out and "Traceback" not in out
    code, out = cli(home, "sessions", "private", "../etc")
    assert code == 1 and "Traceback" not in out


def test_show_is_one_command_and_shows_a_private_session_marked_but_recall_never(tmp_path: Path, monkeypatch) -> None:
    """`opmem show` and `opmem sessions show` are one command (same output for every option);
    a private session opens there, marked, for this machine's user; memory_open_session (what
    MCP serves) still refuses it."""
    from opmem_tui.backend.orchestration import set_private
    from opmem_tui.backend.recall.context import recall_for
    from opmem_tui.backend.recall.registry import call

    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    home = Home(tmp_path / "h")
    write_session(home, "pub-session", PUBLIC_WORD)
    write_session(home, "secret-session", PRIVATE_WORD, at=START + 100)
    for args in ((), ("--turn", "1"), ("--all",), ("--json",), ("--all", "--json")):
        short, long = cli(home, "show", "pub", *args), cli(home, "sessions", "show", "pub", *args)
        assert short == long and short[0] == 0, (args, short, long)
    assert "[private]" not in cli(home, "show", "pub-session")[1]

    set_private(home, "secret-session", True)
    for spelling in (("show",), ("sessions", "show")):
        code, out = cli(home, *spelling, "secret", "--all")  # a prefix names it here too
        assert code == 0 and out.startswith("[private] ") and f"please fix the {PRIVATE_WORD} parser" in out, out
    code, out = cli(home, "show", "secret-session", "--all", "--json")
    assert code == 0 and json.loads(out)["session"]["withheld"] is True
    reply = call(recall_for(Home(home.path), cwd=tmp_path), "memory_open_session", {"session_id": "secret-session"})
    assert reply["error"]["code"] == "private" and PRIVATE_WORD not in json.dumps(reply)
    code, out = cli(home, "show", "pub-session", "--turn", "1", "--all")
    assert code == 1 and "--turn and --all" in out
