"""Helpers for importer tests: the real fixtures folder (optional) and a synthetic Claude transcript."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore

REPO = Path(__file__).resolve().parents[3]


def fixtures_dir() -> Path:
    """$OPMEM_FIXTURES, else ../shared/fixtures beside the repository."""
    env = os.environ.get("OPMEM_FIXTURES")
    return Path(env) if env else (REPO / ".." / "shared" / "fixtures").resolve()


def fixture_file(relative: str) -> Path:
    path = fixtures_dir() / "transcripts" / relative
    if not path.is_file():
        pytest.skip(f"real fixture {relative} is absent")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


@pytest.fixture
def store(home: Home) -> SessionStore:
    return home.sessions


LAST: Any = object()


class Transcript:
    """Builds Claude Code records the way the CLI writes them (envelope, uuid chain, timestamps)."""

    def __init__(self, session: str = "11111111-2222-3333-4444-555555555555", cwd: str = "/tmp/project") -> None:
        self.session = session
        self.cwd = cwd
        self.records: list[dict[str, Any]] = []
        self.last: str | None = None
        self.count = 0
        self.clock = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)

    def _stamp(self, step: float = 1.0) -> str:
        self.clock += timedelta(seconds=step)
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _record(self, kind: str, parent: Any, **fields: Any) -> str:
        self.count += 1
        uuid = fields.pop("uuid", None) or f"{self.count:08d}-0000-4000-8000-{self.count:012d}"
        record = {
            "parentUuid": self.last if parent is LAST else parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.40",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": fields.pop("timestamp", None) or self._stamp(),
        }
        record.update(fields)
        self.records.append(record)
        self.last = uuid
        return uuid

    def prompt(self, text: str, parent: Any = LAST, **fields: Any) -> str:
        return self._record("user", parent, message={"role": "user", "content": text}, **fields)

    def user_blocks(self, blocks: list[Any], parent: Any = LAST, **fields: Any) -> str:
        return self._record("user", parent, message={"role": "user", "content": blocks}, **fields)

    def assistant(
        self,
        message_id: str,
        *blocks: dict[str, Any],
        parent: Any = LAST,
        request: str = "req_1",
        usage: dict[str, Any] | None = None,
        model: str = "claude-test-1",
        **fields: Any,
    ) -> str:
        message = {
            "model": model,
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": list(blocks),
            "stop_reason": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 5},
        }
        return self._record("assistant", parent, message=message, requestId=request, **fields)

    def result(self, tool_id: str, text: str, parent: Any = LAST, *, is_error: bool = False, **fields: Any) -> str:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        if is_error:
            block["is_error"] = True
        return self._record("user", parent, message={"role": "user", "content": [block]}, **fields)

    def progress(self, tool_id: str = "toolu_x", parent: Any = LAST) -> str:
        return self._record(
            "progress",
            parent,
            data={"type": "hook_progress", "hookEvent": "PostToolUse"},
            toolUseID=tool_id,
            parentToolUseID=tool_id,
        )

    def system(self, subtype: str, content: str | None = None, parent: Any = LAST, **fields: Any) -> str:
        extra = {"subtype": subtype, "level": "info", **fields}
        if content is not None:
            extra["content"] = content
        return self._record("system", parent, **extra)

    def meta(self, kind: str, **fields: Any) -> None:
        """A record without uuid (titles, summaries, queue operations)."""
        self.records.append({"type": kind, "sessionId": self.session, **fields})

    def lines(self) -> list[str]:
        return [json.dumps(r) + "\n" for r in self.records]

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(self.lines()), encoding="utf-8")
        old = 1_600_000_000
        os.utime(path, (old, old))  # a finished session: nothing is held back
        return path


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "sig"}


def tool_use(tool_id: str, name: str = "Bash", **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": input or {"command": "ls"}}
