"""`opmem sync` at scale: N sessions between two machines and a bare remote on the filesystem.

  python bench/sync_bench.py [--quick] [--sessions N]

Sessions have 2 turns each, one in 50 holds a secret (so the redacted rewrite does real work);
the first 50 are written through SessionStore, the rest by hand in the same shape (node files,
meta.json, turn commits with the contract's tree and message, one pack), so 10,000 build in
seconds; `opmem verify` is clean on the result. Figures, each beside a baseline of the same run:
  first push    machine A's first sync (rewrite, outbox, one push) beside `git push --mirror`
                of the same objects and refs (A's outbox) to another empty bare repository
  first pull    machine B's first sync (fetch, N sessions made, memory merged, index updated)
                beside `git clone --mirror` of the remote
  idle          a second sync with nothing new (target <= 2 s) beside `git ls-remote` alone
  one turn      a sync after one new turn in one session (target <= 1 s) beside `git ls-remote`,
                and beside a bare `git push` of one ref to the same remote (git's own floor at
                this many refs: the remote reads every ref to advertise and to check connectivity)
  roll-up       the sync that finds more than 50 packs in the outbox (one per sync) and rolls them up,
                beside a sync after one new turn
Syncs run in-process (a fresh Home each, as a new `opmem sync` has); the CLI's start-up is not in them.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import fmt, parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.files import dump_compact_json, dump_json, write_atomic
from opmem_tui.backend.store.git_mirror import init_session_git
from opmem_tui.backend.store.packwriter import BLOB, COMMIT, TREE, object_id, write_pack
from opmem_tui.backend.sync import Sync
from opmem_tui.backend.sync.outbox import OUTBOX_PACKS_AT_MOST

T0 = 1_780_000_000.0
SECRET = "ghp_" + "Z8xq4Lm2Np7Rs1Tv9Wy3Ab5Cd6Ef0Gh2Ij4K"


def machine(path: Path, machine_id: str, remote: Path) -> Home:
    home = Home(path, durable=False)
    home.ensure()
    write_atomic(path / "machine.json", dump_json({"id": machine_id, "name": machine_id, "created_at": T0}))
    home.config.set("sync.remote", str(remote))
    home.config.save()
    return home


REAL = 50  # sessions written through SessionStore; the rest are written the same way by hand (fast)


def _words(i: int, turn: int) -> str:
    words = f"turn {turn} of session {i}: fix module_{i % 97} and its tests"
    return words + (f" with GITHUB_TOKEN={SECRET}" if i % 50 == 0 and turn == 0 else "")


def build_real(home: Home, count: int) -> None:
    store = home.sessions
    for i in range(count):
        sid = f"s{i:05d}"
        parent = None
        for turn in range(2):
            kwargs = {} if parent is None else {"parent_id": parent}
            user = store.append_message(sid, "user", _words(i, turn), created_at=T0 + i + turn, **kwargs)
            reply = store.append_message(sid, "assistant", f"done {i}.{turn}", parent_id=user.id)
            store.commit_turn(sid, reply.id)
            parent = reply.id
    store.flush()


def build_by_hand(home: Home, start: int, count: int, template: Path) -> None:
    """Sessions as SessionStore writes them (node files, meta.json, one turn commit per turn with
    the tree and message shape of the contract, in one pack), without its per-write costs."""
    git_files = {p.relative_to(template): p.read_bytes() for p in template.rglob("*") if p.is_file()}
    git_dirs = [p.relative_to(template) for p in template.rglob("*") if p.is_dir()]
    for i in range(start, start + count):
        sid = f"s{i:05d}"
        root = home.sessions_dir / sid
        for sub in ("history", "context/commits", "workdir"):
            (root / sub).mkdir(parents=True)
        git_dir = root / ".git"
        for d in git_dirs:
            (git_dir / d).mkdir(parents=True, exist_ok=True)
        for name, data in git_files.items():
            if not str(name).startswith(("refs/", "objects/", "index", "logs")):
                (git_dir / name).write_bytes(data)
        objects: list[tuple[int, bytes]] = []
        history: list[tuple[bytes, bytes]] = []
        parent_node = None
        parent_commit = None
        seq = 0
        for turn in range(2):
            entries = []
            for role, text in (("user", _words(i, turn)), ("assistant", f"done {i}.{turn}")):
                node_id = hashlib.sha1(f"{sid}-{seq}".encode()).hexdigest()[:12]
                node = {
                    "id": node_id,
                    "seq": seq,
                    "role": role,
                    "parent_id": parent_node,
                    "called_by": None,
                    "name": None,
                    "content": text,
                    "input": None,
                    "reads": [],
                    "created_at": T0 + i + turn,
                    "metadata": {},
                }
                data = dump_compact_json(node)
                name = f"{seq:06d}-{role[0]}-{node_id}.json"
                (root / "history" / name).write_bytes(data)
                history.append((name.encode(), object_id(BLOB, data)))
                objects.append((BLOB, data))
                entries.append(text)
                parent_node = node_id
                seq += 1
            meta = {
                "id": sid,
                "title": _words(i, 0)[:60],
                "title_source": "excerpt",
                "agent_id": "",
                "project_id": "",
                "source": "opmem",
                "source_ref": None,
                "created_at": T0 + i,
                "updated_at": T0 + i + turn + 1,
                "head_id": parent_node,
                "turns": turn + 1,
                "preview": _words(i, 0),
            }
            meta_raw = dump_json(meta)
            objects.append((BLOB, meta_raw))
            hist_raw = b"".join(b"100644 " + n + b"\0" + o for n, o in sorted(history))
            objects.append((TREE, hist_raw))
            root_raw = (
                b"40000 history\0" + object_id(TREE, hist_raw) + b"100644 meta.json\0" + object_id(BLOB, meta_raw)
            )
            objects.append((TREE, root_raw))
            when = int(T0 + i + turn)
            body = f"tree {object_id(TREE, root_raw).hex()}\n" + (f"parent {parent_commit}\n" if parent_commit else "")
            body += f"author opmem <opmem@localhost> {when} +0000\ncommitter opmem <opmem@localhost> {when} +0000\n\n"
            body += f"turn {turn + 1}: {entries[0][:60]}\n\nassistant: {entries[1][:80]}\n\n[meta: turn took 1.0s, 0 tools]\n\n"
            body += f"Opmem-Turn: {turn + 1}\nOpmem-Head: {parent_node}\n"
            objects.append((COMMIT, body.encode()))
            parent_commit = object_id(COMMIT, body.encode()).hex()
        (root / "meta.json").write_bytes(meta_raw)
        write_pack(git_dir / "objects" / "pack", objects, durable=False)
        (git_dir / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (git_dir / "refs" / "heads" / "main").write_text(parent_commit + "\n")
        if i % 2000 == 0:
            print(f"  built {i:,} sessions", flush=True)


def build(home: Home, count: int) -> None:
    build_real(home, min(REAL, count))
    if count > REAL:
        template = home.path / ".template"
        init_session_git(template)
        build_by_hand(home, REAL, count - REAL, template / ".git")
        shutil.rmtree(template)


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
        outbox = f"--git-dir={a.path / 'sync' / 'outbox.git'}"

        def push_one() -> None:  # a ref whose objects the remote has: no objects sent, every ref read
            git(outbox, "push", "-q", "--no-verify", str(remote), "refs/opmem/meta/laptop:refs/bench/floor")
            git(f"--git-dir={remote}", "update-ref", "-d", "refs/bench/floor")

        floor = min(timed(push_one) for _ in range(3))
        report("sync after one new turn", after, floor, "git push of one ref", "<= 1 s", after <= 1.0)
        pull_turn = timed(lambda: Sync(Home(b.path)).run())
        report("the other machine's sync pulling it", pull_turn, ls, "git ls-remote", "-", True)

        # one pack per sync: the sync that finds more than OUTBOX_PACKS_AT_MOST rolls them up
        packs_dir = a.path / "sync" / "outbox.git" / "objects" / "pack"
        rolled = 0.0
        for _ in range(OUTBOX_PACKS_AT_MOST + 2):
            before = len(list(packs_dir.glob("*.pack")))
            one_turn()
            took = timed(lambda: Sync(Home(a.path)).run())
            if len(list(packs_dir.glob("*.pack"))) < before:
                rolled = took
                break
        left = len(list(packs_dir.glob("*.pack")))
        report(
            f"the sync rolling the outbox's packs up (to {left})",
            rolled,
            after,
            "a sync after one new turn",
            "-",
            rolled > 0,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
