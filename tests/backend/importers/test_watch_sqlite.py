"""`opmem watch` on a live SQLite source: another process writes OpenCode's database in WAL mode,
turn by turn, while the watch reads it. The writer takes its locks with no busy wait at all
(timeout 0), so any lock of ours would fail it with SQLITE_BUSY; it never does, and every
finished turn reaches the store."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from opmem_tui.backend.importers.hooks import IngestHooks
from opmem_tui.backend.importers.watch import Watcher

from .test_opencode import SCHEMA

TURNS = 12
WRITER = r"""
import json, sqlite3, sys, time
db, turns = sys.argv[1], int(sys.argv[2])
schema = open(sys.argv[3]).read()
conn = sqlite3.connect(db, timeout=0, isolation_level=None)  # no busy wait: a lock held by a reader fails at once
conn.execute("PRAGMA journal_mode=WAL")
conn.executescript(schema)
busy = []

def txn(statements):
    try:
        conn.execute("BEGIN IMMEDIATE")
        for sql, args in statements:
            conn.execute(sql, args)
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:  # "database is locked": a reader took a lock it must not
        busy.append(str(exc))
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

msg = "INSERT INTO message VALUES (?, 'ses_live', ?, ?, ?)"
part = "INSERT OR REPLACE INTO part VALUES (?, ?, 'ses_live', ?, ?, ?)"
txn([("INSERT INTO session VALUES ('ses_live', 'p', NULL, 's', '/w', 'Live', '1.2.4', NULL, NULL, 1, 1)", ())])
for n in range(turns):
    t = 1767000000000 + n * 10000
    u, a = f"msg_{n:03d}u", f"msg_{n:03d}a"
    txn([(msg, (u, t, t, json.dumps({"role": "user", "time": {"created": t}}))),
         (part, (f"prt_{n:03d}u", u, t, t, json.dumps({"type": "text", "text": f"prompt {n}"})))])
    running = {"type": "tool", "callID": f"c{n}", "tool": "bash", "state": {"status": "running", "input": {"command": "make"}}}
    txn([(msg, (a, t + 1, t + 1, json.dumps({"role": "assistant", "time": {"created": t + 1}, "modelID": "m"}))),
         (part, (f"prt_{n:03d}a1", a, t + 1, t + 1, json.dumps(running)))])
    time.sleep(0.03)
    done = dict(running, state={"status": "completed", "input": {"command": "make"}, "output": f"built {n}"})
    txn([("UPDATE message SET data = ? WHERE id = ?",
          (json.dumps({"role": "assistant", "time": {"created": t + 1, "completed": t + 2}, "modelID": "m",
                       "finish": "stop"}), a)),
         (part, (f"prt_{n:03d}a1", a, t + 1, t + 2, json.dumps(done))),
         (part, (f"prt_{n:03d}a2", a, t + 2, t + 2, json.dumps({"type": "text", "text": f"reply {n}"})))])
    time.sleep(0.03)
