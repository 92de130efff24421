"""[privacy] redact_on_import: what import and watch store is redacted (node files, meta.json with
its title, every git object); off, the raw session is the faithful record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.importers.watch import Watcher
from opmem_tui.backend.privacy.scan import scan

from .secret_store import AWS, GITHUB, OPENAI, PG_PASSWORD, PG_URL

VALUES = (GITHUB, AWS, OPENAI, PG_PASSWORD)


def transcript(path: Path) -> Path:
    lines = [
        {"session": "s1", "id": "m1", "role": "user", "content": f"push with {GITHUB}", "title": f"deploy {AWS}"},
        {"session": "s1", "id": "m2", "role": "assistant", "content": f"Connecting to {PG_URL}."},
        {
            "session": "s1",
            "id": "m3",
            "role": "tool",
            "name": "bash",
            "input": {"command": f"curl -H 'Authorization: Bearer {OPENAI}' https://api.example"},
            "content": f"key: {AWS}",
            "metadata": {"env": {"GITHUB_TOKEN": GITHUB}},
        },
        {"session": "s1", "id": "m4", "role": "user", "content": "and now the tests"},
        {"session": "s1", "id": "m5", "role": "assistant", "content": "They pass."},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def stored_bytes(home: Home) -> bytes:
    """Every file under sessions/, every git object of every session, and `git log -p --all`."""
    out = b""
    for path in sorted(home.sessions_dir.rglob("*")):
        if path.is_file():
            out += path.read_bytes()
    for repo in home.sessions_dir.iterdir():
        if (repo / ".git").is_dir():
            for args in (["log", "-p", "--all"], ["cat-file", "--batch-all-objects", "--batch"]):
                out += subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout
    return out


def home_with(tmp_path: Path, redact: bool) -> Home:
    home = Home(tmp_path / "home", durable=False)
    home.ensure()
    home.config.path.write_text(f"[privacy]\nredact_on_import = {'true' if redact else 'false'}\n")
    return Home(home.path, durable=False)


@pytest.mark.parametrize("how", ["import", "watch"])
def test_on_nothing_stored_holds_a_value(tmp_path: Path, how: str) -> None:
    home = home_with(tmp_path, True)
    source = transcript(tmp_path / "chat.jsonl")
    if how == "import":
        report = run_import(home, "jsonl", [source], bind=False)
    else:
        report = Watcher(home, ["jsonl"], [source], bind=False).catch_up()
    assert report.nodes == 5
    sid = next(iter(report.touched))
    data = stored_bytes(home)
    assert b"[secret:github-token#" in data and b"[secret:aws-access-key#" in data
    for value in VALUES:
        assert value.encode() not in data, value
    assert list(scan(home.sessions)) == []
    meta = home.sessions.get_meta(sid)
    assert meta.title.startswith("deploy [secret:aws-access-key#")
    tool = home.sessions.get_nodes(sid)[2]
    assert tool.input["command"].startswith("curl -H 'Authorization: Bearer [secret:")
    assert tool.metadata["env"]["GITHUB_TOKEN"].startswith("[secret:github-token#")
    assert home.sessions.verify(repair=False).ok
    again = run_import(home, "jsonl", [source], bind=False, force=True)  # idempotent, redacted or not
    assert again.nodes == 0 and again.touched == set()


def test_off_the_raw_session_is_faithful(tmp_path: Path) -> None:
    home = home_with(tmp_path, False)
    source = transcript(tmp_path / "chat.jsonl")
    report = run_import(home, "jsonl", [source], bind=False)
    sid = next(iter(report.touched))
    data = stored_bytes(home)
    for value in VALUES:
        assert value.encode() in data, value
    assert home.sessions.get_meta(sid).title == f"deploy {AWS}"
    assert home.sessions.get_nodes(sid)[0].content == f"push with {GITHUB}"
    assert len(list(scan(home.sessions))) == 8  # 5 in nodes; meta.json title, imported_title, preview
