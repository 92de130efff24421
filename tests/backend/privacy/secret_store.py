"""A store with secrets in every place a session holds text, built through the real SessionStore API.

Session `leaky`: secrets in the user's prompt (cut off in the commit message and the title), the
reply, a tool call's input and its output, and a retry branch whose reply holds another; session
`clean` holds none; session `other` holds one of its own. Values are assembled here so the test
files can grep for them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from opmem_tui.backend.home import Home

GITHUB = "ghp_" + "aB3dE5fG7h" * 3 + "K9mN2p"  # 36 after the prefix
AWS = "AKIA" + "Q7XK2M9PLR4TZW8N"
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1"
PG_PASSWORD = "p4ssw0rdXyz"
PG_URL = f"postgres://u:{PG_PASSWORD}@db/app"
OTHER = "ghp_" + "Qq1Ww2Ee3R" * 3 + "t5Yy6U"
# What must be gone after a purge (the start of each is enough to give it away).
VALUES = (GITHUB, AWS, OPENAI, PG_PASSWORD, OTHER)
FRAGMENTS = tuple(v[: max(8, len(v) // 2)] for v in VALUES)


def build(home: Home) -> dict[str, str]:
    """Three sessions; returns the node ids the tests name."""
    store = home.sessions
    ids: dict[str, str] = {}
    sid = "leaky"
    prompt = f"my deploy key is stored here, the value is {GITHUB} please push"
    u1 = store.append_message(sid, "user", prompt, node_id="u1", created_at=1000.0)
    a1 = store.append_message(
        sid, "assistant", f"I will connect with {PG_URL} first.", node_id="a1", created_at=1001.0, name="model-x"
    )
    t1 = store.append_message(
        sid,
        "tool",
        "HTTP/1.1 200 OK",
        called_by=a1.id,
        name="bash",
        input={"command": f"curl -H 'Authorization: Bearer {OPENAI}' https://api.example"},
        node_id="t1",
        created_at=1002.0,
    )
    t2 = store.append_message(
        sid,
        "tool",
        f"aws_access_key_id = {AWS}\nregion = eu-west-1",
        called_by=a1.id,
        name="read",
        input={"path": "~/.aws/credentials"},
        reads=[f"https://u:{PG_PASSWORD}@files.example/creds"],
        node_id="t2",
        created_at=1003.0,
    )
    store.commit_turn(sid)
    store.append_message(sid, "user", "Thanks, now run the tests.", node_id="u2", created_at=1010.0)
    store.append_message(
        sid,
        "assistant",
        "All 12 tests pass.",
        node_id="a2",
        created_at=1011.0,
        metadata={"headers": {"Authorization": f"Bearer {OPENAI}"}},
    )
    store.commit_turn(sid)
    # a retry of the first turn: another reply to u1, on its own branch
    store.append_message(
        sid, "assistant", f"Retry: the key {AWS} is in the file.", parent_id=u1.id, node_id="r1", created_at=1020.0
    )
    store.commit_turn(sid)
    store.switch_head(sid, "a2")
    ids.update(u1=u1.id, a1=a1.id, t1=t1.id, t2=t2.id)

    store.append_message("clean", "user", "How do I list files?", node_id="c1", created_at=2000.0)
    store.append_message("clean", "assistant", "Use ls -la.", node_id="c2", created_at=2001.0)
    store.commit_turn("clean")

    store.append_message("other", "user", f"token={OTHER}", node_id="o1", created_at=3000.0)
    store.append_message("other", "assistant", "Noted.", node_id="o2", created_at=3001.0)
    store.commit_turn("other")
    store.flush()
    return ids


def tree_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` (relative path -> digest)."""
    out: dict[str, str] = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out
