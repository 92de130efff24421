"""A synthetic corpus of realistic Claude Code sessions (typed prompts, streaming-split assistant
records, tool results with structured toolUseResult, hook progress, file-history snapshots,
turn durations), generated once and cached under bench/out/ (import_throughput.py, import_ab.py
and privacy_overhead.py import it)."""

from __future__ import annotations

import json
import os
import random
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import OUT

WORDS = [
    "the",
    "module",
    "test",
    "fix",
    "function",
    "returns",
    "value",
    "error",
    "file",
    "path",
    "config",
    "server",
    "request",
    "handler",
    "cache",
    "index",
    "query",
    "user",
    "session",
    "branch",
    "commit",
    "parse",
    "record",
    "line",
    "token",
    "model",
    "tool",
    "result",
]
TOOLS = ("Read", "Bash", "Edit", "Grep", "Glob", "Write", "WebFetch")


class Corpus:
    """Writes sessions the way Claude Code 2.1 does, deterministically from a seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clock = datetime(2025, 9, 1, tzinfo=UTC)
        self.calls, self.tools, self.lines = (2, 6), (1, 3), (5, 120)  # per turn, per call, per result

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def code(self, lines: int) -> str:
        return "\n".join(f"{i:>6}→    {self.words(3, 12)}" for i in range(1, lines + 1))

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def stamp(self) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(5, 4000))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def session(self, target_bytes: int, turns: int | None = None) -> list[str]:
        """One session's lines: `turns` prompts when given, else prompts until `target_bytes`."""
        sid = self.uid()
        env = {
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/projects/shop",
            "sessionId": sid,
            "version": "2.1.40",
            "gitBranch": "main",
            "slug": "bench-session",
        }
        out: list[str] = []
        size = 0
        last: str | None = None

        def emit(record: dict) -> None:
            nonlocal size
            line = json.dumps(record, ensure_ascii=False) + "\n"
            out.append(line)
            size += len(line)

        def rec(kind: str, parent: str | None, **fields) -> str:
            uid = self.uid()
            emit({"parentUuid": parent, **env, "type": kind, **fields, "uuid": uid, "timestamp": self.stamp()})
            return uid

        made = 0
        while size < target_bytes if turns is None else made < turns:
            made += 1
            prompt_id = self.uid()
            emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": prompt_id,
                    "snapshot": {"messageId": prompt_id, "trackedFileBackups": {}, "timestamp": self.stamp()},
                    "isSnapshotUpdate": False,
                }
            )
            emit(
                {
                    "parentUuid": last,
                    **env,
                    "type": "user",
                    "message": {"role": "user", "content": self.words(8, 80)},
                    "uuid": prompt_id,
                    "timestamp": self.stamp(),
                    "permissionMode": "default",
                }
            )
            last = prompt_id
            for call in range(self.rng.randint(*self.calls)):
                msg = f"msg_{self.rng.getrandbits(96):024x}"
                req = f"req_{self.rng.getrandbits(96):024x}"
                usage = {
                    "input_tokens": self.rng.randint(1, 50),
                    "cache_read_input_tokens": self.rng.randint(1000, 90000),
                    "cache_creation_input_tokens": self.rng.randint(0, 5000),
                    "output_tokens": self.rng.randint(1, 900),
                    "service_tier": "standard",
                }

                def part(block: dict, parent: str | None, msg: str = msg, req: str = req, usage: dict = usage) -> str:
                    return rec(
                        "assistant",
                        parent,
                        message={
                            "model": "claude-opus-4-6",
                            "id": msg,
                            "type": "message",
                            "role": "assistant",
                            "content": [block],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                        requestId=req,
                    )

                if self.rng.random() < 0.6:
                    last = part({"type": "thinking", "thinking": self.words(30, 250), "signature": "x" * 200}, last)
                last = part({"type": "text", "text": self.words(10, 120)}, last)
                final = call > 0 and self.rng.random() < 0.3
                if final:
                    break
                calls = []
                for _ in range(self.rng.randint(*self.tools)):
                    tool_id = f"toolu_{self.rng.getrandbits(96):024x}"
                    name = self.rng.choice(TOOLS)
                    args = {"file_path": f"/home/dev/projects/shop/src/{self.rng.choice(WORDS)}.py"}
                    if name in ("Write", "Edit"):
                        args["content"] = self.code(self.rng.randint(5, 60))
                    elif name == "Bash":
                        args = {
                            "command": f"pytest -q tests/test_{self.rng.choice(WORDS)}.py",
                            "description": self.words(3, 8),
                        }
                    last = part({"type": "tool_use", "id": tool_id, "name": name, "input": args}, last)
                    calls.append((tool_id, name, last))
                    hook = rec(
                        "progress",
                        last,
                        data={
                            "type": "hook_progress",
                            "hookEvent": "PostToolUse",
                            "hookName": "PostToolUse:" + name,
                            "command": "notify.sh",
                        },
                        toolUseID=tool_id,
                        parentToolUseID=tool_id,
                    )
                    rec(
                        "progress",
                        hook,
                        data={
                            "type": "hook_progress",
                            "hookEvent": "PostToolUse",
                            "hookName": "PostToolUse:" + name,
                            "command": "lint.sh",
                        },
                        toolUseID=tool_id,
                        parentToolUseID=tool_id,
                    )
                for tool_id, name, caller in calls:
                    body = self.code(self.rng.randint(*self.lines)) if name in ("Read", "Grep") else self.words(5, 200)
                    meta = (
                        {
                            "type": "text",
                            "file": {
                                "filePath": "/x.py",
                                "content": body,
                                "numLines": body.count("\n") + 1,
                                "startLine": 1,
                                "totalLines": 400,
                            },
                        }
                        if name == "Read"
                        else {"stdout": body[:200], "stderr": "", "interrupted": False, "isImage": False}
                    )
                    last = rec(
                        "user",
                        caller,
                        message={
                            "role": "user",
                            "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": body}],
                        },
                        toolUseResult=meta,
                        sourceToolAssistantUUID=caller,
                    )
            rec("system", last, subtype="turn_duration", durationMs=self.rng.randint(2000, 90000), isMeta=False)
        return out


