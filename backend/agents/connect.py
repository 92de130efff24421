"""`opmem connect AGENT` / `opmem disconnect AGENT` / `opmem connect --status`: the facade.

    connect(home, agent, user_home, env, in_repo=None) -> Change
    disconnect(home, agent, user_home, env) -> Change
    status(home, user_home, env) -> list[AgentStatus]
    refresh(home) -> list[str]           the connected agents' blocks rewritten (after a sleep)

Every file an agent gets is planned first (read, edited as text, checked), and only when all
of them plan cleanly is anything written: a config that does not parse is an error naming
it, and no file changes. Before opmem first changes a file, a copy of it as it was is kept
beside it (`<file>.opmem-backup`). What connect added is recorded in <home>/agents.json (the
containers it created, the separators it put before a block, the files and folders it made),
so disconnect takes out exactly that and the file reads byte for byte as before; a file
connect created is deleted again when nothing else was put in it meanwhile.

Only agents' user-level files are written, never the user's repositories, unless asked:
`in_repo` writes the project's block into that project's CLAUDE.md / AGENTS.md / GEMINI.md.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..file_lock import file_lock
from ..memory.core import core_path
from ..memory.slugs import safe_name
from ..model import OpmemError
from ..privacy import redact_text
from ..recall.registry import tools_line
from ..safe_text import plain
from ..store.files import write_atomic
from . import claude, codex, copilot, cursor, gemini, opencode
from .base import AgentSpec, Context
from .claude_hooks import BACKUP_SUFFIX as BACKUP_SUFFIX  # connect's backups are the hooks' ones
from .claude_hooks import read_only, write_with_backup
from .executable import opmem_executable
from .parts import ConfigError, Part, TextBlock, merge_meta
from .session_start import GLOBAL_CACHE, cache_path, write_cache

if TYPE_CHECKING:
    from ..home import Home

AGENTS: dict[str, AgentSpec] = {
    s.id: s for s in (claude.SPEC, codex.SPEC, gemini.SPEC, cursor.SPEC, opencode.SPEC, copilot.SPEC)
}
STATE_FILE = "agents.json"
NO_MEMORY = "No memory consolidated yet: this block fills in after the next `opmem sleep`."


class ConnectError(OpmemError):
    pass


@dataclass(frozen=True)
class FileChange:
    path: Path
    what: str
    action: str  # "added", "updated", "removed", "deleted", "unchanged"
    backup: Path | None = None


@dataclass(frozen=True)
class Change:
    agent: str
    files: tuple[FileChange, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for f in self.files)


@dataclass(frozen=True)
class PartStatus:
    path: Path
    what: str
    present: bool
    problem: str = ""


@dataclass(frozen=True)
class AgentStatus:
    id: str
    label: str
    found: bool
    connected: bool
    parts: tuple[PartStatus, ...] = ()
    in_repo: tuple[str, ...] = ()
    notes: str = ""


# -- the state file -----------------------------------------------------------------------------


def _state_path(home: Home) -> Path:
    return home.path / STATE_FILE


def _read_state(home: Home) -> dict[str, Any]:
    path = _state_path(home)
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {"agents": {}}
    except (OSError, ValueError) as exc:
        raise ConnectError(f"{path}: cannot read ({exc}); nothing was changed") from None
    if not isinstance(data, dict) or not isinstance(data.get("agents"), dict):
        raise ConnectError(f'{path}: expected {{"agents": {{...}}}}; nothing was changed')
    return data


def _write_state(home: Home, state: dict[str, Any]) -> None:
    path = _state_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(state, indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))


# -- blocks -------------------------------------------------------------------------------------


def _core(path: Path) -> str:
    try:
        return path.read_bytes()[: 64 * 1024].decode("utf-8", "replace")
    except OSError:
        return ""


def block_body(core: str, title: str) -> str:
    """A block's Markdown: the core block as text, then how to reach the rest (the MCP tools)."""
    text = plain(redact_text(core)).strip("\n") or NO_MEMORY
    fence = "````" if "```" in text else "```"
    return f"## {title}\n\n{fence}text\n{text}\n{fence}\n\n{tools_line()}\n"


def global_body(home: Home) -> str:
    return block_body(_core(core_path(home.memory_dir)), "opmem memory (global)")


def project_body(home: Home, project_id: str, name: str) -> str:
    return block_body(_core(core_path(home.memory_dir, project_id)), f"opmem memory · project {name}")


def context(home: Home, user_home: Path, env: Mapping[str, str] | None = None) -> Context:
    return Context(
        user_home=Path(user_home),
        env=dict(os.environ if env is None else env),
        opmem_home=home.path.absolute(),
        executable=tuple(opmem_executable()),
        global_body=global_body(home),
    )


# -- planning and writing -----------------------------------------------------------------------


@dataclass
class _Plan:
    path: Path
    original: bytes | None  # None: the file does not exist
    text: str
    parts: list[tuple[Part, dict[str, Any]]] = field(default_factory=list)


