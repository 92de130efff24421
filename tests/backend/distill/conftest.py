"""Helpers for the distillation tests: real fixtures imported into a Home in tmp_path."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from opmem_tui.backend.distill.collect import collect
from opmem_tui.backend.distill.extract import extract_rules
from opmem_tui.backend.distill.model import Extraction, SessionBatch
from opmem_tui.backend.distill.state import DistillState
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import

REPO = Path(__file__).resolve().parents[3]


def fixtures_dir() -> Path:
    env = os.environ.get("OPMEM_FIXTURES")
    return Path(env) if env else (REPO / ".." / "shared" / "fixtures").resolve()


def fixture(relative: str) -> Path:
    path = fixtures_dir() / relative
    if not path.is_file():
        pytest.skip(f"real fixture {relative} is absent")
    return path


def import_into(home: Home, source: str, path: Path) -> None:
    report = run_import(home, source, [path], bind=False)
    assert not report.warnings, report.warnings


def batches(home: Home) -> list[SessionBatch]:
    return list(collect(home.sessions, None, DistillState(), commits=False).batches)


def extract_all(home: Home, when: float = 1_800_000_000.0) -> dict[str, Extraction]:
    return {b.session.session_id: extract_rules(b, ingestion_time=when) for b in batches(home)}


def locomo_to_jsonl(conversation: Path, out: Path) -> Path:
    """One opmem session per LoCoMo session, each turn's dia_id as its id, the session date as timestamps.

    Reads only speaker_a, speaker_b, session_N and session_N_date_time: never the questions,
    observations, summaries or event annotations.
    """
    data = json.loads(conversation.read_text(encoding="utf-8"))
    first = data["speaker_a"]
    lines = []
    number = 1
    while f"session_{number}" in data:
        when = dt.datetime.strptime(data[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y")
        when = when.replace(tzinfo=dt.UTC)
        for index, turn in enumerate(data[f"session_{number}"]):
            record = {
                "session": f"{conversation.stem}-s{number}",
                "id": turn["dia_id"],
                "role": "user" if turn["speaker"] == first else "assistant",
                "speaker": turn["speaker"],
                "content": turn["text"],
                "timestamp": (when + dt.timedelta(seconds=index)).isoformat(),
            }
            if turn.get("blip_caption"):
                record["metadata"] = {"blip_caption": turn["blip_caption"]}
            lines.append(json.dumps(record))
        number += 1
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


class Chat:
    """Writes a coding session turn by turn through the store (prompt, tool calls, reply)."""

    def __init__(self, home: Home, sid: str, start: float = 1_700_000_000.0, project_id: str = "") -> None:
        self.home, self.sid, self.clock, self.project_id = home, sid, start, project_id
        self.last: str | None = None
        self.assistant: str | None = None

    def tick(self) -> float:
        self.clock += 1.0
        return self.clock

    def user(self, text: str) -> str:
        meta = {"cwd": "/work/proj"} if self.last is None else None
        node = self.home.sessions.append_message(
            self.sid, "user", text, parent_id=self.last, created_at=self.tick(), session_meta=meta
        )
        self.last = node.id
        return node.id

    def reply(self, text: str = "", model: str = "claude-test-1") -> str:
        node = self.home.sessions.append_message(
            self.sid, "assistant", text, parent_id=self.last, name=model, created_at=self.tick()
        )
        self.last = self.assistant = node.id
        return node.id

    def tool(self, name: str, args: dict, output: str = "", **metadata) -> str:
        node = self.home.sessions.append_message(
            self.sid,
            "tool",
            output,
            parent_id=self.assistant,
            called_by=self.assistant,
            name=name,
            input=args,
            metadata=metadata or None,
            created_at=self.tick(),
        )
        return node.id

    def commit(self) -> None:
        self.home.sessions.commit_turn(self.sid)
