"""`opmem sessions ...` from the shell: whole ids, unique prefixes, JSON, filters, one turn count."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main

LONG_IDS = (
    "codex-rollout-2025-12-30T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    "codex-rollout-2025-12-30T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c",
    "cc-3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8",
)
NOW = 1_767_225_600.0


def _store(root: Path) -> Home:
    home = Home(root / "h", durable=False)
    store = home.sessions
    for index, sid in enumerate(LONG_IDS):
        source = "codex" if sid.startswith("codex") else "claude-code"
        title = f"A long title for session {index} " * 4
        meta = {"source": source, "project_id": "p-web" if index == 0 else "", "title": title.strip()}
        store.append_message(sid, "user", f"Question {index}", created_at=NOW - 100 * index, session_meta=meta)
        store.append_message(sid, "assistant", "Done \x1b[2J \x9b31m", created_at=NOW - 100 * index + 1)
        store.commit_turn(sid)
    return home


def run(home: Home, *args: str, input: str | None = None):
    return CliRunner().invoke(main, ["--home", str(home.path), *args], input=input)


def test_ids_are_whole_in_piped_output_and_show_takes_them(tmp_path: Path) -> None:
    home = _store(tmp_path)
    out = CliRunner().invoke(main, ["--home", str(home.path), "sessions", "list"], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    rows = out.output.splitlines()[2:]
    assert [row.split()[0] for row in rows] == list(LONG_IDS)  # newest first, whole
    assert "A long title for session 0 " * 3 in out.output  # a pipe gets the whole title too
    copied = rows[0].split()[0]
    shown = run(home, "sessions", "show", copied)
    assert shown.exit_code == 0 and f"  ·  {copied}  ·  " in shown.output


def test_ids_are_whole_on_an_80_column_terminal(tmp_path: Path) -> None:
    home = _store(tmp_path)
    leader, follower = pty.openpty()
    env = dict(os.environ, COLUMNS="80", LINES="24")
    code = "from opmem_tui.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "--home", str(home.path), "sessions", "list"],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
        check=False,
    )
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert proc.returncode == 0, proc.stderr
    lines = output.decode().replace("\r\n", "\n").splitlines()
    assert all(len(line) <= 80 for line in lines)
    # Ids this long leave no room for a title beside them: each gets a line of its own, whole.
    assert [line for line in lines if not line.startswith((" ", "id", "3 sessions"))] == list(LONG_IDS)
    details = [line for line in lines if line.startswith("    ")]
    assert len(details) == 3 and all(line.endswith("…") and len(line) == 80 for line in details)  # titles cut


def test_prefix_picks_the_one_session_or_names_the_candidates(tmp_path: Path) -> None:
    home = _store(tmp_path)
    out = run(home, "sessions", "show", "cc-3f2a")
    assert (
        out.exit_code == 0 and "  ·  cc-3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8  ·  claude-code  ·  1 turn " in out.output
    )
    out = run(home, "sessions", "show", "codex-rollout")
    assert out.exit_code == 1
    assert "is the start of 2 session ids" in out.output
    assert LONG_IDS[0] in out.output and LONG_IDS[1] in out.output
    out = run(home, "sessions", "rename", "codex-rollout-2025-12-30T11", "Second rollout")
    assert out.exit_code == 0 and Home(home.path).sessions.get_meta(LONG_IDS[1]).title == "Second rollout"
    out = run(home, "sessions", "delete", "codex-rollout", "--yes")
    assert out.exit_code == 1 and Home(home.path).sessions.exists(LONG_IDS[0])
    out = run(home, "sessions", "delete", "cc-", "--yes")
    assert out.exit_code == 0 and not Home(home.path).sessions.exists(LONG_IDS[2])
    out = run(home, "sessions", "show", "nothing-like-it")
    assert out.exit_code == 1 and "no session 'nothing-like-it'" in out.output


def test_json_list_and_show(tmp_path: Path) -> None:
    home = _store(tmp_path)
    out = run(home, "sessions", "list", "--json")
    assert out.exit_code == 0
    data = json.loads(out.output)
    assert [s["id"] for s in data["sessions"]] == list(LONG_IDS)
    assert data["total"] == 3 and all(s["turns"] == 1 for s in data["sessions"])
    for args in (("--all", "--json"), ("--turn", "1", "--json")):
        out = run(home, "sessions", "show", "cc-", *args)
        assert out.exit_code == 0
        assert "\x1b" not in out.output and "\x9b" not in out.output  # escaped, not sent to the terminal
        data = json.loads(out.output)
        assert data["session"]["id"] == LONG_IDS[2] and data["session"]["turns"] == 1
        (turn,) = data.get("turns", [data])
        assert [m["role"] for m in turn["messages"]] == ["user", "assistant"]
        assert turn["messages"][1]["text"] == "Done \x1b[2J \x9b31m"  # the stored text, exactly


def test_source_and_project_filters(tmp_path: Path, demo_path: Path) -> None:
    home = _store(tmp_path)
    out = run(home, "sessions", "list", "--source", "codex", "--json")
    assert [s["id"] for s in json.loads(out.output)["sessions"]] == list(LONG_IDS[:2])
    out = run(home, "sessions", "list", "--project", "p-web")
    assert out.exit_code == 0 and out.output.startswith("1 of 3 sessions")
    assert LONG_IDS[0] in out.output and LONG_IDS[1] not in out.output
    demo = Home(demo_path / "home")
    out = run(demo, "sessions", "list", "--project", "weather-cli", "--json")
    ids = [s["id"] for s in json.loads(out.output)["sessions"]]
    assert ids and all(s.startswith("cc-") or "weather" in s or "forecast" in s for s in ids)
    weather = next(p.id for p in demo.projects.list_projects() if p.name == "weather-cli")
    assert all(demo.sessions.get_meta(sid).project_id == weather for sid in ids)


def test_one_turn_count_everywhere(tmp_path: Path) -> None:
    home = Home(tmp_path / "h", durable=False)
    store = home.sessions
    store.append_message("preface", "system", "You are a helpful agent.", created_at=NOW)
    store.commit_turn("preface")
    listed = json.loads(run(home, "sessions", "list", "--json").output)["sessions"][0]
    shown = run(home, "sessions", "show", "preface")
    shown_json = json.loads(run(home, "sessions", "show", "preface", "--json").output)
    assert listed["turns"] == shown_json["session"]["turns"] == 0
    assert "preface  ·  opmem  ·  0 turns" in shown.output
    store.append_message("preface", "user", "Hello", created_at=NOW + 1)
    store.append_message("preface", "assistant", "Hi", created_at=NOW + 2)
    store.commit_turn("preface")
    fresh = Home(home.path)
    assert fresh.sessions.list_sessions().sessions[0].turn_count == 1
    assert "preface  ·  opmem  ·  1 turn " in run(fresh, "sessions", "show", "preface").output
    listing = run(fresh, "sessions", "list").output
    assert listing.startswith("1 session\n")


def test_short_ids_share_their_line_with_a_title_cut_to_the_width() -> None:
    from opmem_tui.backend.model import SessionMeta
    from opmem_tui.cli_sessions import _table

    rows = [
        SessionMeta(id=f"s{i}", title="a title that goes on " * 6, source="codex", updated_at=NOW, turn_count=i)
        for i in (1, 12)
    ]
    lines = _table(rows, 80)
    assert lines[0].split() == ["id", "updated", "turns", "source", "title"]
    assert [line.split()[0] for line in lines[1:]] == ["s1", "s12"]
    assert all(len(line) == 80 and line.endswith("…") for line in lines[1:])
    assert all(len(line) > 80 for line in _table(rows, None)[1:])  # a pipe: nothing cut


def test_source_filter_takes_the_import_names_and_says_what_is_there(tmp_path: Path) -> None:
    """`opmem import claude` stores sessions whose source is `claude-code`; `sessions list
    --source claude` answered "0 of 3 sessions" with nothing to say why. The import name (and its
    aliases) now match, and a filter that matches nothing names the sources the store holds."""
    home = _store(tmp_path)
    out = run(home, "sessions", "list", "--source", "claude", "--json")
    assert [s["id"] for s in json.loads(out.output)["sessions"]] == [LONG_IDS[2]]
    out = run(home, "sessions", "list", "--source", "cc")
    assert out.exit_code == 0 and out.output.startswith("1 of 3 sessions")
    out = run(home, "sessions", "list", "--source", "gemini")
    assert out.exit_code == 0 and "0 of 3 sessions" in out.output
    assert "sources here: claude-code, codex" in out.stderr