def _read(path: Path) -> tuple[bytes | None, str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        raise ConnectError(f"{path}: cannot read ({exc.strerror or exc}); nothing was changed") from None
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConnectError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start}); nothing was changed") from None


def _plans(parts: list[Part]) -> dict[Path, _Plan]:
    plans: dict[Path, _Plan] = {}
    for part in parts:
        if part.path not in plans:
            original, text = _read(part.path)
            if original is not None and read_only(part.path):
                raise ConnectError(f"{part.path}: the file is read-only; nothing was changed")
            plans[part.path] = _Plan(part.path, original, text)
    return plans


def _missing_dirs(path: Path) -> list[Path]:
    made = []
    parent = path.parent
    while not parent.exists():
        made.append(parent)
        parent = parent.parent
    return made


def _write(plan: _Plan, new: str) -> tuple[Path | None, list[Path]]:
    """Write `new` (backup first, once; the file's mode kept); returns (backup, the folders it had to make)."""
    made = _missing_dirs(plan.path)
    return write_with_backup(plan.path, new.encode("utf-8"), plan.original), made


def _spec(agent: str) -> AgentSpec:
    spec = AGENTS.get(agent)
    if spec is None:
        raise ConnectError(f"unknown agent {agent!r}; one of: {', '.join(AGENTS)}")
    return spec


def _in_repo_part(home: Home, spec: AgentSpec, folder: Path) -> TextBlock:
    project = home.projects.find(folder)
    if project is None:
        raise ConnectError(f"{folder} is not in a bound project (bind it first: opmem projects add {folder})")
    return TextBlock(Path(project.workdir) / spec.in_repo_file, spec.id, project_body(home, project.id, project.name))


def connect(
    home: Home, agent: str, user_home: Path, env: Mapping[str, str] | None = None, in_repo: Path | None = None
) -> Change:
    """Register opmem with the agent (and write the project block into `in_repo`'s repo)."""
    spec = _spec(agent)
    ctx = context(home, user_home, env)
    parts = spec.parts(ctx)
    if in_repo is not None:
        parts.append(_in_repo_part(home, spec, in_repo))
    with file_lock(_state_path(home), consequence="nothing was changed"):
        state = _read_state(home)
        record = state["agents"].get(agent) or {}
        files = dict(record.get("files") or {})
        plans = _plans(parts)
        new_texts: dict[Path, str] = {}
        for part in parts:  # plan everything first: one broken file and nothing is written
            plan = plans[part.path]
            current = new_texts.get(part.path, plan.text)
            try:
                new, meta = part.add(current)
            except ConfigError as exc:
                raise ConnectError(str(exc)) from None
            if new != current or plan.original is None:
                new_texts[part.path] = new
            plan.parts.append((part, meta))
        changes = []
        for path, plan in plans.items():
            new = new_texts.get(path, plan.text)
            key = str(path)
            entry = dict(files.get(key) or {"created": plan.original is None})
            metas = dict(entry.get("parts") or {})
            for part, meta in plan.parts:
                if meta or part.what not in metas:
                    metas[part.what] = merge_meta(metas.get(part.what, {}), meta)
            entry["parts"] = metas
            if plan.original is not None and new == plan.text:
                changes.append(FileChange(path, _whats(plan), "unchanged"))
            else:
                backup, made = _write(plan, new)
                if made:
                    entry["dirs"] = sorted({*entry.get("dirs", []), *map(str, made)})
                changes.append(FileChange(path, _whats(plan), "added" if plan.original is None else "updated", backup))
            files[key] = entry
        new_record = {
            "connected_at": record.get("connected_at") or time.time(),
            "files": files,
            "in_repo": sorted({*record.get("in_repo", []), *([str(parts[-1].path)] if in_repo is not None else [])}),
            "command": list(ctx.executable),
        }
        if new_record != record:
            state["agents"][agent] = new_record
            _write_state(home, state)
    if agent == "claude":
        write_contexts(home)
    return Change(agent, tuple(changes))


def _drop_spent_backup(path: Path, backup: Path | None) -> Path | None:
    """The backup of a file a disconnect left exactly as it was before opmem first changed it is
    spent: removed. Otherwise (the file changed since) it is kept, and said."""
    if backup is None:
        return None
    try:
        if backup.read_bytes() == path.read_bytes():
            backup.unlink()
            return None
    except OSError:
        pass
    return backup


def _whats(plan: _Plan) -> str:
    return ", ".join(dict.fromkeys(part.what for part, _ in plan.parts))


