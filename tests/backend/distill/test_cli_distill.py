"""The distill commands through click, on a real Home in tmp_path: output, errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main
from tests.backend.importers.conftest import Transcript, text, tool_use

from .conftest import Chat


def invoke(home: Path, *args: str, stdin: str | None = None):
    return CliRunner().invoke(main, ["--home", str(home), *args], input=stdin)


def seeded(tmp_path: Path) -> Path:
    home = Home(tmp_path / "home")
    chat = Chat(home, "s1")
    chat.user("run the tests")
    chat.reply()
    chat.tool("Bash", {"command": "pytest -q"}, "=== 3 passed in 0.1s ===")
    chat.commit()
    return home.path


def test_distill_prints_what_it_wrote_and_is_idempotent(tmp_path: Path):
    home = seeded(tmp_path)
    first = invoke(home, "distill", "-q")
    assert first.exit_code == 0, first.output
    assert "distilled 3 nodes of 1 sessions" in first.output
    again = invoke(home, "distill", "--session", "s1")
    assert again.exit_code == 0 and "distilled 0 nodes" in again.output


def test_errors_are_one_line_and_exit_non_zero(tmp_path: Path):
    home = seeded(tmp_path)
    missing = invoke(home, "distill", "--session", "nope")
    assert missing.exit_code == 1 and "opmem: no session 'nope'" in missing.output
    bad = invoke(home, "distill", "--session", "../x")
    assert bad.exit_code == 1 and "invalid session id" in bad.output
    llm = invoke(home, "distill", "--llm")
    assert llm.exit_code == 1 and "needs [llm] base_url" in llm.output
    assert "Traceback" not in missing.output + bad.output + llm.output
    nothing = invoke(home, "flush")
    assert nothing.exit_code == 1 and "name a session" in nothing.output
    unknown = invoke(home, "memory", "unmerge", "al-0000")
    assert unknown.exit_code == 1 and "al-0000" in unknown.output


def test_flush_from_a_claude_hook_imports_then_distils(tmp_path: Path):
    home = Home(tmp_path / "home")
    transcript = Transcript(session="abcd-1234")
    transcript.prompt("please read the config")
    transcript.assistant(
        "msg_1", text("Reading it."), tool_use("toolu_1", "Read", file_path="/tmp/project/config.toml")
    )
    transcript.result("toolu_1", "[store]\n")
    path = transcript.write(tmp_path / "claude" / "abcd-1234.jsonl")
    hook = json.dumps({"session_id": "abcd-1234", "transcript_path": str(path), "hook_event_name": "PreCompact"})
    result = invoke(home.path, "flush", "--hook", "claude", stdin=hook)
    assert result.exit_code == 0, result.output
    assert "distilled" in result.output and "of 1 sessions" in result.output
    work = [e for e in home.memory.timeline(kinds=["work"]).events]
    assert [e.summary for e in work] == ["Read config.toml"]
    stale = json.dumps({"session_id": "not-imported", "transcript_path": ""})
    failed = invoke(home.path, "flush", "--hook", "claude", stdin=stale)
    assert failed.exit_code == 1 and "not-imported is not in the store" in failed.output


def test_hooks_install_and_uninstall(tmp_path: Path):
    home = tmp_path / "home"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}))
    installed = invoke(home, "hooks", "install", "claude", "--settings", str(settings))
    assert installed.exit_code == 0 and "PreCompact, SessionEnd" in installed.output
    command = json.loads(settings.read_text())["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    assert command.endswith(f"--home {home} flush --hook claude")
    assert "already installed" in invoke(home, "hooks", "install", "claude", "--settings", str(settings)).output
    removed = invoke(home, "hooks", "uninstall", "claude", "--settings", str(settings))
    assert removed.exit_code == 0 and "removed: PreCompact, SessionEnd" in removed.output
    assert json.loads(settings.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
    }


def test_sleep_consolidates(tmp_path: Path):
    home = seeded(tmp_path)
    result = invoke(home, "sleep")
    assert result.exit_code == 0, result.output
    assert "slept: distilled 3 nodes" in result.output
    assert (home / "memory" / "core.md").exists()


def test_memory_unmerge_undoes_a_merge_and_a_rerun_keeps_it_undone(tmp_path: Path):
    home = Home(tmp_path / "home")
    chat = Chat(home, "s1")
    for spelling in ("scikit-learn", "scikit_learn"):
        chat.user(f"install {spelling}")
        chat.reply()
        chat.tool("Bash", {"command": f"pip install {spelling}"}, f"Successfully installed {spelling}-1.5")
        chat.commit()
    assert invoke(home.path, "distill", "-q").exit_code == 0
    packages = home.memory.entity_records({"package"})
    assert sorted(e.name for e in packages) == ["scikit-learn", "scikit_learn"]
    (info,) = home.memory.aliases(packages[0])
    assert info.active and "punctuation" in info.merge.reason
    undone = invoke(home.path, "memory", "unmerge", info.merge.id)
    assert undone.exit_code == 0 and f"undone: {info.merge.id}" in undone.output
    assert invoke(home.path, "memory", "unmerge", info.merge.id).output.strip() == f"{info.merge.id} was already undone"
    assert invoke(home.path, "sleep").exit_code == 0  # the sleep re-links: the undone pair stays apart
    after = Home(home.path).memory
    assert [a.active for a in after.aliases(packages[0])] == [False] and after.aliases(packages[1]) == ()
