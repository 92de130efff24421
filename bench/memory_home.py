"""A home whose memory is full: bench/memory_bench.py's generator (N events, 2N edges, 2N/5
entities, 2% of the edges superseded) written through the memory store.

The generated records name sessions `sess-00000`...; the memory hides records of sessions the
store does not have (deleted ones), so `sessions=True` also writes those sessions, as
meta.json-only folders (valid per the contract), for a bench that must see the records. A
bench that compares a screen with and without a memory leaves them out (the session list then
stays the same).
"""

from __future__ import annotations

import json
from pathlib import Path

from memory_bench import generate

from opmem_tui.backend.home import Home

NOW = 1_767_225_600.0


def fill_memory(home_path: Path, events: int, *, sessions: bool = False) -> None:
    home = Home(home_path, durable=False)
    generate(home.memory_dir, events, 2 * events)
    if sessions:
        write_sessions(home_path / "sessions", max(10, events // 50))


def write_sessions(folder: Path, count: int) -> None:
    for i in range(count):
        d = folder / f"sess-{i:05d}"
        (d / "history").mkdir(parents=True, exist_ok=True)
        meta = {
            "id": d.name,
            "title": f"generated session {i}",
            "title_source": "excerpt",
            "agent_id": "",
            "project_id": "proj",
            "source": "claude-code",
            "source_ref": None,
            "created_at": NOW - 86_400 * 60 + i,
            "updated_at": NOW - 86_400 * 60 + 2 * i,
            "head_id": None,
            "turns": 0,
            "preview": "",
        }
        (d / "meta.json").write_text(json.dumps(meta))
