"""A deterministic store whose session holds secrets everywhere the TUI shows text: the title
(the first prompt), user and assistant text, thinking, tool input, tool output, a file edit and
a branch reply, beside ordinary ids (a git hash, a UUID) that must stay readable."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.home import Home

from .sample_store import _COUNTS, DAY, NOW, node_id, pinned_clock

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # 36 alnum after the prefix
AWS = "AKIA" + "QWERTYUIOPASDF23"  # 16 upper alnum
OPENAI = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123"  # 30 after the prefix
GIT_HASH = "9fceb02d0ae598e95dc970b74767f19372d61af8"
UUID = "123e4567-e89b-12d3-a456-426614174000"
SECRETS = (GITHUB, AWS, OPENAI)
SID = "leaky-deploy"

USER_1 = f"Push the release with my token {GITHUB} please; the last good commit is {GIT_HASH}."
REPLY_1 = f"I will set AWS_ACCESS_KEY_ID={AWS} for run {UUID}, then push."
THINKING_1 = f"The access key {AWS} belongs to the deploy role."
CURL = f"curl -H 'Authorization: Bearer {OPENAI}' https://api.example.com/v1/models"
OUTPUT_1 = f"export GITHUB_TOKEN={GITHUB}\nrequest id {UUID}\nok"
RETRY_1 = f"Retry: exported the key {AWS} and pushed {GIT_HASH[:12]}."
USER_2 = "Thanks. Now list the files in dist/."
REPLY_2 = f"dist/ holds app.whl and app.tar.gz (built from {GIT_HASH[:12]})."


def build_secret_store(path: Path) -> Home:
    """One session, two turns: turn 1 carries every secret and a retry branch; turn 2 none."""
    _COUNTS.clear()
    home = Home(path, durable=False)
    home.ensure()
    store = home.sessions
    t0 = NOW - DAY
    with pinned_clock(t0):
        meta = {"source": "claude-code", "title": f"Push with {GITHUB}", "created_at": t0}
        u1 = store.append_message(SID, "user", USER_1, created_at=t0, session_meta=meta, node_id=node_id(SID))
        a1 = store.append_message(
            SID,
            "assistant",
            REPLY_1,
            name="claude-sonnet-4",
            created_at=t0 + 5,
            metadata={"thinking": THINKING_1},
            node_id=node_id(SID),
        )
        store.append_message(
            SID,
            "tool",
            OUTPUT_1,
            called_by=a1.id,
            name="bash",
            input={"command": CURL},
            created_at=t0 + 6,
            node_id=node_id(SID),
        )
        store.append_message(
            SID,
            "tool",
            "ok",
            called_by=a1.id,
            name="edit",
            input={"file_path": "deploy.env", "old": "GITHUB_TOKEN=", "new": f"GITHUB_TOKEN={GITHUB}"},
            created_at=t0 + 7,
            node_id=node_id(SID),
        )
        store.commit_turn(SID)
        store.append_message(SID, "user", USER_2, created_at=t0 + 60, node_id=node_id(SID))
        a2 = store.append_message(
            SID, "assistant", REPLY_2, name="claude-sonnet-4", created_at=t0 + 65, node_id=node_id(SID)
        )
        store.commit_turn(SID)
        # A retry of turn 1's reply: a branch whose reply holds a secret too (the branch picker).
        store.append_message(
            SID,
            "assistant",
            RETRY_1,
            parent_id=u1.id,
            name="claude-sonnet-4",
            created_at=t0 + 100,
            node_id=node_id(SID),
        )
        store.commit_turn(SID)
        store.switch_head(SID, a2.id)  # the two-turn line stays the current one
    return home


__all__ = ["AWS", "GITHUB", "GIT_HASH", "OPENAI", "SECRETS", "SID", "UUID", "build_secret_store"]
