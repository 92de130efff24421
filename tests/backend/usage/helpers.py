"""Sessions with recorded usage, written through the store (no importer), at fixed UTC times."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.usage.index import USAGE_FILE, UsageIndex


def at(text: str) -> float:
    """'2026-02-20 10:00' in UTC as a timestamp."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).timestamp()


def claude_usage(input: int, output: int, cache_write: int = 0, cache_read: int = 0) -> dict:
    return {
        "input_tokens": input,
        "output_tokens": output,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
    }


def add_reply(home: Home, sid: str, when: str, model: str, usage: dict, *, source: str = "claude-code") -> None:
    store = home.sessions
    ts = at(when)
    user = store.append_message(sid, "user", "do it", created_at=ts)
    reply = store.append_message(
        sid, "assistant", "done", parent_id=user.id, created_at=ts + 1, metadata={"model": model, "usage": usage}
    )
    store.commit_turn(sid, reply.id)
    store.update_session(sid, source=source)


def utc_index(home: Home) -> UsageIndex:
    return UsageIndex(Path(home.memory_dir) / USAGE_FILE, home.sessions, zone=UTC)
