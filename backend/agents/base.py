"""What every agent module describes (AgentSpec) and gets (Context): where its user-level files
are, what opmem adds to each, and the command lines that start opmem from the agent."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .parts import Part


@dataclass(frozen=True)
class Context:
    """The user's home folder (where agents keep their config), the environment that moves it
    (CODEX_HOME, XDG_CONFIG_HOME), the opmem home, and the bodies of opmem's blocks."""

    user_home: Path
    env: Mapping[str, str]
    opmem_home: Path
    executable: tuple[str, ...]
    global_body: str = ""

    def argv(self, *args: str) -> list[str]:
        return [*self.executable, "--home", str(self.opmem_home), *args]

    def command(self, *args: str) -> str:
        return shlex.join(self.argv(*args))

    @property
    def mcp_argv(self) -> list[str]:
        return self.argv("mcp")


@dataclass(frozen=True)
class AgentSpec:
    id: str
    label: str
    binary: str  # on PATH when the agent is installed
    config_dir: Callable[[Context], Path]  # exists when the agent has run for this user
    parts: Callable[[Context], list[Part]]
    in_repo_file: str  # the project instruction file the agent reads: CLAUDE.md, AGENTS.md, GEMINI.md
    notes: str = ""  # shown by --status: what the agent gets at session start

    def found(self, ctx: Context, made_by_opmem: frozenset[str] = frozenset()) -> bool:
        """Installed (its command on PATH) or used (its config folder exists, and opmem did not make
        it, or its sessions are where `opmem import` reads them: OpenCode keeps them apart from its
        config)."""
        folder = self.config_dir(ctx)
        if folder.is_dir() and str(folder) not in made_by_opmem:
            return True
        return shutil.which(self.binary, path=ctx.env.get("PATH")) is not None or self.has_sessions(ctx)

    def has_sessions(self, ctx: Context) -> bool:
        """The importer of the same name has a default folder of this user's that exists."""
        from ..importers import SOURCES  # the importers' registry says where each agent keeps its sessions

        importer = SOURCES.get(self.id)
        if importer is None or ctx.user_home != Path.home():  # the importers look in this process's home
            return False
        try:
            return any(path.exists() for path in importer.default_paths())
        except OSError:
            return False
