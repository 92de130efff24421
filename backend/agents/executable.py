"""How an agent starts opmem: the argv written into its config (MCP entry, hooks)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def opmem_executable() -> list[str]:
    """The installed `opmem` by absolute path (beside this Python first, then PATH), so the agent
    starts it from any shell; `python -m opmem_tui.entry` when no script is installed."""
    script = Path(sys.executable).parent / "opmem"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    found = shutil.which("opmem")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "opmem_tui.entry"]
