"""`opmem hooks install|uninstall claude`: Claude Code calls `opmem flush` before it compacts a
conversation (PreCompact) and when a session ends (SessionEnd), so nothing is lost to compaction.

The user's settings.json is merged, never replaced: other keys and other hooks stay as they
are; installing twice adds nothing; a copy of the file as it was is kept beside it
(`settings.json.opmem-backup`) before the first change; uninstalling removes exactly the
entries whose command is the one opmem installed, and the empty lists it leaves.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import OpmemError
from ..store.files import write_atomic

EVENTS = ("PreCompact", "SessionEnd")
HOOK_TIMEOUT_S = 120
BACKUP_SUFFIX = ".opmem-backup"


class HooksError(OpmemError):
    pass


@dataclass(frozen=True, slots=True)
class HooksChange:
    settings: Path
    added: tuple[str, ...] = ()  # events that got the hook
    removed: tuple[str, ...] = ()
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)


def default_settings_path() -> Path:
    return Path.home() / ".claude" / "settings.json"


def flush_command(home_path: Path | None = None, executable: str | None = None) -> str:
    """The command line Claude Code runs: opmem reads the hook's JSON on stdin."""
    exe = executable or shutil.which("opmem")
    parts = [exe] if exe else [sys.executable, "-m", "opmem_tui.cli"]
    if home_path is not None:
        parts += ["--home", str(home_path)]
    parts += ["flush", "--hook", "claude"]
    return shlex.join(parts)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HooksError(f"{path}: cannot read ({exc})") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HooksError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}; not changed"
        ) from None
    if not isinstance(data, dict):
        raise HooksError(f"{path}: expected a JSON object; not changed")
    return data


def _hooks_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise HooksError(f"{path}: `hooks` is not an object; not changed")
    return hooks


def _has(groups: list[Any], command: str) -> bool:
    return any(
        isinstance(group, Mapping)
        and any(isinstance(h, Mapping) and h.get("command") == command for h in group.get("hooks") or ())
        for group in groups
    )


def _save(path: Path, data: dict[str, Any], original: bytes | None) -> Path | None:
    backup = None
    if original is not None:
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        if not backup.exists():
            write_atomic(backup, original)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return backup


def install(command: str, settings: Path | None = None) -> HooksChange:
    """Add the flush hook to PreCompact and SessionEnd (where it is not already)."""
    path = Path(settings) if settings is not None else default_settings_path()
    original = path.read_bytes() if path.exists() else None
    data = _load(path)
    hooks = _hooks_table(data, path)
    added = []
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise HooksError(f"{path}: hooks.{event} is not a list; not changed")
        if _has(groups, command):
            continue
        groups.append({"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]})
        added.append(event)
    if not added:
        return HooksChange(path)
    backup = _save(path, data, original)
    return HooksChange(path, added=tuple(added), backup=backup)


def uninstall(command: str, settings: Path | None = None) -> HooksChange:
    """Remove the hook entries with exactly this command, and the groups and lists they leave empty."""
    path = Path(settings) if settings is not None else default_settings_path()
    if not path.exists():
        return HooksChange(path)
    original = path.read_bytes()
    data = _load(path)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return HooksChange(path)
    removed = []
    for event in EVENTS:
        groups = hooks.get(event)
        if not isinstance(groups, list) or not _has(groups, command):
            continue
        kept_groups = []
        for group in groups:
            if isinstance(group, Mapping) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not (isinstance(h, Mapping) and h.get("command") == command)]
                if len(inner) != len(group["hooks"]):
                    if inner:
                        kept_groups.append({**group, "hooks": inner})
                    continue
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
        removed.append(event)
    if not removed:
        return HooksChange(path)
    if not hooks:
        del data["hooks"]
    backup = _save(path, data, original)
    return HooksChange(path, removed=tuple(removed), backup=backup)


def installed_commands(settings: Path | None = None) -> list[str]:
    """The opmem flush commands the settings hold (to find an install made with another home)."""
    path = Path(settings) if settings is not None else default_settings_path()
    try:
        hooks = _load(path).get("hooks") or {}
    except HooksError:
        return []
    found: dict[str, None] = {}
    for event in EVENTS:
        for group in hooks.get(event) or ():
            for hook in (group.get("hooks") or ()) if isinstance(group, Mapping) else ():
                command = hook.get("command") if isinstance(hook, Mapping) else None
                if isinstance(command, str) and command.endswith("flush --hook claude"):
                    found[command] = None
    return list(found)


def read_hook_input(raw: str) -> tuple[str, str]:
    """(Claude session id, transcript path) from the JSON Claude Code writes to a hook's stdin."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HooksError(f"hook input on stdin is not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise HooksError("hook input on stdin is not a JSON object")
    session = data.get("session_id")
    transcript = data.get("transcript_path")
    if not isinstance(session, str) or not session:
        raise HooksError("hook input names no session_id")
    return session, transcript if isinstance(transcript, str) else ""


def env_home() -> Path | None:
    value = os.environ.get("OPMEM_HOME")
    return Path(value) if value else None
