"""Import speed of the SQLite sources (OpenCode, Crush, Goose, Cursor) beside reading the same rows.

Each figure is printed beside a baseline measured in the same run:
- parse: the importer reading the whole database into sessions (read-only open, one snapshot,
  JSON decode, node building) vs `sqlite3` reading the same rows and `json.loads`-ing their JSON;
- import: a first `run_import` into an empty home (node files + one git commit per turn) vs the
  same baseline, and a second import of the unchanged database (skipped by its WAL stamp).

    python bench/agent_db_import.py [--quick]
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import best_of, parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.base import ImportReport
from tests.backend.importers.agent_helpers import age
from tests.backend.importers.test_crush import SCHEMA as CRUSH_SCHEMA
from tests.backend.importers.test_crush import turn as crush_turn
from tests.backend.importers.test_cursor import global_db
from tests.backend.importers.test_opencode import SCHEMA as OPENCODE_SCHEMA
from tests.backend.importers.test_opencode import add_session, reply, user_turn


def opencode_db(path: Path, sessions: int, turns: int) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(OPENCODE_SCHEMA)
    for s in range(sessions):
        sid = f"ses_{s:04d}"
        add_session(conn, sid)
        for n in range(turns):
            u = user_turn(conn, sid, s * 10_000 + n, 1767000000000 + n * 1000, f"prompt {n} " * 20)
            reply(conn, sid, s * 10_000 + n, 1767000000500 + n * 1000, u, text=f"reply {n} " * 40, tool="bash")
    conn.commit()
    conn.close()
    return path


def opencode_floor(path: Path) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for table in ("session", "message", "part"):
        for row in conn.execute(f"SELECT * FROM {table}"):
            if table != "session":
                json.loads(row[-1])
    conn.close()


def crush_db(path: Path, sessions: int, turns: int) -> Path:
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(CRUSH_SCHEMA)
    for s in range(sessions):
        conn.execute(
            "INSERT INTO sessions (id, title, updated_at, created_at) VALUES (?, 't', 1, 1767000000)", (f"s{s}",)
        )
        for n in range(turns):
            crush_turn(conn, f"s{s}", n, 1767000000 + n * 10)
    conn.commit()
    conn.close()
    return path


def crush_floor(path: Path) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    list(conn.execute("SELECT * FROM sessions"))
    for row in conn.execute("SELECT parts FROM messages"):
        json.loads(row[0])
    conn.close()


def goose_db(path: Path, sessions: int, turns: int) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, working_dir TEXT NOT NULL);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, content_json TEXT,"
        " created_timestamp INTEGER);"
    )
    for s in range(sessions):
        conn.execute("INSERT INTO sessions VALUES (?, 'g', '/w')", (f"g{s}",))
        for n in range(turns):
            rows = [
                ("user", [{"type": "text", "text": f"prompt {n} " * 20}]),
                (
                    "assistant",
                    [
                        {"type": "text", "text": f"reply {n} " * 40},
                        {
                            "type": "toolRequest",
                            "id": f"c{n}",
                            "toolCall": {
                                "status": "success",
                                "value": {"name": "shell", "arguments": {"command": "ls"}},
                            },
                        },
                    ],
                ),
                (
                    "user",
                    [
                        {
                            "type": "toolResponse",
                            "id": f"c{n}",
                            "toolResult": {
                                "status": "success",
                                "value": {"content": [{"type": "text", "text": "a.txt\n" * 20}]},
                            },
                        }
                    ],
                ),
            ]
            for role, content in rows:
                conn.execute(
                    "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES (?, ?, ?, ?)",
                    (f"g{s}", role, json.dumps(content), 1767000000 + n),
                )
    conn.commit()
    conn.close()
    return path


def goose_floor(path: Path) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    list(conn.execute("SELECT * FROM sessions"))
    for row in conn.execute("SELECT content_json FROM messages"):
        json.loads(row[0])
    conn.close()


def cursor_db(path: Path, sessions: int, turns: int) -> Path:
    composers = {}
    for s in range(sessions):
        bubbles = []
        for n in range(turns):
            bubbles.append({"bubbleId": f"u{n}", "type": 1, "text": f"prompt {n} " * 20})
            bubbles.append({"bubbleId": f"a{n}", "type": 2, "text": f"reply {n} " * 40})
        composers[f"c-{s}"] = bubbles
    return global_db(path, composers)


def cursor_floor(path: Path) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for (value,) in conn.execute("SELECT value FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'"):
        json.loads(value)
    for (value,) in conn.execute(
        "SELECT value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
    ):
        json.loads(value)
    conn.close()


CASES = {
    "opencode": (lambda d, s, t: opencode_db(d / "opencode.db", s, t), opencode_floor),
    "crush": (lambda d, s, t: crush_db(d / ".crush" / "crush.db", s, t), crush_floor),
    "goose": (lambda d, s, t: goose_db(d / "sessions.db", s, t), goose_floor),
    "cursor": (lambda d, s, t: cursor_db(d / "state.vscdb", s, t), cursor_floor),
}


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    sessions, turns = (4, 25) if args.quick else (20, 50)
    repeat = 3 if args.quick else 5
    for name, (make, floor_fn) in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "agent"
            folder.mkdir()
            db = make(folder, sessions, turns)
            age(folder)
            importer = SOURCES[name]
            floor = best_of(lambda: floor_fn(db), repeat)  # noqa: B023
            ours = best_of(lambda: importer.parse_file(db, ImportReport(), final=True), repeat)  # noqa: B023
            label = f"{name} parse {sessions} sessions x {turns} turns"
            report(label, ours, floor, "sqlite3 rows + json.loads", "<= 10x", ours <= 10 * floor)
            home = Home(Path(tmp) / "home")
            start = time.perf_counter()
            done = run_import(home, name, [db], bind=False)
            first = time.perf_counter() - start
            report(
                f"{name} first import ({done.nodes:,} nodes, {done.turns:,} turns)",
                first,
                floor,
                "sqlite3 rows + json.loads",
                "(info)",
                True,
            )
            start = time.perf_counter()
            again = run_import(home, name, [db], bind=False)
            second = time.perf_counter() - start
            report(
                f"{name} re-import unchanged (skipped {again.skipped})",
                second,
                floor,
                "sqlite3 rows + json.loads",
                "<= 2x",
                second <= 2 * floor,
            )


if __name__ == "__main__":
    main()