def disconnect(home: Home, agent: str, user_home: Path, env: Mapping[str, str] | None = None) -> Change:
    """Remove exactly what connect added (found by the record, else by the current parts)."""
    spec = _spec(agent)
    ctx = context(home, user_home, env)
    parts: list[Part] = list(spec.parts(ctx))
    with file_lock(_state_path(home), consequence="nothing was changed"):
        state = _read_state(home)
        record = state["agents"].get(agent) or {}
        files = record.get("files") or {}
        for repo_file in record.get("in_repo") or ():
            parts.append(TextBlock(Path(repo_file), spec.id, ""))
        plans = _plans(parts)
        new_texts: dict[Path, str] = {}
        for part in parts:
            plan = plans[part.path]
            if plan.original is None:
                continue
            meta = ((files.get(str(part.path)) or {}).get("parts") or {}).get(part.what) or {}
            try:
                new_texts[part.path] = part.remove(new_texts.get(part.path, plan.text), meta)
            except ConfigError as exc:
                raise ConnectError(str(exc)) from None
            plan.parts.append((part, meta))
        changes = []
        folders: set[str] = set()
        for path, plan in plans.items():
            if plan.original is None:
                continue
            new = new_texts.get(path, plan.text)
            entry = files.get(str(path)) or {}
            if new == plan.text:
                changes.append(FileChange(path, _whats(plan), "unchanged"))
                continue
            empties = {part.empty for part, _ in plan.parts} | {""}
            if entry.get("created") and new in empties:
                path.unlink()
                folders.update(entry.get("dirs", []))
                changes.append(FileChange(path, _whats(plan), "deleted"))
            else:
                backup, _ = _write(plan, new)
                changes.append(FileChange(path, _whats(plan), "removed", _drop_spent_backup(path, backup)))
        for folder in sorted(folders, key=len, reverse=True):
            try:
                Path(folder).rmdir()  # the folders connect made, when empty: anything put there since stays
            except OSError:
                pass
        if agent in state["agents"]:
            del state["agents"][agent]
            _write_state(home, state)
    if agent == "claude":
        _drop_contexts(home)
    return Change(agent, tuple(changes))


def status(home: Home, user_home: Path, env: Mapping[str, str] | None = None) -> list[AgentStatus]:
    ctx = context(home, user_home, env)
    try:
        records = _read_state(home)["agents"]
    except ConnectError:
        records = {}
    result = []
    for spec in AGENTS.values():
        parts = []
        for part in spec.parts(ctx):
            try:
                _, text = _read(part.path)
                parts.append(PartStatus(part.path, part.what, part.present(text)))
            except (ConnectError, ConfigError) as exc:
                parts.append(PartStatus(part.path, part.what, False, str(exc)))
        record = records.get(spec.id) or {}
        result.append(
            AgentStatus(
                spec.id,
                spec.label,
                spec.found(ctx, _made_dirs(record)),
                bool(record),
                tuple(parts),
                tuple(record.get("in_repo") or ()),
                spec.notes,
            )
        )
    return result


def write_contexts(home: Home) -> int:
    """The SessionStart hook's precomputed contexts, one per core.md present (session_start.py)."""
    written = 0
    targets = [(core_path(home.memory_dir), GLOBAL_CACHE)]
    targets += [(core_path(home.memory_dir, p.id), safe_name(p.id)) for p in home.projects.list_projects()]
    for path, name in targets:
        if path.is_file():
            write_cache(str(home.path.absolute()), str(path), name)
            written += 1
    return written


def _drop_contexts(home: Home) -> None:
    folder = Path(cache_path(str(home.path.absolute()), "x")).parent
    for item in folder.glob("*.json") if folder.is_dir() else ():
        item.unlink()
    try:
        folder.rmdir()
    except OSError:
        pass


def _made_dirs(record: Mapping[str, Any]) -> frozenset[str]:
    files = record.get("files") or {}
    return frozenset(d for entry in files.values() if isinstance(entry, dict) for d in entry.get("dirs", ()))


def refresh(home: Home) -> list[str]:
    """Bring the blocks of the connected agents up to the core.md files just written; notes of
    what was rewritten or could not be. Never raises: the memory is written either way."""
    path = _state_path(home)
    if not path.exists():
        return []
    notes: list[str] = []
    try:
        records = _read_state(home)["agents"]
        if "claude" in records:
            write_contexts(home)
        body = global_body(home)
        for agent, record in sorted(records.items()):
            spec = AGENTS.get(agent)
            if spec is None:
                continue
            for key in record.get("files") or {}:
                metas = (record["files"][key] or {}).get("parts") or {}
                if "memory block" not in metas:
                    continue
                target = Path(key)
                if key in (record.get("in_repo") or ()):
                    project = home.projects.find(target.parent)
                    if project is None:
                        continue
                    part = TextBlock(target, agent, project_body(home, project.id, project.name))
                else:
                    part = TextBlock(target, agent, body)
                notes.extend(_refresh_one(part))
    except (OpmemError, OSError) as exc:
        notes.append(f"agent blocks not refreshed: {exc}")
    return notes


def _refresh_one(part: TextBlock) -> list[str]:
    original, text = _read(part.path)
    if original is None or not part.present(text):
        return []  # removed by hand: not put back
    new, _ = part.add(text)
    if new == text:
        return []
    if read_only(part.path):
        return [f"memory block not refreshed: {part.path} is read-only"]
    write_atomic(part.path, new.encode("utf-8"), mode=stat.S_IMODE(part.path.stat().st_mode))
    return [f"memory block refreshed: {part.path}"]
