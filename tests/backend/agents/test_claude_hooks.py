"""The Claude Code hooks installer on a settings.json that already holds other settings and hooks."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from opmem_tui.backend.agents.claude_hooks import (
    BACKUP_SUFFIX,
    HooksError,
    flush_command,
    install,
    installed_commands,
    read_hook_input,
    uninstall,
)

EXISTING = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "notify-send compacting"}]}],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff format ."}]}],
    },
}
COMMAND = flush_command(Path("/tmp/opmem-home"), executable="/usr/local/bin/opmem")


def write(path: Path, data: object) -> bytes:
    raw = json.dumps(data, indent=4).encode()
    path.write_bytes(raw)
    return raw


def test_command_reads_the_hook_on_stdin_with_the_home():
    assert COMMAND == "/usr/local/bin/opmem --home /tmp/opmem-home flush --hook claude"


def test_install_merges_keeps_a_backup_and_is_idempotent(tmp_path: Path):
    settings = tmp_path / "settings.json"
    original = write(settings, EXISTING)
    change = install(COMMAND, settings)
    assert change.added == ("PreCompact", "SessionEnd")
    assert change.backup is not None and change.backup.read_bytes() == original
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["permissions"] == EXISTING["permissions"]
    assert data["hooks"]["PostToolUse"] == EXISTING["hooks"]["PostToolUse"]
    pre = data["hooks"]["PreCompact"]
    assert pre[0] == EXISTING["hooks"]["PreCompact"][0]
    assert pre[1] == {"hooks": [{"type": "command", "command": COMMAND, "timeout": 120}]}
    assert data["hooks"]["SessionEnd"] == [pre[1]]
    before = settings.read_bytes()
    again = install(COMMAND, settings)
    assert not again.changed and settings.read_bytes() == before
    assert installed_commands(settings) == [COMMAND]


def test_uninstall_removes_exactly_what_install_added(tmp_path: Path):
    settings = tmp_path / "settings.json"
    write(settings, EXISTING)
    install(COMMAND, settings)
    change = uninstall(COMMAND, settings)
    assert change.removed == ("PreCompact", "SessionEnd")
    assert json.loads(settings.read_text()) == EXISTING
    assert not uninstall(COMMAND, settings).changed
    # the backup is the file as it was before opmem first touched it
    assert json.loads((tmp_path / ("settings.json" + BACKUP_SUFFIX)).read_text()) == EXISTING


def test_uninstall_keeps_a_users_hook_that_shares_our_group(tmp_path: Path):
    settings = tmp_path / "settings.json"
    install(COMMAND, settings)
    data = json.loads(settings.read_text())
    data["hooks"]["SessionEnd"][0]["hooks"].append({"type": "command", "command": "say bye"})
    settings.write_text(json.dumps(data))
    uninstall(COMMAND, settings)
    data = json.loads(settings.read_text())
    assert "PreCompact" not in data["hooks"]
    assert data["hooks"]["SessionEnd"] == [{"hooks": [{"type": "command", "command": "say bye"}]}]


def test_install_into_a_missing_file_and_uninstall_leaves_an_empty_object(tmp_path: Path):
    settings = tmp_path / ".claude" / "settings.json"
    change = install(COMMAND, settings)
    assert change.added and change.backup is None
    uninstall(COMMAND, settings)
    assert json.loads(settings.read_text()) == {}


@pytest.mark.parametrize(
    "text, problem",
    [("{not json", "invalid JSON at line 1"), ("[1, 2]", "expected a JSON object"), ('{"hooks": []}', "not an object")],
)
def test_a_broken_settings_file_is_reported_and_left_alone(tmp_path: Path, text: str, problem: str):
    settings = tmp_path / "settings.json"
    settings.write_text(text)
    with pytest.raises(HooksError, match=problem):
        install(COMMAND, settings)
    assert settings.read_text() == text


def test_hook_input_names_the_session_and_transcript():
    raw = json.dumps({"session_id": "abc-123", "transcript_path": "/x/abc-123.jsonl", "hook_event_name": "PreCompact"})
    assert read_hook_input(raw) == ("abc-123", "/x/abc-123.jsonl")
    with pytest.raises(HooksError, match="no session_id"):
        read_hook_input("{}")
    with pytest.raises(HooksError, match="not JSON"):
        read_hook_input("nope")


def test_install_then_uninstall_gives_back_the_file_byte_for_byte(tmp_path: Path):
    """The settings file is edited as text: its own indent, key order and spacing stay."""
    settings = tmp_path / "settings.json"
    original = json.dumps(EXISTING, indent=4).replace('"model": "opus"', '"model":   "opus"').encode()
    settings.write_bytes(original)
    install(COMMAND, settings)
    text = settings.read_text()
    assert text.startswith('{\n    "model":   "opus",\n    "permissions"')
    assert '    "hooks": {\n        "PreCompact": [\n            {\n                "matcher": "manual"' in text
    uninstall(COMMAND, settings)
    assert settings.read_bytes() == original


def test_install_keeps_a_private_settings_file_private_and_its_backup_too(tmp_path: Path):
    settings = tmp_path / "settings.json"
    write(settings, EXISTING)
    settings.chmod(0o600)
    change = install(COMMAND, settings)
    assert change.backup is not None and change.backup.stat().st_mode & 0o777 == 0o600
    assert settings.stat().st_mode & 0o777 == 0o600
    uninstall(COMMAND, settings)
    assert settings.stat().st_mode & 0o777 == 0o600


def test_a_read_only_settings_file_is_named_and_left_alone(tmp_path: Path):
    settings = tmp_path / "settings.json"
    original = write(settings, EXISTING)
    settings.chmod(0o444)
    with pytest.raises(HooksError, match=r"settings\.json: the file is read-only; not changed"):
        install(COMMAND, settings)
    assert settings.read_bytes() == original and not (tmp_path / ("settings.json" + BACKUP_SUFFIX)).exists()


def test_the_default_command_is_the_one_connect_writes_with_an_absolute_home(monkeypatch, tmp_path: Path):
    from opmem_tui.backend.agents.executable import opmem_executable

    monkeypatch.chdir(tmp_path)
    command = flush_command(Path("rel-home"))
    assert command.split(" --home ")[0] == shlex.join(opmem_executable())
    assert command.endswith(f"--home {tmp_path / 'rel-home'} flush --hook claude")
