"""`opmem sync` at scale: N sessions between two machines and a bare remote on the filesystem.

  python bench/sync_bench.py [--quick] [--sessions N]

Sessions are real (SessionStore: node files and turn commits, 2 turns each, one in 50 holding a
secret, so the redacted rewrite does real work). Figures, each beside a baseline of the same run:
  first push    machine A's first sync (rewrite, outbox, one push) beside `git push --mirror`
                of the same objects and refs (A's outbox) to another empty bare repository
  first pull    machine B's first sync (fetch, N sessions made, memory merged, index updated)
                beside `git clone --mirror` of the remote
  idle          a second sync with nothing new (target <= 2 s) beside `git ls-remote` alone
  one turn      a sync after one new turn in one session (target <= 1 s) beside `git ls-remote`
Syncs run in-process (a fresh Home each, as a new `opmem sync` has); the CLI's start-up is not in them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import fmt, parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.files import dump_json, write_atomic
from opmem_tui.backend.sync import Sync

T0 = 1_780_000_000.0
SECRET = "ghp_" + "Z8xq4Lm2Np7Rs1Tv9Wy3Ab5Cd6Ef0Gh2Ij4K"


def machine(path: Path, machine_id: str, remote: Path) -> Home:
    home = Home(path, durable=False)
    home.ensure()
    write_atomic(path / "machine.json", dump_json({"id": machine_id, "name": machine_id, "created_at": T0}))
    home.config.set("sync.remote", str(remote))
    home.config.save()
    return home


def build(home: Home, count: int) -> None:
    store = home.sessions
    for i in range(count):
        sid = f"s{i:05d}"
        parent = None
        for turn in range(2):
            words = f"turn {turn} of session {i}: fix module_{i % 97} and its tests"
            if i % 50 == 0 and turn == 0:
                words += f" with GITHUB_TOKEN={SECRET}"
            kwargs = {} if parent is None else {"parent_id": parent}
            user = store.append_message(sid, "user", words, created_at=T0 + i + turn, **kwargs)
            reply = store.append_message(sid, "assistant", f"done {i}.{turn}", parent_id=user.id)
            store.commit_turn(sid, reply.id)
            parent = reply.id
        if i and i % 1000 == 0:
            print(f"  built {i:,} sessions", flush=True)
    store.flush()


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=None)
    args = p.parse_args()
    count = args.sessions or (500 if args.quick else 10_000)
    root = Path(tempfile.mkdtemp(prefix="opmem-sync-bench-"))
    try:
        remote = root / "remote.git"
        git("init", "-q", "--bare", str(remote))
        a = machine(root / "a", "laptop", remote)
        b = machine(root / "b", "desk", remote)
        print(f"building {count:,} sessions ...", flush=True)
        start = time.perf_counter()
        build(a, count)
        print(f"built in {fmt(time.perf_counter() - start)}", flush=True)

        first = timed(lambda: Sync(Home(a.path)).run())
        mirror = root / "mirror.git"
        git("init", "-q", "--bare", str(mirror))
        base = timed(lambda: git(f"--git-dir={a.path / 'sync' / 'outbox.git'}", "push", "-q", "--mirror", str(mirror)))
        report(
            f"first sync, push of {count:,} sessions", first, base, "git push --mirror of the same objects", "-", True
        )

        pull = timed(lambda: Sync(Home(b.path)).run())
        clone = timed(lambda: git("clone", "-q", "--mirror", str(remote), str(root / "clone.git")))
        pulled = len(Home(b.path).sessions.list_sessions().sessions)
        report(f"first sync, pull of {pulled:,} sessions", pull, clone, "git clone --mirror of the remote", "-", True)
        Sync(Home(a.path)).run()  # A takes B's meta and memory: both are settled from here

        ls = min(timed(lambda: git("ls-remote", str(remote))) for _ in range(3))
        idle = min(timed(lambda: Sync(Home(a.path)).run()) for _ in range(3))
        report("idle sync (nothing new)", idle, ls, "git ls-remote", "<= 2 s", idle <= 2.0)

        def one_turn() -> None:
            home = Home(a.path, durable=False)
            user = home.sessions.append_message("s00007", "user", f"one more turn at {time.time()}")
            reply = home.sessions.append_message("s00007", "assistant", "ok", parent_id=user.id)
            home.sessions.commit_turn("s00007", reply.id)
            home.sessions.flush()

        turns = []
        for _ in range(3):
            one_turn()
            turns.append(timed(lambda: Sync(Home(a.path)).run()))
        after = min(turns)
        report("sync after one new turn", after, ls, "git ls-remote", "<= 1 s", after <= 1.0)
        pull_turn = timed(lambda: Sync(Home(b.path)).run())
        report("the other machine's sync pulling it", pull_turn, ls, "git ls-remote", "-", True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
