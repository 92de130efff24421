"""`opmem hooks install|uninstall claude`: Claude Code calls `opmem flush` before it compacts a
conversation (PreCompact) and when a session ends (SessionEnd), so nothing is lost to compaction.

The user's settings.json is edited as text (backend/agents/jsonc.py), never rewritten: other
keys, other hooks and the file's own layout keep their bytes; installing twice adds nothing; a copy of the file as it was is kept beside it
(`settings.json.opmem-backup`) before the first change; uninstalling removes exactly the
entries whose command is the one opmem installed, and the empty lists it leaves.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import OpmemError
from ..store.files import write_atomic
from . import jsonc
from .executable import opmem_executable

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


def flush_command(
    home_path: Path | None = None, executable: str | None = None, prefix: Sequence[str] | None = None
) -> str:
    """The command line Claude Code runs: opmem reads the hook's JSON on stdin. `prefix`: the
    argv that starts opmem, else `executable`, else backend/agents/executable.opmem_executable (the
    one `opmem connect claude` writes, so the hooks of the two are the same entries). The home
    is absolute: Claude Code runs the hook from the session's folder."""
    if prefix:
        parts = list(prefix)
    elif executable:
        parts = [executable]
    else:
        parts = opmem_executable()
    if home_path is not None:
        parts += ["--home", str(Path(home_path).absolute())]
    parts += ["flush", "--hook", "claude"]
    return shlex.join(parts)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HooksError(f"{path}: cannot read ({exc})") from None
    data = _tree(text, path).data
    return data


def _tree(text: str, path: Path) -> jsonc.Node:
    """The settings file's tree (an empty file reads as `{}`); a clear error for anything else."""
    try:
        root = jsonc.parse(text if text.strip() else "{}", path)
    except jsonc.JsonSyntaxError as exc:
        raise HooksError(str(exc)) from None
    if root.kind != "object":
        raise HooksError(f"{path}: expected a JSON object; not changed")
    return root


def _has(groups: list[Any], command: str) -> bool:
    return any(
        isinstance(group, Mapping)
        and any(isinstance(h, Mapping) and h.get("command") == command for h in group.get("hooks") or ())
        for group in groups
    )


def add_hooks(
    text: str, path: Path, command: str, events: tuple[str, ...] = EVENTS, timeout: int = HOOK_TIMEOUT_S
) -> tuple[str, tuple[str, ...]]:
    """`text` (a settings.json) with `command` as a hook of each event that lacks it, the rest of
    the file as it was byte for byte; returns (text, the events that got it)."""
    text = text if text.strip() else "{}\n"
    group = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    added = []
    for event in events:
        root = _tree(text, path)
        hooks = root.get("hooks")
        if hooks is not None and hooks.kind != "object":
            raise HooksError(f"{path}: `hooks` is not an object; not changed")
        groups = hooks.get(event) if hooks is not None else None
        if groups is not None and groups.kind != "array":
            raise HooksError(f"{path}: hooks.{event} is not a list; not changed")
        if groups is not None and _has(groups.data, command):
            continue
        if groups is None:
            text, _ = jsonc.set_path(text, root, ("hooks", event), [group], path)
        else:
            text = jsonc.insert_entry(text, groups, None, group)
        added.append(event)
    return text, tuple(added)


def _ours(entry: jsonc.Entry, command: str) -> bool:
    return isinstance(entry.value.data, Mapping) and entry.value.data.get("command") == command


def remove_hooks(text: str, path: Path, command: str, events: tuple[str, ...] = EVENTS) -> tuple[str, tuple[str, ...]]:
    """`text` without the hook entries whose command is `command`, and the groups and lists they
    leave empty; returns (text, the events it was removed from)."""
    if not text.strip():
        return text, ()
    removed = []
    for event in events:
        found = False
        while True:  # one entry at a time, re-reading the spans after each cut
            hooks = _tree(text, path).get("hooks")
            groups = hooks.get(event) if hooks is not None and hooks.kind == "object" else None
            if groups is None or groups.kind != "array":
                break
            cut = None
            for gi, group in enumerate(groups.entries):
                inner = group.value.get("hooks") if group.value.kind == "object" else None
                if inner is None or inner.kind != "array":
                    continue
                mine = [hi for hi, h in enumerate(inner.entries) if _ours(h, command)]
                if mine:
                    cut = (groups, gi) if len(mine) == len(inner.entries) else (inner, mine[-1])
                    break
            if cut is None:
                if not groups.entries and found:
                    text = jsonc.remove_entry(text, hooks, hooks.index(event))
                break
            text = jsonc.remove_entry(text, *cut)
            found = True
        if found:
            removed.append(event)
    root = _tree(text, path)
    hooks = root.get("hooks")
    if removed and hooks is not None and hooks.kind == "object" and not hooks.entries:
        text = jsonc.remove_entry(text, root, root.index("hooks"))
    return text, tuple(removed)


def read_only(path: Path) -> bool:
    """An existing file its owner made read-only, or one this user may not write: opmem leaves
    it alone (replacing it by a rename would go through either)."""
    try:
        info = path.stat()
    except OSError:
        return False
    return not info.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK)


def write_with_backup(path: Path, data: bytes, original: bytes | None) -> Path | None:
    """Write `data` over `path` keeping its permission bits; before the first change, the file
    as it was goes to `<file>.opmem-backup` (same bits: a 0600 config stays private). Returns
    the backup's path (None for a file that did not exist)."""
    backup = None
    mode = None
    if original is not None:
        mode = stat.S_IMODE(path.stat().st_mode)
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        if not backup.exists():
            write_atomic(backup, original, mode=mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data, mode=mode)
    return backup


def _read(path: Path) -> tuple[str, bytes | None]:
    if not path.exists():
        return "", None
    try:
        original = path.read_bytes()
        text = original.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HooksError(f"{path}: cannot read ({exc}); not changed") from None
    if read_only(path):
        raise HooksError(f"{path}: the file is read-only; not changed")
    return text, original


def install(
    command: str, settings: Path | None = None, events: tuple[str, ...] = EVENTS, timeout: int = HOOK_TIMEOUT_S
) -> HooksChange:
    """Add the hook to each event (where it is not already); the rest of the file keeps its bytes."""
    path = Path(settings) if settings is not None else default_settings_path()
    text, original = _read(path)
    new, added = add_hooks(text, path, command, events, timeout)
    if not added:
        return HooksChange(path)
    return HooksChange(path, added=added, backup=write_with_backup(path, new.encode("utf-8"), original))


def uninstall(command: str, settings: Path | None = None, events: tuple[str, ...] = EVENTS) -> HooksChange:
    """Remove the hook entries with exactly this command, and the groups and lists they leave empty."""
    path = Path(settings) if settings is not None else default_settings_path()
    if not path.exists():
        return HooksChange(path)
    text, original = _read(path)
    new, removed = remove_hooks(text, path, command, events)
    if not removed:
        return HooksChange(path)
    return HooksChange(path, removed=removed, backup=write_with_backup(path, new.encode("utf-8"), original))


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
