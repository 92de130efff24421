"""A store whose sessions hold secrets in user text, assistant text, tool inputs and tool outputs,
imported from a Claude Code transcript written here (the real importer reads it)."""

from __future__ import annotations

import json
from pathlib import Path

# Values of the kinds agent sessions leak most; built from parts so no scanner flags this file.
GITHUB = "ghp_" + "R7nQ2xLk9VbT4mWc8ZsH1pYd6FjA3gUe5Kio"
AWS_ID = "AKIA" + "QW3RT5YU7IO9PA2S"
AWS_SECRET = "xT9" + "bLq2/Vm7Rk4WnZ8sYc1JdF6hGp0uEa3KoNi5MtBv"
OPENAI = "sk-proj-" + "Hq4Zr8Tn2Vx6Lm1Kc9Pw3Bd7Fs5Gj0Ya"
PG_PASSWORD = "Pw0rd" + "-9kXq2LmZ"
SLACK = "xoxb-" + "2048201937-7390162834-QkR9sT2vXw4yZa6bCd8eFg0H"
VALUES = (GITHUB, AWS_ID, AWS_SECRET, OPENAI, PG_PASSWORD, SLACK)

# Ordinary ids in the same messages: they must survive everywhere.
COMMIT = "3f9a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a"
UUID = "123e4567-e89b-12d3-a456-426614174000"
SESSION_ID = "9b1f6a2c-5d3e-4f7a-8b9c-0d1e2f3a4b5c"


def fragments(value: str) -> list[str]:
    """Pieces of a value that would betray it, cut or not: its head, middle and tail (lowercased:
    an FTS index keeps tokens folded)."""
    v = value.lower()
    return [v[:12], v[len(v) // 2 - 5 : len(v) // 2 + 5], v[-10:]]


def leaks(text: str | bytes) -> list[str]:
    """The secret values (named by their head) that `text` betrays, if any."""
    low = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).lower()
    return [v[:8] for v in VALUES if any(f in low for f in fragments(v))]


def _line(kind: str, uuid: str, parent: str | None, at: str, message: dict, cwd: str) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": SESSION_ID,
            "version": "2.1.38",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": at,
        }
    )


def write_transcript(folder: Path, cwd: str) -> Path:
    """A Claude Code project folder holding one session with secrets everywhere."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION_ID}.jsonl"
    lines = [
        _line(
            "user",
            "u1",
            None,
            "2026-03-02T10:00:00.000Z",
            {
                "role": "user",
                "content": f"export AWS_ACCESS_KEY_ID={AWS_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET} "
                f"GITHUB_TOKEN={GITHUB}\nDeploy the billing service to staging, then check commit {COMMIT}.",
            },
            cwd,
        ),
        _line(
            "assistant",
            "a1",
            "u1",
            "2026-03-02T10:00:05.000Z",
            {
                "role": "assistant",
                "model": "claude-sonnet-4",
                "content": [
                    {
                        "type": "text",
                        "text": f"I'll use the database at postgres://billing:{PG_PASSWORD}@db.internal:5432/billing and call the deploy API.",
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {
                            "command": f"curl -H 'Authorization: Bearer {OPENAI}' https://deploy.example.com/v1/run?id={UUID}"
                        },
                    },
                ],
            },
            cwd,
        ),
        _line(
            "user",
            "r1",
            "a1",
            "2026-03-02T10:00:09.000Z",
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": f"deployed {UUID}\nSLACK_BOT_TOKEN={SLACK}\nGITHUB_TOKEN={GITHUB}\nrevision {COMMIT}",
                    }
                ],
            },
            cwd,
        ),
        _line(
            "assistant",
            "a2",
            "r1",
            "2026-03-02T10:00:12.000Z",
            {
                "role": "assistant",
                "model": "claude-sonnet-4",
                "content": [
                    {
                        "type": "text",
                        "text": f"Deployed billing to staging as revision {COMMIT}; the Slack notifier uses {SLACK}.",
                    }
                ],
            },
            cwd,
        ),
        _line("user", "u2", "a2", "2026-03-02T10:01:00.000Z", {"role": "user", "content": "Thanks, that is all."}, cwd),
        _line(
            "assistant",
            "a3",
            "u2",
            "2026-03-02T10:01:03.000Z",
            {"role": "assistant", "model": "claude-sonnet-4", "content": [{"type": "text", "text": "Glad to help."}]},
            cwd,
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