def corpus(total_mb: int) -> Path:
    """bench/out/claude-corpus-<N>mb/projects/-home-dev-projects-shop/*.jsonl (cached)."""
    root = OUT / f"claude-corpus-{total_mb}mb"
    done = root / ".complete"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    folder = root / "projects" / "-home-dev-projects-shop"
    folder.mkdir(parents=True)
    gen = Corpus(seed=total_mb)
    per_file = 2_500_000
    written = 0
    while written < total_mb * 1_000_000:
        lines = gen.session(per_file)
        name = json.loads(lines[1])["sessionId"]
        data = "".join(lines)
        (folder / f"{name}.jsonl").write_text(data, encoding="utf-8")
        written += len(data.encode())
    old = 1_600_000_000
    for f in folder.iterdir():
        os.utime(f, (old, old))
    done.write_text("ok")
    return root


def many_corpus(sessions: int, turns: int = 20) -> Path:
    """bench/out/claude-many-<N>-t<turns>/projects/<project>/*.jsonl: N sessions of `turns` turns,
    ~270 KB and ~150 messages each with realistic tool output (issue 41's history: 3,000 sessions,
    680 MB, 480,000 messages, 60,000 turns), as a long-used ~/.claude/projects holds; cached."""
    root = OUT / f"claude-many-{sessions}-t{turns}"
    done = root / ".complete"
    if done.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    gen = Corpus(seed=sessions)
    gen.calls, gen.tools, gen.lines = (1, 3), (1, 1), (3, 40)  # lighter turns than corpus()'s
    for n in range(sessions):
        folder = root / "projects" / f"-home-dev-projects-app{n % 40:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = gen.session(0, turns=turns)
        (folder / f"{json.loads(lines[1])['sessionId']}.jsonl").write_text("".join(lines), encoding="utf-8")
    old = 1_600_000_000
    for f in root.rglob("*.jsonl"):
        os.utime(f, (old, old))
    done.write_text("ok")
    return root


def files_of(root: Path) -> list[Path]:
    return sorted((root / "projects").rglob("*.jsonl"))
