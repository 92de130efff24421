"""Sessions for the export tests, written through the real SessionStore."""

from __future__ import annotations

from opmem_tui.backend.store.sessions import SessionStore

T0 = 1_700_000_000.0
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a GitHub token's shape: redacted in every export
HOSTILE = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</textarea><b>bold?</b>",
    "</script><script>alert(2)</script>",
    "<!-- open comment",
    "\u2028line separator\u2029",
    "</details><details><summary>injected</summary>",
)


def hostile_session(store: SessionStore, sid: str = "hostile") -> str:
    """Three turns with markup, a secret, an edit, thinking and a long output; a retry branch off turn 2."""
    store.append_message(sid, "user", f"Look at this: {HOSTILE[0]} and {HOSTILE[1]}", created_at=T0)
    reply = store.append_message(
        sid,
        "assistant",
        f"It says {HOSTILE[2]} and {HOSTILE[3]}. My token is {SECRET}.",
        name="claude-test-4",
        metadata={"thinking": f"thinking about {HOSTILE[1]} quietly"},
        created_at=T0 + 1,
    )
    store.append_message(
        sid,
        "tool",
        f"output {HOSTILE[4]} {HOSTILE[5]} {HOSTILE[3]}",
        called_by=reply.id,
        name="Bash",
        input={"command": f"echo '{HOSTILE[0]}' GITHUB_TOKEN={SECRET}"},
        created_at=T0 + 2,
    )
    store.append_message(
        sid,
        "tool",
        "The file app.py has been updated.",
        called_by=reply.id,
        name="Edit",
        input={"file_path": "/work/app.py", "old_string": "x = 1\nkeep = True", "new_string": "x = 2\nkeep = True"},
        created_at=T0 + 3,
    )
    store.commit_turn(sid)
    second = store.append_message(sid, "user", "Now run the long job", created_at=T0 + 60)
    reply2 = store.append_message(sid, "assistant", "Running it.", name="claude-test-4", created_at=T0 + 61)
    long_output = "".join(f"log line {i:06d} {'x' * 40}\n" for i in range(2000))
    store.append_message(
        sid, "tool", long_output, called_by=reply2.id, name="Bash", input={"command": "make all"}, created_at=T0 + 62
    )
    store.commit_turn(sid)
    store.append_message(sid, "user", f"Third: summarise {HOSTILE[6]}\x1b[31m\x9b2J", created_at=T0 + 120)
    store.append_message(sid, "assistant", "Done: x is 2 now.", name="claude-test-4", created_at=T0 + 121)
    store.commit_turn(sid)
    # a retry of turn 2's reply: a second branch that forks inside turn 2
    store.append_message(sid, "assistant", "A different take on the job.", parent_id=second.id, created_at=T0 + 200)
    store.commit_turn(sid)
    # back to the first line as the current head
    main_head = next(b for b in store.branches(sid) if b.name == "main").head_id
    store.switch_head(sid, main_head)
    return sid