print(json.dumps(busy), flush=True)  # written; the agent keeps its database open (no checkpoint yet)
sys.stdin.readline()
conn.close()
sys.exit(3 if busy else 0)
"""


def test_a_live_writer_never_sees_busy_and_every_finished_turn_is_stored(home, tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    folder.mkdir()
    db = folder / "opencode.db"
    sid = "opencode-ses_live"
    complete = threading.Event()

    def after_ingest(sessions: frozenset[str]) -> None:
        if sid in sessions or home.sessions.exists(sid):
            nodes = home.sessions.get_nodes(sid)
            replies = [n for n in nodes if n.role == "assistant" and n.content.startswith("reply ")]
            if len(replies) == TURNS:
                complete.set()

    watcher = Watcher(
        home,
        ["opencode"],
        [folder],
        bind=False,
        autocommit=False,
        idle_seconds=0.2,
        hooks=IngestHooks(after_ingest=(after_ingest,)),
    )
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), kwargs={"ready": ready.set}, daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        schema = tmp_path / "schema.sql"
        schema.write_text(SCHEMA)
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(TURNS), str(schema)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            said = writer.stdout.readline()
            assert said.strip() == "[]", f"the writer saw SQLITE_BUSY: {said} {writer.stderr.read()}"
            # every turn is in the WAL only (the writer holds the database open): the watch follows the -wal
            assert complete.wait(60), "not every finished turn reached the store"
        finally:
            writer.communicate("close\n", timeout=60)
        assert writer.returncode == 0, writer.stderr
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    nodes = home.sessions.get_nodes(sid)
    assert [n.content for n in nodes if n.role == "user"] == [f"prompt {n}" for n in range(TURNS)]
    tools = [n for n in nodes if n.role == "tool"]
    assert [t.content for t in tools] == [f"built {n}" for n in range(TURNS)]  # never a half-done "running" one
    assert len(home.sessions.get_turns(sid)) == TURNS


def test_a_reply_left_unfinished_is_read_once_the_database_is_quiet(home, tmp_path: Path) -> None:
    """A database's reads hold back a reply still being written; if the agent never finishes it
    (killed mid-reply), the watch reads the database once more when it has been quiet for
    LIVE_SECONDS and stores what is there."""
    import os
    import sqlite3

    from opmem_tui.backend.importers import base

    from .test_opencode import make_db, reply, user_turn

    db = make_db(tmp_path / "opencode" / "opencode.db")
    conn = sqlite3.connect(db)
    u = user_turn(conn, "ses_main", 7, 1767000050000, "one more")
    reply(conn, "ses_main", 7, 1767000051000, u, text="Half", completed=False)
    conn.commit()
    watcher = Watcher(home, ["opencode"], [db.parent], bind=False, autocommit=False)
    watcher.discover()
    watcher.poll(db)
    nodes = home.sessions.get_nodes("opencode-ses_main")
    assert nodes[-1].content == "one more"  # the reply is held back while the database is live
    assert watcher.tick().nodes == 0  # not quiet long enough yet
    for path in (db, Path(f"{db}-wal")):
        if path.exists():
            os.utime(path, (1_600_000_000, 1_600_000_000))
    later = watcher.changed_at[db.resolve()] + base.LIVE_SECONDS + 1
    report = watcher.tick(now=later)
    conn.close()
    assert report.nodes == 1
    assert home.sessions.get_nodes("opencode-ses_main")[-1].content == "Half"
    assert watcher.tick(now=later + 1).nodes == 0  # read once, not on every tick


def test_the_watch_follows_a_task_folder_and_a_copilot_session(home, tmp_path: Path) -> None:
    """Folder sources (a Cline task: a change of a file in it re-reads the folder) and whole-read
    JSONL sources (Copilot) grow in the store as the agent writes."""
    import json

    from .agent_helpers import OLD, age
    from .test_cline import cline_task, history, write

    folder = cline_task(tmp_path / "vscode")
    events = tmp_path / "copilot" / "session-state" / "cop-1" / "events.jsonl"
    events.parent.mkdir(parents=True)
    lines = [
        {"type": "session.start", "id": "e1", "data": {"sessionId": "cop-1"}},
        {"type": "user.message", "id": "e2", "data": {"content": "first"}},
        {"type": "assistant.message", "id": "e3", "data": {"content": "one"}},
    ]
    events.write_text("".join(json.dumps(x) + "\n" for x in lines))
    age(tmp_path)
    roots = [tmp_path / "vscode", tmp_path / "copilot" / "session-state"]
    watcher = Watcher(home, ["cline", "copilot"], roots, bind=False, autocommit=False)
    first = watcher.catch_up()
    assert (first.new_sessions, first.turns) == (2, 2)
    write(folder / "api_conversation_history.json", history(2))
    lines += [
        {"type": "user.message", "id": "e4", "data": {"content": "second"}},
        {"type": "assistant.message", "id": "e5", "data": {"content": "two"}},
    ]
    events.write_text("".join(json.dumps(x) + "\n" for x in lines))
    age(tmp_path, when=OLD + 60)
    grown = watcher.poll(folder / "api_conversation_history.json")
    assert (grown.nodes, grown.turns) == (4, 1)
    grown = watcher.poll(events)
    assert (grown.nodes, grown.turns) == (2, 1)
    assert watcher.poll(events).nodes == 0


def test_a_busy_state_vscdb_is_read_at_most_every_few_seconds(home, tmp_path: Path) -> None:
    """Cursor rewrites state.vscdb on every UI change and each read copies it: the watch reads a
    changed one at once, then waits REREAD_SECONDS before the next read (tick reads it when due)."""
    from opmem_tui.backend.importers.cursor import REREAD_SECONDS

    from .test_cursor import bubbles, global_db

    db = global_db(tmp_path / "User" / "globalStorage" / "state.vscdb", {"c-1": bubbles(1)})
    watcher = Watcher(home, ["cursor"], [tmp_path / "User"], bind=False, autocommit=False)
    watcher.discover()
    assert watcher.poll(db).nodes == 3
    start = watcher.read_at[db.resolve()]
    global_db(db, {"c-1": bubbles(2)})
    assert watcher.poll(db).nodes == 0  # changed again at once: it waits
    assert watcher.tick(now=start + REREAD_SECONDS / 2).nodes == 0
    assert watcher.tick(now=start + REREAD_SECONDS + 0.1).nodes == 3  # due: read now
    assert watcher.tick(now=start + 2 * REREAD_SECONDS).nodes == 0  # and only once
