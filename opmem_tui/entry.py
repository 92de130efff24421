"""The `opmem` console script: `opmem [--home H] hook session-start` answers before click,
rich or the backend are imported (an agent runs it before every session; see
backend/agents/session_start.py); everything else is opmem_tui.cli."""

from __future__ import annotations

import sys


def _fast_hook(argv: list[str]) -> tuple[str | None, bool]:
    """(home, True) when argv is exactly `[--home H | --home=H] hook session-start`."""
    home = None
    rest = argv
    if rest[:1] == ["--home"] and len(rest) >= 2:
        home, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--home="):
        home, rest = rest[0].split("=", 1)[1], rest[1:]
    return home, rest == ["hook", "session-start"]


def main() -> None:
    home, fast = _fast_hook(sys.argv[1:])
    if fast:
        from .backend.agents.session_start import main as session_start

        sys.exit(session_start(sys.argv[1:], home))
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
