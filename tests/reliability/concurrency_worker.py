"""One process of the concurrency suite: `python concurrency_worker.py HOME KIND ARGS...`.

append SID TURNS   TURNS turns (user, assistant, commit) into session SID
import FILE        `run_import` of a generic JSONL transcript
distill RUNS       RUNS distillation runs, one after the other
read STOPFILE      the app's data layer (StoreData: listing, then each session's replay) in a
                   loop until STOPFILE exists; prints the longest single read and the count
read-once          one pass of the app's data layer (listing, each session's first paint,
                   replay and branch choices) that never waits for a lock (lock_timeout 0: a
                   lock held elsewhere is an error); prints what it read as JSON
Prints "done ..." at the end; any exception is a traceback on stderr and a non-zero exit.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from opmem_tui.backend.home import Home


def main() -> None:
    home, kind, args = Home(Path(sys.argv[1])), sys.argv[2], sys.argv[3:]
    if kind == "append":
        sid, turns = args[0], int(args[1])
        for n in range(turns):
            user = home.sessions.append_message(sid, "user", f"{sid} turn {n} from {args[2] if len(args) > 2 else ''}")
            home.sessions.append_message(sid, "assistant", f"reply {n}", parent_id=user.id)
            home.sessions.commit_turn(sid)
        print("done", flush=True)
    elif kind == "import":
        from opmem_tui.backend.importers import run_import

        report = run_import(home, "jsonl", [Path(args[0])], bind=False)
        print(f"done {report.nodes} {len(report.warnings)}", flush=True)
    elif kind == "distill":
        from opmem_tui.backend.distill.pipeline import RunOptions, run

        for _ in range(int(args[0])):
            run(home, RunOptions(project=False, lock_timeout=600.0))
        print("done", flush=True)
    elif kind == "read":
        from opmem_tui.data import StoreData

        data = StoreData(home)
        stop = Path(args[0])
        longest, reads = 0.0, 0
        while True:  # one whole pass at least, however late this process starts
            started = time.perf_counter()
            view = data.listing(rescan=True)
            longest, reads = max(longest, time.perf_counter() - started), reads + 1
            for meta in view.listing.sessions:
                started = time.perf_counter()
                data.replay(meta.id, None, view.projects)
                longest, reads = max(longest, time.perf_counter() - started), reads + 1
            if stop.exists():
                break
        print(f"done {longest:.4f} {reads}", flush=True)

    elif kind == "read-once":
        print(json.dumps(read_once(home)), flush=True)


def read_once(home: Home) -> dict:
    from opmem_tui.data import StoreData

    home.sessions.lock_timeout = 0.0  # a read that takes a session's lock fails at once
    data = StoreData(home)
    view = data.listing(rescan=True)
    seen = {}
    for meta in view.listing.sessions:
        first = data.last_turn(meta.id, view.projects)
        replay = data.replay(meta.id, None, view.projects)
        choices = data.branch_choices(meta.id, len(replay.turns), [], None)
        seen[meta.id] = {
            "title": replay.meta.title,
            "turns": [[n.content for n in turn.nodes] for turn in replay.turns],
            "last": [n.content for n in first.turns[-1].nodes] if first.turns else [],
            "total": first.total,
            "branches": len(choices),
        }
    return seen


if __name__ == "__main__":
    main()
